"""Helpers for running the action's image end to end: the seeded repository's contents, a
checkout as actions/checkout leaves it, inputs as the runner passes them, and RunAction,
which runs the image for one event."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.e2e.action.runner import ActionRun, run_action
from tests.fakes.github_server import DEFAULT_REPO, IDENTITIES, FakeGitHub, Identity

ROOT = Path(__file__).resolve().parents[3]
SPEC = (ROOT / "examples/tasks/bar_chart.yml").read_text()
REPLAY = (ROOT / "examples/replays/bar_chart.jsonl").read_text()
SALES = (ROOT / "examples/data/sales.csv").read_text()
MAINTAINER, OUTSIDER = "maria", "visitor"
BODY = f"Please make the sales chart.\n\n```yaml\n{SPEC}```\n"


def checkout(github: FakeGitHub, into: Path, ref: str = "main") -> Path:
    """What actions/checkout leaves with `persist-credentials: false`, as every example
    workflow checks out: the repository at `ref`, in the workspace, and no token in its git
    config (the action writes through the API, never with git)."""
    subprocess.run(["git", "clone", "-q", "--branch", ref, str(github.repo_path(DEFAULT_REPO)),
                    str(into)], check=True)
    return into


def runner_inputs(given: dict[str, str], *, token: str,
                  action_yml: Path = ROOT / "action.yml") -> dict[str, str]:
    """Every input of action.yml (or of a release's, rewritten by scripts/release.py), as
    the runner passes them: defaults filled in (with `${{ github.token }}` evaluated), then
    what the workflow's `with:` gave."""
    spec = YAML(typ="safe").load(action_yml.read_text())
    values = {name: str(entry.get("default", "")) for name, entry in spec["inputs"].items()}
    values["github-token"] = token
    return {**values, **given}


class RunAction:
    """Runs the action's image for one event, in a fresh checkout of the stand-in's repo."""

    def __init__(self, image: str, github: FakeGitHub, scratch: Path,
                 identity: Identity = IDENTITIES[0]) -> None:
        self.image, self.github, self.scratch = image, github, scratch
        self.identity = identity
        self.runs = 0
        self.last_workspace = scratch

    def __call__(self, event_name: str, event: dict[str, Any], *, token: str | None = None,
                 ref: str = "main", env: dict[str, str] | None = None,
                 copy_in: dict[str, Path] | None = None, **given: str) -> ActionRun:
        """`token`: the identity's own (write access) unless another is given."""
        self.runs += 1
        token = token or self.identity.token
        if self.identity.bot_login_input:
            given.setdefault("bot_login", self.identity.bot_login_input)
        scratch = self.scratch / f"run-{self.runs}"
        workspace = checkout(self.github, scratch / "workspace", ref)
        for name, source in (copy_in or {}).items():
            shutil.copytree(source, workspace / name)
        self.last_workspace = workspace
        inputs = runner_inputs({k.replace("_", "-"): v for k, v in given.items()},
                               token=token)
        return run_action(self.image, workspace=workspace, scratch=scratch,
                          event_name=event_name, event=event, inputs=inputs,
                          repository=DEFAULT_REPO, api_url=self.github.api_url, env=env)


def labeled(github: FakeGitHub, *, by: str = MAINTAINER, body: str = BODY) -> dict[str, Any]:
    """An issue (by an outsider) just labelled `selfcorrect` by `by`: its event payload."""
    number = github.add_issue(DEFAULT_REPO, "Sales chart", body, user=OUTSIDER,
                              labels=["selfcorrect"])
    return github.event("issues", DEFAULT_REPO, action="labeled", number=number,
                        label="selfcorrect", sender=by)
