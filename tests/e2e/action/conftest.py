"""Fixtures for running the action's image end to end: the image (built once per session,
cached while its context is unchanged), the GitHub stand-in with a repository seeded with
the bar-chart example, and a runner for one event (tests/e2e/action/harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.action.harness import MAINTAINER, OUTSIDER, REPLAY, SALES, SPEC, RunAction
from tests.fakes.github_server import DEFAULT_REPO, IDENTITIES, FakeGitHub, seeded


@pytest.fixture(scope="session")
def action_image(docker_client: Any, sandbox_image: str) -> str:
    from tests.e2e.action_image import build_action_image

    return build_action_image(docker_client).tag


@pytest.fixture
def github(tmp_path: Path) -> Iterator[FakeGitHub]:
    server = seeded(tmp_path / "github")
    server.add_user(MAINTAINER)
    server.add_user(OUTSIDER)
    server.add_collaborator(DEFAULT_REPO, MAINTAINER, "maintain")
    server.commit_files(DEFAULT_REPO, "main", {
        "examples/data/sales.csv": SALES,
        "replays/issue-1.jsonl": REPLAY,
        "replays/bar_chart.jsonl": REPLAY,
        ".selfcorrect/tasks/bar_chart.yml": SPEC,
    }, message="add the task and its replay")
    try:
        yield server
    finally:
        server.stop()
    assert server.errors == [], "the GitHub stand-in crashed:\n" + "\n".join(server.errors)


# GITHUB_TOKEN, and a GitHub App's installation token whose login the action finds itself
# (tests/unit/action runs the bot-login input's variant too, without Docker).
E2E_IDENTITIES = [identity for identity in IDENTITIES
                  if identity.name in ("github-token", "app-token")]


@pytest.fixture(params=E2E_IDENTITIES, ids=[identity.name for identity in E2E_IDENTITIES])
def act(action_image: str, github: FakeGitHub, tmp_path: Path,
        request: pytest.FixtureRequest) -> RunAction:
    return RunAction(action_image, github, tmp_path / "runs", request.param)
