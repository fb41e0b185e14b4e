"""The GitHub stand-in and forges on it, as the GitHub-side tests use them."""

from tests.fakes.github_server import fake_github  # noqa: F401  # the fixture
from tests.unit.github.conftest import (  # noqa: F401  # fixtures
    forge,
    make_forge,
    waits,
)
