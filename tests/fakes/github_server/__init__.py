"""A local stand-in for GitHub's REST API, for tests that drive the real PyGithub client.

It is a real HTTP server on 127.0.0.1 (a thread of the test process; a Docker container run
with ``--network host`` reaches it too), and every repository is a real bare git repository,
so the shas it answers are real object ids and a test can clone, push and ``git show``::

    with FakeGitHub(tmp_path) as gh_server:
        gh_server.add_repo("octo-org/hello")           # one commit: README.md on main
        gh_server.add_token("ghs_x", BOT_LOGIN)          # the Actions bot, write access
        number = gh_server.add_issue("octo-org/hello", "Make a chart")
        gh = Github(auth=Auth.Token("ghs_x"), base_url=gh_server.api_url, retry=None,
                    seconds_between_requests=None, seconds_between_writes=None)
        gh.get_repo("octo-org/hello").get_issue(number).create_comment("on it")
        assert gh_server.comments("octo-org/hello", number)[0].user == BOT_LOGIN

Faults: ``fail(method, path, status, after_apply=...)``, ``fail_rate_limit``,
``fail_secondary_rate_limit``, ``fail_server_error``, ``delay``, ``hang_up``. Observation:
``requests`` / ``requests_to(method, path)``, and the state accessors (``comments``,
``labels``, ``pulls``, ``check_runs``, ``refs``, ``read_file``, ``git``);
``event(name, repo, ...)`` builds a
webhook payload for $GITHUB_EVENT_PATH from the same state. ``errors`` lists the fake's own
crashes. The ``fake_github`` fixture gives a started server with :data:`DEFAULT_REPO` and the
tokens :data:`WRITE_TOKEN` / :data:`READ_TOKEN` (the Actions bot) and :data:`APP_TOKEN` (an
installed GitHub App, writing as :data:`APP_LOGIN`); re-export it from a conftest.py with
``from tests.fakes.github_server import fake_github  # noqa: F401``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .faults import Fault, RecordedRequest
from .model import BOT_ID, BOT_LOGIN, CheckRun, Comment, Issue, Label, Token, User
from .routing import ApiError
from .server import FakeGitHub, PullSnapshot

DEFAULT_REPO = "octo-org/hello-world"
WRITE_TOKEN = "ghs_fake_write_0123456789abcdef"  # the Actions bot, as on a push or same-repo PR
READ_TOKEN = "ghs_fake_read_0123456789abcdef"  # the Actions bot, as on a fork's PR
APP_SLUG = "selfcorrect-test-app"  # a GitHub App installed on DEFAULT_REPO
APP_LOGIN = f"{APP_SLUG}[bot]"
APP_TOKEN = "ghs_fake_app_0123456789abcdef"  # its installation token, write access
APP_READ_TOKEN = "ghs_fake_app_read_0123456789abcdef"  # one with read-only permissions


@dataclass(frozen=True)
class Identity:
    """Who the action's github-token is, as a workflow hands it over: the token, a
    read-only one of the same account (a fork's pull request, a split workflow's run job),
    the login GitHub shows on what it writes, and the action's bot-login input."""

    name: str
    token: str
    read_token: str
    login: str
    bot_login_input: str = ""


# GITHUB_TOKEN; a GitHub App's installation token, its login found by asking GitHub; the same
# with the bot-login input the README's workflow passes.
IDENTITIES = (
    Identity("github-token", WRITE_TOKEN, READ_TOKEN, BOT_LOGIN),
    Identity("app-token", APP_TOKEN, APP_READ_TOKEN, APP_LOGIN),
    Identity("app-token-with-bot-login", APP_TOKEN, APP_READ_TOKEN, APP_LOGIN, APP_LOGIN),
)

__all__ = [
    "APP_LOGIN",
    "APP_READ_TOKEN",
    "APP_SLUG",
    "APP_TOKEN",
    "BOT_ID",
    "BOT_LOGIN",
    "DEFAULT_REPO",
    "IDENTITIES",
    "READ_TOKEN",
    "WRITE_TOKEN",
    "ApiError",
    "CheckRun",
    "Comment",
    "FakeGitHub",
    "Fault",
    "Identity",
    "Issue",
    "Label",
    "PullSnapshot",
    "RecordedRequest",
    "Token",
    "User",
    "fake_github",
    "seeded",
]


def seeded(root: Path) -> FakeGitHub:
    """A started server with DEFAULT_REPO (README.md on main) and both tokens."""
    server = FakeGitHub(root)
    server.start()
    server.add_repo(DEFAULT_REPO)
    server.add_token(WRITE_TOKEN, BOT_LOGIN)
    server.add_token(READ_TOKEN, BOT_LOGIN, access="read")
    server.add_app(APP_SLUG, APP_TOKEN)
    server.add_app(APP_SLUG, APP_READ_TOKEN, access="read")
    return server


@pytest.fixture
def fake_github(tmp_path: Path) -> Iterator[FakeGitHub]:
    server = seeded(tmp_path / "github")
    try:
        yield server
    finally:
        server.stop()
    assert server.errors == [], "the fake GitHub crashed:\n" + "\n".join(server.errors)
