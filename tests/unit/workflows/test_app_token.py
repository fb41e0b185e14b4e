"""Every shipped job whose action step writes to GitHub can write as a GitHub App (issue 16,
item 1): GitHub starts no workflow for GITHUB_TOKEN's own writes, so without an app the
pull requests the action opens, and the fixes it pushes, get no CI. The step passes the
app's token and its `<slug>[bot]` login (how the action knows its own comments), falling
back to GITHUB_TOKEN. A job that only validates or plans, and a workflow started by
pull_request (and push) alone (the action validates and re-verifies there: its comment and
checks need no CI, and a fork's run gets no app secrets anyway), write with the job's
token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.shipped_workflows import PLACEHOLDER_ACTION, label, workflow_files

APP_ACTION = "actions/create-github-app-token@"
READ_ONLY_MODES = {"plan", "validate"}


def app_token_problems(text: str, where: str) -> list[str]:
    workflow = YAML(typ="safe").load(text)
    # YAML 1.1 reads the key `on` as True.
    triggers = workflow.get("on", workflow.get(True)) or {}
    if set(triggers if not isinstance(triggers, str) else [triggers]) <= {"pull_request",
                                                                          "push"}:
        return []
    problems = []
    for name, job in (workflow.get("jobs") or {}).items():
        steps: list[dict[str, Any]] = job.get("steps") or []
        writes = "write" in str(job.get("permissions", {}))
        for index, step in enumerate(steps):
            given = step.get("with") or {}
            if (not str(step.get("uses", "")).startswith(PLACEHOLDER_ACTION) or not writes
                    or str(given.get("mode", "")) in READ_ONLY_MODES):
                continue
            minted = [earlier.get("id") for earlier in steps[:index]
                      if str(earlier.get("uses", "")).startswith(APP_ACTION)]
            if not minted:
                problems.append(f"{where}: job {name} writes with the action but mints no "
                                "app token before it")
                continue
            step_id = minted[-1]
            token, login = str(given.get("github-token", "")), str(given.get("bot-login", ""))
            if f"steps.{step_id}.outputs.token" not in token or "github.token" not in token:
                problems.append(f"{where}: job {name}: github-token is not the app's token "
                                "with GITHUB_TOKEN as the fallback")
            if f"steps.{step_id}.outputs.app-slug" not in login:
                problems.append(f"{where}: job {name}: bot-login is not the app's login")
    return problems


def _writing_workflows() -> list[Path]:
    return [path for path in workflow_files()
            if PLACEHOLDER_ACTION in path.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", _writing_workflows(), ids=lambda path: label(path))
def test_a_job_that_writes_with_the_action_can_write_as_an_app(path: Path) -> None:
    assert app_token_problems(path.read_text(encoding="utf-8"), label(path)) == []


JOB = """on: {trigger}
jobs:
  a:
    runs-on: ubuntu-latest
    permissions: {{contents: write}}
    steps:
{mint}      - uses: OWNER/selfcorrect@v0.1.0
        with:
{given}"""
MINT = ("      - id: app\n        uses: actions/create-github-app-token@abc  # v3\n")
BOTH = ("          github-token: ${{ steps.app.outputs.token || github.token }}\n"
        "          bot-login: ${{ steps.app.outputs.app-slug && 'x' || '' }}\n")


@pytest.mark.parametrize(("trigger", "mint", "given", "problems"), [
    ("workflow_dispatch", MINT, BOTH, 0),
    ("workflow_dispatch", "", BOTH, 1),
    ("workflow_dispatch", MINT, "          model: m\n", 2),
    ("workflow_dispatch", MINT, "          github-token: ${{ steps.app.outputs.token }}\n"
                                "          bot-login: ${{ steps.app.outputs.app-slug }}\n", 1),
    ("workflow_dispatch", "", "          mode: validate\n", 0),
    ("{pull_request: {}}", "", "          model: m\n", 0),
    ("[pull_request, push]", "", "          model: m\n", 0),
    ("[pull_request, issues]", "", "          model: m\n", 1),
])
def test_the_check_tells_a_job_that_cannot_write_as_an_app(trigger: str, mint: str, given: str,
                                                           problems: int) -> None:
    text = JOB.format(trigger=trigger, mint=mint, given=given)
    assert len(app_token_problems(text, "w.yml")) == problems
