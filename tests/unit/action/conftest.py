"""The GitHub stand-in and forges on it, as the GitHub-side tests use them."""

from tests.unit.github.conftest import (  # noqa: F401  # fixtures
    fake_github,
    forge,
    make_forge,
    waits,
)
