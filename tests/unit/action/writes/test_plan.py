"""Write plans: what they may write, whoever made them."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import ValidationError

from selfcorrect_action.action.writes.plan import (
    PLAN_VERSION,
    PlannedCommit,
    WritePlan,
    path_problem,
    run_files,
    status_labels,
)
from selfcorrect_action.github.forge import FileChange


def commit(branch: str = "selfcorrect/issue-1", path: str = "scripts/a.py") -> PlannedCommit:
    return PlannedCommit(branch=branch, base_branch="main", message="m",
                         files=[FileChange(path=path, content="x")])


@pytest.mark.parametrize("path", [".github/workflows/ci.yml", ".GitHub/x", ".git/config",
                                  "/etc/passwd", "a/../../b", "a\\b"])
def test_a_plan_never_writes_workflows_git_or_outside(path: str) -> None:
    assert path_problem(path)
    with pytest.raises(ValidationError):
        commit(path=path)


@pytest.mark.parametrize("branch", ["main", "feature/x", "selfcorrect/../main", "selfcorrect/"])
def test_a_plan_only_writes_its_own_branches(branch: str) -> None:
    with pytest.raises(ValidationError, match="only writes branches under selfcorrect/"):
        commit(branch=branch)


def test_a_plan_round_trips_through_json() -> None:
    plan = WritePlan(repository="o/r", task="issue #1", status="passed", commit=commit(),
                     labels=status_labels(1, passed=True), run_id="abc123")
    assert WritePlan.model_validate_json(plan.model_dump_json()) == plan
    assert plan.labels is not None and plan.labels.add == ["selfcorrect:passed"]
    assert "selfcorrect:running" in plan.labels.remove


def test_run_files_go_under_the_run_id() -> None:
    files = run_files("abc123", audit_md="# a", run_json="{}")
    assert [f.path for f in files] == [".selfcorrect/runs/abc123/AUDIT.md",
                                       ".selfcorrect/runs/abc123/run.json"]


def test_a_plan_writes_only_its_own_labels_comment_and_files() -> None:
    """A plan is data another job applies with write access: it must not carry more than a
    run may write, whoever wrote the file (issue 11: the split recipe)."""
    from selfcorrect_action.action.writes.plan import PlannedComment, PlannedLabels

    with pytest.raises(ValidationError, match="status labels"):
        PlannedLabels(number=1, add=["automerge"])
    for marker in ("", "<!-- x -->", "<!-- selfcorrect:"):
        with pytest.raises(ValidationError, match="markers"):
            PlannedComment(number=1, marker=marker, body="hi")
    extra = commit().model_copy(update={"files": [
        FileChange(path="scripts/a.py", content="x"),
        FileChange(path="src/app/__init__.py", content="x")]})
    with pytest.raises(ValidationError, match="one script"):
        WritePlan(repository="o/r", task="t", status="passed", run_id="abc123",
                  commit=extra)
    with pytest.raises(ValidationError):
        WritePlan(repository="o/r", task="t", status="passed", run_id="../x")


def _check(name: str = "selfcorrect / issue #1", conclusion: str = "failure",
           branch: str = "selfcorrect/issue-1", path: str = "spec.yml") -> dict[str, object]:
    return {"branch": branch, "output": {
        "name": name, "conclusion": conclusion, "title": "t", "summary": "s",
        "external_id": "selfcorrect run abc123",
        "annotations": [{"path": path, "start_line": 1, "end_line": 1, "message": "m"}]}}


def _planned(status: str = "exhausted", **check: str) -> dict[str, object]:
    return {"repository": "o/r", "task": "issue #1", "status": status, "run_id": "abc123",
            "commit": commit().model_dump(), "check_run": _check(**check)}


@pytest.mark.parametrize(("plan", "says"), [
    (_planned(name="ci / test", conclusion="success", status="passed"),
     "only writes check runs named selfcorrect / ..."),
    (_planned(conclusion="success"), "a run that ended 'exhausted' cannot have a green check"),
    (_planned(conclusion="neutral"), "Input should be 'success', 'failure' or 'cancelled'"),
    (_planned(branch="selfcorrect/issue-2"), "the check run is for selfcorrect/issue-2"),
    (_planned(branch="main"), "only writes branches under selfcorrect/"),
    (_planned(path=".github/workflows/x.yml"), "never writes under .github/"),
    ({**_planned(), "version": 1}, "a version 1 plan carries no check run"),
    ({**_planned(), "version": 5}, "plan version 5 is not one this selfcorrect reads"),
])
def test_a_plans_check_run_is_only_its_own_verdict_on_its_own_branch(
        plan: dict[str, object], says: str) -> None:
    """A compromised plan job must not turn a required check green, or mark a commit a
    run of another branch made (issue 16, item 8)."""
    with pytest.raises(ValidationError, match=re.escape(says)):
        WritePlan.model_validate(plan)


def test_a_version_1_plan_still_loads_and_a_check_run_round_trips() -> None:
    old = {"format": "selfcorrect.write-plan", "version": 1, "repository": "o/r",
           "task": "issue #1", "status": "passed", "commit": commit().model_dump()}
    assert WritePlan.model_validate_json(json.dumps(old)).check_run is None
    plan = WritePlan.model_validate(_planned(status="passed", conclusion="success"))
    assert plan.version == PLAN_VERSION == 4
    assert WritePlan.model_validate_json(plan.model_dump_json()) == plan


def repair_commit(paths: list[str], **extra: object) -> PlannedCommit:
    return PlannedCommit.model_validate({
        "branch": "selfcorrect/issue-1", "base_branch": "main", "message": "m",
        "files": [{"path": path, "content": "x"} for path in paths],
        "allowed_files": ["src/pkg/*.py"], **extra})


def test_a_repair_plan_commits_the_files_its_globs_allow_and_the_run_files() -> None:
    own = [".selfcorrect/runs/abc123/AUDIT.md", ".selfcorrect/runs/abc123/run.json"]
    plan = WritePlan(repository="o/r", task="t", status="passed", run_id="abc123",
                     commit=repair_commit(["src/pkg/a.py", "src/pkg/b.py", *own]))
    assert plan.commit is not None and len(plan.commit.files) == 4


@pytest.mark.parametrize(("path", "said"), [
    ("src/pkg/test_a.py", "frozen"), ("src/other.py", "not a file of the repository that"),
    ("src/pkg/conftest.py", "frozen"), ("src/pkg/data.json", "frozen"),
])
def test_a_repair_plan_commits_nothing_its_globs_do_not_allow(path: str, said: str) -> None:
    with pytest.raises(ValidationError, match=said):
        WritePlan(repository="o/r", task="t", status="passed", run_id="abc123",
                  commit=repair_commit(["src/pkg/a.py", path]))


def test_a_fix_commits_to_a_pull_requests_branch_only_on_top_of_its_expected_head() -> None:
    head = "a" * 40
    fix = repair_commit(["src/pkg/a.py"], branch="feature/x", expected_head=head,
                        pull_number=5)
    assert WritePlan(repository="o/r", task="t", status="passed", commit=fix).commit == fix
    with pytest.raises(ValidationError, match="names both the pull request and the head"):
        repair_commit(["src/pkg/a.py"], branch="feature/x", expected_head=head)
    with pytest.raises(ValidationError, match="only writes branches under selfcorrect/"):
        repair_commit(["src/pkg/a.py"], branch="feature/x")
    for branch in ("refs/heads/main", "a/../b", "x y", "-x"):
        with pytest.raises(ValidationError, match="not a branch name a plan may write to"):
            repair_commit(["src/pkg/a.py"], branch=branch, expected_head=head, pull_number=5)


def test_a_commit_on_a_pull_requests_branch_is_a_repairs() -> None:
    script = PlannedCommit(branch="feature/x", base_branch="main", message="m",
                           files=[FileChange(path="scripts/a.py", content="x")],
                           expected_head="b" * 40, pull_number=5)
    with pytest.raises(ValidationError, match="it names the globs"):
        WritePlan(repository="o/r", task="t", status="passed", commit=script)


def _with_record(path: str, *, task: str = ".selfcorrect/tasks/chart.yml",
                 status: str = "passed", version: int = 3) -> dict[str, object]:
    files = [FileChange(path="scripts/chart.py", content="x"),
             FileChange(path=path, content="{}"),
             *run_files("abc123", audit_md="# a", run_json="{}")]
    return {"repository": "o/r", "task": task, "status": status, "run_id": "abc123",
            "version": version, "commit": commit().model_copy(update={"files": files})}


@pytest.mark.parametrize(("task", "record"), [
    (".selfcorrect/tasks/chart.yml", ".selfcorrect/lock/chart.json"),
    (".selfcorrect/tasks/Sales Chart.yml", ".selfcorrect/lock/sales-chart.json"),
    ("issue #12", ".selfcorrect/lock/issue-12.json"),
])
def test_a_passing_scripts_plan_carries_its_one_record_at_its_lock_path(
        task: str, record: str) -> None:
    """Issue 36: the record goes where `selfcorrect check` looks for the task's."""
    plan = WritePlan.model_validate(_with_record(record, task=task))
    assert plan.commit is not None and record in [f.path for f in plan.commit.files]


