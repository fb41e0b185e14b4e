from tests.fakes.github_server import fake_github  # noqa: F401
