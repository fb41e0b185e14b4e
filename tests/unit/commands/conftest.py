"""`selfcorrect action` runs in this process against the GitHub stand-in, as the action's
own tests run it (tests/unit/action/conftest.py)."""

from tests.unit.action.conftest import act, fake_github, github, make_forge, waits  # noqa: F401
