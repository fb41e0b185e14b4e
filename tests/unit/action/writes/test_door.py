"""The one door of the action's writes (issue 35): `mode: run` and `mode: publish` write
through the forge on the GitHub stand-in, `mode: plan` writes nothing and records what a
later job may write, and the mode is read nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from selfcorrect_action.action.writes.door import (
    ApplyNow,
    RecordPlan,
    applies_saved_plans,
    open_door,
)
from selfcorrect_action.action.writes.plan import WritePlan
from selfcorrect_action.action.writes.store import load_plans
from selfcorrect_action.github.forge import CheckRunOutput
from selfcorrect_action.github.naming import (
    LABEL_FAILED,
    LABEL_RUNNING,
    VALIDATE_MARKER,
    report_marker,
)
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.github.conftest import MakeForge

ROOT = Path(__file__).parents[4]
MARKER = report_marker("run=7.1 task=selfcorrect/issue-1")
CHECK = CheckRunOutput(name="selfcorrect / validate", conclusion="success", title="ok",
                       summary="fine", external_id="selfcorrect validate 7.1")


def _doors(tmp_path: Path, make_forge: MakeForge) -> tuple[ApplyNow, RecordPlan]:
    warned: list[str] = []
    run = open_door("run", make_forge(), plan_dir=tmp_path / "plans", repository=DEFAULT_REPO,
                    warn=warned.append, say=lambda step, message: None)
    plan = open_door("plan", make_forge(), plan_dir=tmp_path / "plans",
                     repository=DEFAULT_REPO, warn=warned.append,
                     say=lambda step, message: None)
    assert isinstance(run, ApplyNow) and isinstance(plan, RecordPlan)
    return run, plan


def test_mode_run_writes_at_once(tmp_path: Path, make_forge: MakeForge,
                                 fake_github: FakeGitHub) -> None:
    issue = fake_github.add_issue(DEFAULT_REPO, title="t", body="b")
    run, _ = _doors(tmp_path, make_forge)

    run.comment(issue, MARKER, f"first {MARKER}", failed_label=True)
    run.comment(issue, MARKER, f"second {MARKER}")
    run.labels(issue, add=[LABEL_RUNNING])
    head = fake_github.refs(DEFAULT_REPO)["refs/heads/main"]
    check = run.check_run(head, CHECK)

    assert [c.body for c in fake_github.comments(DEFAULT_REPO, issue)] == [
        f"second {MARKER}"]
    assert {LABEL_FAILED, LABEL_RUNNING} <= set(fake_github.labels(DEFAULT_REPO, issue))
    assert check.check is not None and check.check.conclusion == "success"
    assert run.approves and run.outputs() == {}
    assert not (tmp_path / "plans").exists()


def test_mode_plan_writes_nothing_and_records_what_a_later_job_may(
        tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> None:
    issue = fake_github.add_issue(DEFAULT_REPO, title="t", body="b")
    _, plan = _doors(tmp_path, make_forge)
    assert plan.outputs() == {"has_plan": "false"}

    plan.comment(issue, MARKER, f"the run {MARKER}", failed_label=True)
    plan.comment(issue, MARKER, "only an edit", create=False)
    plan.comment(issue, VALIDATE_MARKER, "validate", plannable=False)
    plan.labels(issue, add=[LABEL_RUNNING], remove=["selfcorrect"])
    check = plan.check_run(fake_github.refs(DEFAULT_REPO)["refs/heads/main"], CHECK)
    live = plan.live_comment(issue, MARKER, task="issue #1", run_url="u", guidance="",
                             secrets=[], approval="<!-- selfcorrect:approved x -->")
    live.start()
    applied = plan.publish(WritePlan(repository=DEFAULT_REPO, task="t", status="none"))

    assert fake_github.comments(DEFAULT_REPO, issue) == []
    assert LABEL_RUNNING not in fake_github.labels(DEFAULT_REPO, issue)
    assert fake_github.check_runs(DEFAULT_REPO) == []
    assert check.check is None and "mode plan writes nothing" in check.note
    assert applied is None and not plan.approves
    saved = [saved_plan for _, saved_plan in load_plans(tmp_path / "plans")]
    comments = [p.comment for p in saved if p.comment is not None]
    assert [c.body for c in comments] == [f"the run {MARKER}"]
    assert any(p.labels is not None and LABEL_FAILED in p.labels.add for p in saved)
    assert plan.outputs() == {"has_plan": "true"}


def test_the_mode_is_decided_in_one_module() -> None:
    """grep: the only comparisons with a mode's name are in action/writes/door.py."""
    pattern = re.compile(r"""mode\s*[!=]=\s*["'](plan|publish|run)["']""")
    found = [f"{path.relative_to(ROOT)}:{number}"
             for path in sorted((ROOT / "selfcorrect_action").rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if pattern.search(line)]

    assert found and all(place.startswith("selfcorrect_action/action/writes/door.py:")
                         for place in found), found
    assert applies_saved_plans("publish") and not applies_saved_plans("plan")


@pytest.mark.parametrize("module", ["handlers", "reporting", "task_run", "fix",
                                    "writes/publish", "writes/live"])
def test_no_module_of_the_action_writes_around_the_door(module: str) -> None:
    """Every forge write (comment, label, branch, commit, pull request, check run, ref) is
    the door's: the handlers, the reports, the run and the publisher only read the forge."""
    text = (ROOT / "selfcorrect_action" / "action" / f"{module}.py").read_text()
    writes = re.findall(r"forge\.(create_\w+|edit_\w+|add_labels|remove_label|ensure_label|"
                        r"write_\w+|move_branch|advance_ref|delete_ref|update_check_run)\(",
                        text)
    allowed = {"writes/live": {"create_comment", "edit_comment"}}.get(module, set())
    assert set(writes) <= allowed, writes
