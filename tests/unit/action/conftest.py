"""The GitHub stand-in and forges on it, as the GitHub-side tests use them; and `act`, which
runs `selfcorrect action` in this process for one event, the way the runner starts the
container (tests/e2e/action runs the real image; this is its Docker-free twin: everything
up to the point a task would start the sandbox)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.commands.action_cmd import run_action
from tests.e2e.action.harness import MAINTAINER, OUTSIDER, checkout, runner_inputs
from tests.e2e.action.runner import read_outputs
from tests.fakes.github_server import (  # noqa: F401  # fake_github: the fixture
    DEFAULT_REPO,
    IDENTITIES,
    FakeGitHub,
    Identity,
    fake_github,
)
from tests.unit.github.conftest import (  # noqa: F401  # fixtures
    forge,
    make_forge,
    waits,
)


@dataclass
class InProcessRun:
    code: int
    stdout: str
    outputs: dict[str, str]
    summary: str
    workspace: Path
    environ: dict[str, str]


class Act:
    """Runs the action for one event in a fresh checkout of the stand-in's repository."""

    def __init__(self, github: FakeGitHub, scratch: Path,
                 capsys: pytest.CaptureFixture[str], identity: Identity) -> None:
        self.github, self.scratch, self.capsys = github, scratch, capsys
        self.identity = identity
        self.runs = 0

    def __call__(self, event_name: str, event: dict[str, Any], *, token: str | None = None,
                 ref: str = "main", copy_plans_from: Path | None = None,
                 **given: str) -> InProcessRun:
        """`token`: the identity's own (write access) unless another is given."""
        self.runs += 1
        token = token or self.identity.token
        if self.identity.bot_login_input:
            given.setdefault("bot_login", self.identity.bot_login_input)
        scratch = self.scratch / f"run-{self.runs}"
        workspace = checkout(self.github, scratch / "workspace", ref)
        if copy_plans_from is not None:  # the publish job's downloaded plan artifact
            target = workspace / given.get("plan_dir", "selfcorrect-plan")
            target.mkdir()
            for plan in copy_plans_from.glob("*.json"):
                (target / plan.name).write_bytes(plan.read_bytes())
        (scratch / "event.json").write_text(json.dumps(event))
        (scratch / "output").write_text("")
        (scratch / "summary").write_text("")
        inputs = runner_inputs({k.replace("_", "-"): v for k, v in given.items()}, token=token)
        environ = {
            "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": str(scratch / "event.json"),
            "GITHUB_WORKSPACE": str(workspace), "GITHUB_REPOSITORY": DEFAULT_REPO,
            "GITHUB_API_URL": self.github.api_url, "GITHUB_SERVER_URL": "https://gh.example",
            "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_OUTPUT": str(scratch / "output"),
            "GITHUB_STEP_SUMMARY": str(scratch / "summary"),
            **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
        }
        self.capsys.readouterr()
        code = run_action(environ)
        return InProcessRun(code, self.capsys.readouterr().out,
                            read_outputs((scratch / "output").read_text()),
                            (scratch / "summary").read_text(), workspace, environ)


@pytest.fixture
def github(fake_github: FakeGitHub) -> FakeGitHub:  # noqa: F811  # the fixture imported above
    """The stand-in with a maintainer (maria) and an outsider (visitor)."""
    fake_github.add_user(MAINTAINER)
    fake_github.add_user(OUTSIDER)
    fake_github.add_collaborator(DEFAULT_REPO, MAINTAINER, "maintain")
    return fake_github


@pytest.fixture(params=IDENTITIES, ids=[identity.name for identity in IDENTITIES])
def identity(request: pytest.FixtureRequest) -> Identity:
    """Every scenario runs as GITHUB_TOKEN and as a GitHub App's installation token (its
    login found by asking GitHub, and given by the bot-login input)."""
    chosen: Identity = request.param
    return chosen


@pytest.fixture
def act(github: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        identity: Identity) -> Iterator[Act]:
    yield Act(github, tmp_path / "runs", capsys, identity)
