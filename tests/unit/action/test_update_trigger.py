"""The scheduled update through the action's entry point against the GitHub stand-in, where
no sandbox is needed: nothing to check, a dispatch from another branch refused, and a matrix's
saved plans merged into one pull request by mode publish (tests/integration/test_autoupdate.py
runs the update itself in the sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

from selfcorrect_action.action.writes.plan import (
    PlannedCheckRun,
    PlannedCommit,
    PlannedRun,
    WritePlan,
)
from selfcorrect_action.action.writes.update import merge_updates, update_pull_request
from selfcorrect_action.github.forge import CheckRunOutput, FileChange
from selfcorrect_action.github.naming import UPDATE_BRANCH, check_name
from tests.e2e.action.harness import MAINTAINER
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.conftest import Act

SCHEDULE = {"schedule": "23 5 * * 1", "workflow": ".github/workflows/update.yml"}


def test_a_repository_without_generated_scripts_has_nothing_to_update(
        act: Act, github: FakeGitHub) -> None:
    run = act("schedule", SCHEDULE)
    assert (run.code, run.outputs["status"]) == (0, "valid"), run.stdout
    assert "nothing to update" in run.summary and github.pulls(DEFAULT_REPO) == []


def test_an_update_dispatched_from_another_branch_is_refused(
        act: Act, github: FakeGitHub) -> None:
    github.add_branch(DEFAULT_REPO, "elsewhere", files={"README.md": "x\n"})
    run = act("workflow_dispatch", github.event("workflow_dispatch", DEFAULT_REPO),
              ref="elsewhere", update="check")
    assert (run.code, run.outputs["status"]) == (2, "refused"), run.stdout
    assert "not the head of main" in run.stdout


def _shard(spec: str, *, run_id: str, passed: bool) -> WritePlan:
    """What one job of the matrix saves: its spec regenerated (passed) or only listed."""
    script = f"scripts/{Path(spec).stem}.py"
    run = (PlannedRun(task=spec, run_id=run_id, status="passed", script=script, attempts=2,
                      tokens=900) if passed else
           PlannedRun(task=spec, run_id="", status="fails", note="KeyError: 'amount'"))
    issue = PlannedRun(task="issue #4", run_id="", status="fails", note="it broke")
    files = [FileChange(path=script, content="print(2)\n"),
             FileChange(path=f".selfcorrect/lock/{Path(spec).stem}.json", content="{}\n"),
             FileChange(path=f".selfcorrect/runs/{run_id}/AUDIT.md", content="#\n")] \
        if passed else []

    def check(task: str, conclusion: str) -> PlannedCheckRun:
        return PlannedCheckRun(branch=UPDATE_BRANCH, output=CheckRunOutput(
            name=check_name(task), conclusion=conclusion,  # type: ignore[arg-type]
            title=conclusion, summary="s", external_id=task))

    runs = [run, issue]
    return WritePlan(
        repository=DEFAULT_REPO, task="update of the generated scripts", status="failed",
        commit=PlannedCommit(branch=UPDATE_BRANCH, base_branch="main", message="m",
                             files=files),
        pull_request=update_pull_request(runs, run_url=""), runs=runs,
        check_runs=[check(spec, "success" if passed else "failure"),
                    check("issue #4", "failure")])


def test_the_plans_of_a_matrix_merge_into_one_commit_and_one_pull_request() -> None:
    first = _shard(".selfcorrect/tasks/a.yml", run_id="aa11", passed=True)
    second = _shard(".selfcorrect/tasks/b.yml", run_id="", passed=False)
    other = WritePlan(repository=DEFAULT_REPO, task="#3 x", status="none")

    (kept, merged) = merge_updates([other, first, second], run_url="https://run")

    assert kept == other
    assert [run.task for run in merged.runs] == [
        ".selfcorrect/tasks/a.yml", "issue #4", ".selfcorrect/tasks/b.yml"]  # issue #4 once
    assert merged.commit is not None
    assert [f.path for f in merged.commit.files] == [f.path for f in first.commit.files]  # type: ignore[union-attr]
    assert sorted(c.output.name for c in merged.check_runs) == sorted(
        check_name(task) for task in (".selfcorrect/tasks/a.yml", "issue #4",
                                      ".selfcorrect/tasks/b.yml"))
    assert merged.pull_request is not None
    assert "1 generated script regenerated" in merged.pull_request.title
    body = merged.pull_request.body
    assert "KeyError" in body and "/selfcorrect regenerate .selfcorrect/tasks/b.yml" in body
    assert "issue #4" in body and "regenerate issue" not in body
    assert merge_updates([first], run_url="") == [first]


def test_mode_publish_applies_a_matrix_as_one_pull_request(
        act: Act, github: FakeGitHub, tmp_path: Path) -> None:
    github.commit_files(DEFAULT_REPO, "main", {
        ".selfcorrect/tasks/a.yml": json.dumps({"prompt": "A.", "output": "scripts/a.py"})},
        message="a spec", author=MAINTAINER)
    plans = tmp_path / "plans"
    plans.mkdir()
    for name, plan in (("one.json", _shard(".selfcorrect/tasks/a.yml", run_id="aa11",
                                           passed=True)),
                       ("two.json", _shard(".selfcorrect/tasks/b.yml", run_id="",
                                           passed=False))):
        (plans / name).write_text(plan.model_dump_json())

    run = act("schedule", SCHEDULE, mode="publish", copy_plans_from=plans)

    assert run.code == 0, run.stdout
    assert "2 scheduled-update plans merged" in run.stdout
    (pull,) = github.pulls(DEFAULT_REPO)
    assert pull.head.endswith(f":{UPDATE_BRANCH}")
    assert github.read_file(DEFAULT_REPO, UPDATE_BRANCH, "scripts/a.py") == b"print(2)\n"
    assert len(github.check_runs(DEFAULT_REPO)) == 3
