"""A batch (plan version 4, issue 36 item 4): `/selfcorrect regenerate`'s one commit for
several runs, each with its own check run. The plan's rules (what the commit may carry,
which check may be green), then the plan applied through the real adapter against the
GitHub stand-in: one commit on top of the pull request's head, one check run per spec on
it; nothing pushed when the head moved."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from selfcorrect_action.action.writes.apply import apply_plan
from selfcorrect_action.action.writes.plan import (
    AUDIT_SLOT,
    PR_LINK_SLOT,
    PlannedCheckRun,
    PlannedComment,
    PlannedCommit,
    PlannedRun,
    WritePlan,
)
from selfcorrect_action.action.writes.targets import Targets
from selfcorrect_action.github.forge import CheckRunOutput, FileChange
from selfcorrect_action.github.naming import TREE_TRAILER, check_name
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub

BRANCH = "feature/sales"
SALES, CHART = ".selfcorrect/tasks/sales.yml", ".selfcorrect/tasks/chart.yml"
MARKER = "<!-- selfcorrect:regenerate -->"


def check(task: str, conclusion: str = "success", number: int = 7) -> PlannedCheckRun:
    return PlannedCheckRun(branch=BRANCH, pull_number=number, output=CheckRunOutput(
        name=f"selfcorrect / {task}", conclusion=conclusion,  # type: ignore[arg-type]
        title=conclusion, summary=f"s\n\n{AUDIT_SLOT}\n",
        external_id=f"selfcorrect run {task}"))


def batch(head: str = "a" * 40, number: int = 7, *, files: list[FileChange] | None = None,
          runs: list[PlannedRun] | None = None, checks: list[PlannedCheckRun] | None = None,
          version: int = 4, comment: bool = False) -> WritePlan:
    runs = runs if runs is not None else [
        PlannedRun(task=SALES, run_id="aa11", status="passed", script="scripts/sales.py"),
        PlannedRun(task=CHART, run_id="bb22", status="failed")]
    files = files if files is not None else [
        FileChange(path="scripts/sales.py", content="print('total')\n"),
        FileChange(path=".selfcorrect/lock/sales.json", content="{}\n"),
        FileChange(path=".selfcorrect/runs/aa11/AUDIT.md", content="# audit\n")]
    return WritePlan(
        version=version, repository=DEFAULT_REPO, task=f"regenerate on pull request #{number}",
        status="failed", runs=runs,
        check_runs=checks if checks is not None else [check(SALES, number=number),
                                                      check(CHART, "failure", number)],
        commit=PlannedCommit(branch=BRANCH, base_branch="main", message="selfcorrect: regen",
                             files=files, expected_head=head, pull_number=number),
        comment=PlannedComment(number=number, marker=MARKER,
                               body=f"{MARKER}\nregenerated\n\n{PR_LINK_SLOT}\n")
        if comment else None)


def test_a_batch_round_trips() -> None:
    plan = batch()
    assert WritePlan.model_validate_json(plan.model_dump_json()) == plan


@pytest.mark.parametrize(("change", "says"), [
    ({"files": [FileChange(path="scripts/other.py", content="x")]},
     "a batch commits its runs' scripts, records and reports, not ['scripts/other.py']"),
    ({"files": [FileChange(path=".selfcorrect/lock/chart.json", content="{}")]},
     "not ['.selfcorrect/lock/chart.json']"),  # the record of a run that failed
    ({"files": [FileChange(path=".selfcorrect/runs/cc33/AUDIT.md", content="#")]},
     "not ['.selfcorrect/runs/cc33/AUDIT.md']"),  # another run's reports
    ({"checks": [check(CHART)]}, "a run that ended 'failed' cannot have a green check run"),
    ({"checks": [check("README.md", "failure")]}, "is for no run of the batch"),
    ({"checks": [check(SALES), check(SALES)]}, "one check run per task"),
    ({"version": 3}, "a batch (version 4) lists its runs"),
    ({"runs": [PlannedRun(task=SALES, run_id="aa11", status="passed"),
               PlannedRun(task=SALES, run_id="bb22", status="passed")],
      "files": [FileChange(path=".selfcorrect/runs/aa11/AUDIT.md", content="#")]},
     "lists each task and each run once"),
])
def test_a_batch_carries_only_its_runs_files_and_verdicts(change: dict[str, object],
                                                          says: str) -> None:
    """A compromised plan job cannot commit other files, or turn a failed run's check (a
    required one) green."""
    with pytest.raises(ValidationError, match=re.escape(says)):
        batch(**change)  # type: ignore[arg-type]


def test_a_failed_runs_script_is_never_named_for_the_commit() -> None:
    with pytest.raises(ValidationError, match=re.escape("a batch commits the .py script of a "
                                                        "run that passed")):
        PlannedRun(task=CHART, run_id="bb22", status="failed", script="scripts/chart.py")


def test_a_spec_only_re_verified_commits_nothing_and_is_never_green() -> None:
    """The scheduled update without regeneration: an empty commit, a red check per spec."""
    checked = [PlannedRun(task=SALES, run_id="", status="fails")]
    plan = batch(files=[], runs=checked, checks=[check(SALES, "failure")])
    assert plan.commit is not None and plan.commit.files == []
    with pytest.raises(ValidationError, match="a spec that was not run has no passing script"):
        PlannedRun(task=SALES, run_id="", status="passed")
    with pytest.raises(ValidationError, match="cannot have a green check run"):
        batch(files=[], runs=checked, checks=[check(SALES)])
    with pytest.raises(ValidationError, match="changes at least one file"):
        WritePlan(repository=DEFAULT_REPO, task="t", status="passed", run_id="aa11",
                  commit=PlannedCommit(branch="selfcorrect/task-x", base_branch="main",
                                       message="m"))


def test_a_commit_writes_each_file_once() -> None:
    """Two specs with one output: the tree would keep one script, both checks green."""
    twice = [FileChange(path="scripts/sales.py", content="a"),
             FileChange(path="scripts/sales.py", content="b")]
    with pytest.raises(ValidationError, match="a commit writes each file once"):
        batch(files=twice)


def test_a_spec_only_re_verified_that_passes_may_be_green() -> None:
    """/selfcorrect regenerate's commit carries the check of the pull request's other
    specs."""
    runs = [PlannedRun(task=SALES, run_id="aa11", status="passed", script="scripts/sales.py"),
            PlannedRun(task=CHART, run_id="", status="passes")]
    assert batch(runs=runs, checks=[check(SALES), check(CHART)]).status == "failed"


def test_a_spec_with_a_long_path_keeps_its_check_run() -> None:
    """Check run names are cut to GitHub's 200 characters; the batch matches them cut."""
    long = ".selfcorrect/tasks/" + "deep/" * 40 + "sales.yml"
    output = CheckRunOutput(name=check_name(long), conclusion="failure", title="t",
                            summary="s", external_id="x")
    plan = batch(runs=[PlannedRun(task=long, run_id="cc33", status="failed")],
                 files=[FileChange(path=".selfcorrect/runs/cc33/AUDIT.md", content="#")],
                 checks=[PlannedCheckRun(branch=BRANCH, pull_number=7, output=output)])
    assert len(plan.check_runs[0].output.name) == 200


