"""`selfcorrect action` runs in this process against the GitHub stand-in, as the action's
own tests run it (tests/unit/action/conftest.py)."""

from tests.fakes.github_server import fake_github  # noqa: F401  # fixtures
from tests.unit.action.conftest import act, github, identity  # noqa: F401
from tests.unit.github.conftest import make_forge, waits  # noqa: F401