@pytest.mark.parametrize(("plan", "says"), [
    (_with_record(".selfcorrect/lock/other.json"), "not ['.selfcorrect/lock/other.json']"),
    (_with_record(".selfcorrect/lock/sub/chart.json"), "one verification record"),
    (_with_record(".selfcorrect/lock/chart.json", status="exhausted"), "a script that passed"),
    (_with_record(".selfcorrect/lock/chart.json", version=2), "one verification record"),
    (_with_record(".selfcorrect/lock/x.py"), "one verification record"),
])
def test_a_plan_carries_no_other_record(plan: dict[str, object], says: str) -> None:
    """A plan is anyone's file once saved: it may not rewrite another spec's record (and
    so what `check` trusts), nor record a run that did not pass."""
    with pytest.raises(ValidationError, match=re.escape(says)):
        WritePlan.model_validate(plan)


def test_two_records_or_a_repairs_record_are_refused() -> None:
    plan = _with_record(".selfcorrect/lock/chart.json")
    planned = plan["commit"]
    assert isinstance(planned, PlannedCommit)
    twice = planned.model_copy(update={"files": [
        *planned.files, FileChange(path=".selfcorrect/lock/other.json", content="{}")]})
    with pytest.raises(ValidationError, match="one verification record"):
        WritePlan.model_validate({**plan, "commit": twice})
    repair = repair_commit(["src/pkg/a.py", ".selfcorrect/lock/chart.json"])
    with pytest.raises(ValidationError, match="one verification record"):
        WritePlan.model_validate({**plan, "commit": repair})