def test_publishing_holds_a_batch_to_its_events_branch() -> None:
    assert Targets(frozenset({7}), frozenset({BRANCH})).problem_with(batch()) is None
    other = Targets(frozenset({7}), frozenset({"main"}))
    assert "it commits to feature/sales" in (other.problem_with(batch()) or "")


def pull_request(github: FakeGitHub) -> tuple[int, str]:
    github.add_branch(DEFAULT_REPO, BRANCH, files={"scripts/sales.py": "print('old')\n"})
    number = github.add_pull(DEFAULT_REPO, BRANCH, title="sales")
    return number, github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]


def test_one_commit_on_the_pull_requests_head_with_a_check_run_per_spec(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number, head = pull_request(fake_github)

    applied = apply_plan(batch(head, number, comment=True), forge)

    assert applied.held_back is None and applied.commit_sha is not None
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == applied.commit_sha
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{applied.commit_sha}^").strip() == head
    assert fake_github.read_file(DEFAULT_REPO, BRANCH, "scripts/sales.py") == b"print('total')\n"
    assert fake_github.read_file(DEFAULT_REPO, BRANCH, ".selfcorrect/lock/sales.json") == b"{}\n"
    assert TREE_TRAILER in fake_github.git(DEFAULT_REPO, "log", "-1", "--format=%B", BRANCH)
    assert len(fake_github.pulls(DEFAULT_REPO)) == 1  # no new pull request
    checks = {c.name: (c.head_sha, c.conclusion) for c in fake_github.check_runs(DEFAULT_REPO)}
    assert checks == {f"selfcorrect / {SALES}": (applied.commit_sha, "success"),
                      f"selfcorrect / {CHART}": (applied.commit_sha, "failure")}
    assert set(applied.checks) == {SALES, CHART}
    sales = next(c for c in fake_github.check_runs(DEFAULT_REPO) if c.name.endswith(SALES))
    assert ".selfcorrect/runs/aa11/AUDIT.md" in (sales.summary or "")
    (comment,) = fake_github.comments(DEFAULT_REPO, number)
    assert PR_LINK_SLOT not in comment.body and "regenerated" in comment.body


def test_a_head_that_moved_gets_nothing_pushed_and_no_check(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number, head = pull_request(fake_github)
    pushed = fake_github.commit_files(DEFAULT_REPO, BRANCH, {"scripts/sales.py": "x = 3\n"},
                                      message="the author pushed meanwhile")

    applied = apply_plan(batch(head, number, comment=True), forge)

    assert applied.commit_sha is None and applied.held_back is not None
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == pushed
    assert "comment /selfcorrect regenerate again" in applied.held_back
    # The head it finds is not what the runs checked: nothing is marked on it.
    assert fake_github.check_runs(DEFAULT_REPO) == []
    assert all("the pull request's head moved" in check.note
               for check in applied.checks.values())
    (comment,) = fake_github.comments(DEFAULT_REPO, number)
    assert "**Not committed:** the pull request's head moved" in comment.body
