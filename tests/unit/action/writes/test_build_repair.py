"""What a finished repair commits: from an issue, a pull request changing the rewritten
files; from `/selfcorrect fix`, a commit on the pull request's branch on top of the head
the baseline was taken at, and no new pull request; a failed fix, nothing."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.action.task import Task
from selfcorrect_action.action.writes.build import build_plan
from selfcorrect_action.action.writes.plan import WritePlan
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import Attempt, Progress, RunState, Status, Strategy
from selfcorrect_action.repair.records import Baseline, RepairRecord
from selfcorrect_action.spec import load_spec_text

HEAD = "c" * 40
FIXED = "def mean(v):\n    return sum(v) / len(v)\n"


def _task(tmp_path: Path, *, fix: bool = False) -> Task:
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "core.py").write_text("x\n")
    loaded = load_spec_text("prompt: fix mean\nkind: repair\nfiles: [pkg/*.py]\n", "issue #3",
                            root=tmp_path, name="issue-3")
    if fix:
        return Task(loaded, origin="pull 5", label="pull request #5", title="mean",
                    branch="feature/mean", comment_on=5, pull_number=5, expected_head=HEAD)
    return Task(loaded, origin="issue 3", label="issue #3", title="mean is wrong",
                branch="selfcorrect/issue-3", comment_on=3, closes=3)


def _state(task: Task, status: Status) -> RunState:
    spec = task.loaded.spec
    attempt = Attempt(index=1, strategy=Strategy.INITIAL, tier="cheap", model="m", code="",
                      code_sha="a", files={"pkg/core.py": FIXED}, diff="--- a/pkg/core.py\n",
                      progress=Progress(layer=3 if status is Status.PASSED else 2))
    attempt = attempt.model_copy(update={"execution": None})
    baseline = Baseline(passing=["t::a"], failing=["t::mean"])
    repair = RepairRecord(allowed=["pkg/core.py"], repository_files=3, repository_bytes=9,
                          listed_by="walk", baseline=baseline, targets=["t::mean"])
    return RunState(run_id="9e9e9e", started_at="t", spec_source="issue #3", spec=spec,
                    output_name="", contract=spec.contract, models=ModelTiers(),
                    attempts=[attempt], status=status, stop_reason="why", repair=repair)


def _plan(task: Task, state: RunState, *, draft: bool = False) -> WritePlan:
    return build_plan(task, state, repository="o/r", base_branch="main", audit_md="# a",
                      run_json="{}", summary_md="**selfcorrect: passed**",
                      server_url="https://github.example", comment_body="body",
                      comment_marker="<!-- selfcorrect:report run=1.1 -->",
                      draft_on_failure=draft)


def test_a_passing_repair_from_an_issue_opens_a_pull_request_changing_its_files(
        tmp_path: Path) -> None:
    plan = _plan(_task(tmp_path), _state(_task(tmp_path), Status.PASSED))
    assert plan.commit is not None and plan.pull_request is not None
    assert (plan.commit.files[0].path, plan.commit.files[0].content) == ("pkg/core.py", FIXED)
    assert plan.commit.allowed_files == ["pkg/*.py"] and plan.commit.expected_head is None
    body = plan.pull_request.body
    assert "The change to `pkg/core.py` passed: this repository's own tests ran on it" in body
    assert "Closes #3" in body


def test_a_passing_fix_is_a_commit_on_the_pull_requests_branch_and_no_new_pull_request(
        tmp_path: Path) -> None:
    task = _task(tmp_path, fix=True)
    plan = _plan(task, _state(task, Status.PASSED))
    assert plan.pull_request is None and plan.commit is not None
    assert (plan.commit.branch, plan.commit.expected_head, plan.commit.pull_number) == (
        "feature/mean", HEAD, 5)
    assert plan.check_run is not None and plan.check_run.pull_number == 5
    assert "this repository's own tests (`python -m pytest -q`) ran on this commit's files" \
        in plan.check_run.output.summary
    assert "Baseline: 1 passed, 1 failed" in plan.check_run.output.summary


def test_a_failed_fix_pushes_nothing_onto_the_pull_request(tmp_path: Path) -> None:
    task = _task(tmp_path, fix=True)
    plan = _plan(task, _state(task, Status.EXHAUSTED), draft=True)
    assert plan.commit is None and plan.pull_request is None
    assert plan.check_run is not None and plan.check_run.output.conclusion == "failure"
