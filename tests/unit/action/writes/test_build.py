"""What a finished run commits and opens, and the caps the action's inputs put on a spec."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.task_run import _with_budget_caps
from selfcorrect_action.action.writes.build import build_plan
from selfcorrect_action.action.writes.plan import AUDIT_SLOT
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import Attempt, Progress, RunState, Status, Strategy
from selfcorrect_action.runs.published import VerifiedScript
from selfcorrect_action.spec import load_spec_text
from selfcorrect_action.verified.build import record_for
from selfcorrect_action.verified.fingerprint import Fingerprint
from selfcorrect_action.verified.header import with_header
from selfcorrect_action.verified.record import ImageRecord, parse_record


def _task(tmp_path: Path, spec: str = "prompt: draw it\noutput: scripts/chart.py\n") -> Task:
    loaded = load_spec_text(spec, "issue #3", root=tmp_path, name="issue-3")
    return Task(loaded, origin="issue 3", label="issue #3", title="A chart",
                branch="selfcorrect/issue-3", comment_on=3, closes=3)


def _state(task: Task, status: Status, *, tests_by_plan: bool = False,
           isolation: str = "process") -> RunState:
    spec = task.loaded.spec.model_copy(update={"isolation": isolation})
    attempts = [Attempt(index=1, strategy=Strategy.INITIAL, tier="cheap", model="m",
                        code="print('best')\n", code_sha="a", progress=Progress(layer=2))]
    return RunState(run_id="9e9e9e", started_at="t", spec_source="issue #3", spec=spec,
                    output_name="chart.py", contract=spec.contract, models=ModelTiers(),
                    attempts=attempts, status=status, stop_reason="why",
                    tests={"test_chart.py": "def test_x():\n    pass\n"} if tests_by_plan else {},
                    tests_written_by_plan=tests_by_plan)


def _plan(task: Task, state: RunState, *, draft: bool = False):
    return build_plan(task, state, repository="o/r", base_branch="main", audit_md="# a",
                      run_json="{}", summary_md="**selfcorrect: passed**",
                      server_url="https://github.example", comment_body="body",
                      comment_marker="<!-- selfcorrect:report run=1.1 -->",
                      draft_on_failure=draft)


def test_a_passing_run_commits_script_tests_and_reports(tmp_path: Path) -> None:
    task = _task(tmp_path)
    plan = _plan(task, _state(task, Status.PASSED, tests_by_plan=True))
    assert plan.commit is not None and plan.pull_request is not None
    assert [f.path for f in plan.commit.files] == [
        "scripts/chart.py", ".selfcorrect/runs/9e9e9e/tests/test_chart.py",
        ".selfcorrect/runs/9e9e9e/AUDIT.md", ".selfcorrect/runs/9e9e9e/run.json"]
    assert "Selfcorrect-Run: 9e9e9e" in plan.commit.message
    body = plan.pull_request.body
    assert "Closes #3" in body and "<!-- selfcorrect:origin issue 3 -->" in body
    assert "blob/selfcorrect/issue-3/.selfcorrect/runs/9e9e9e/AUDIT.md" in body
    assert not plan.pull_request.draft
    assert plan.labels is not None and plan.labels.add == ["selfcorrect:passed"]


def test_the_pull_request_asks_a_person_to_read_model_written_tests(tmp_path: Path) -> None:
    task = _task(tmp_path)
    body = _plan(task, _state(task, Status.PASSED, tests_by_plan=True)).pull_request.body
    assert "written by a model" in body and "A person should read them" in body
    assert "run in a process of their own" in body
    own = _plan(task, _state(task, Status.PASSED)).pull_request.body
    assert "written by a model" not in own and "A person should read" not in own


def test_the_pull_request_says_when_the_candidate_shared_the_tests_process(
        tmp_path: Path) -> None:
    task = _task(tmp_path)
    body = _plan(task, _state(task, Status.PASSED, tests_by_plan=True,
                              isolation="in-process")).pull_request.body
    assert "shared the tests' process" in body
    assert "run in a process of their own" not in body


def test_a_failed_run_opens_nothing_unless_a_draft_is_asked_for(tmp_path: Path) -> None:
    task = _task(tmp_path)
    failed = _state(task, Status.EXHAUSTED)
    plan = _plan(task, failed)
    assert plan.commit is None and plan.pull_request is None
    assert plan.labels is not None and plan.labels.add == ["selfcorrect:failed"]
    draft = _plan(task, failed, draft=True)
    assert draft.pull_request is not None and draft.pull_request.draft
    assert draft.commit is not None and draft.commit.files[0].content == "print('best')\n"
    assert "did not pass" in draft.pull_request.body


def _inputs(**caps: Any) -> ActionInputs:
    return ActionInputs.model_validate({"github_token": "t", **caps})


def test_input_caps_fill_what_the_spec_left_out_and_hold_what_it_wrote(tmp_path: Path) -> None:
    task = _task(tmp_path, "prompt: p\nbudget: {patch_attempts: 9, tokens: 90000}\n")
    capped = _with_budget_caps(task.loaded, _inputs(patch_attempts=2, max_tokens=50000,
                                                    rethink_attempts=5, max_cost_usd=0.5))
    budget = capped.spec.budget
    assert (budget.patch_attempts, budget.tokens) == (2, 50000)  # held to the caps
    assert (budget.rethink_attempts, budget.cost_usd) == (5, 0.5)  # filled in
    loose = _with_budget_caps(task.loaded, _inputs(patch_attempts=20))
    assert loose.spec.budget.patch_attempts == 9  # the spec's own, smaller
    assert _with_budget_caps(task.loaded, _inputs()) is task.loaded


@pytest.mark.parametrize(("status", "conclusion", "title"), [
    (Status.PASSED, "success", "passed ·"), (Status.EXHAUSTED, "failure", "failed:"),
    (Status.STOPPED, "failure", "failed:"), (Status.ERROR, "failure", "error:"),
    (Status.CANCELLED, "cancelled", "cancelled:")])
def test_the_check_run_is_green_only_when_every_layer_passed(
        tmp_path: Path, status: Status, conclusion: str, title: str) -> None:
    """Never `neutral`: GitHub counts it as passing for a required check. A cancelled run
    (issue 34) is GitHub's `cancelled`: not green, and not said to have failed."""
    task = _task(tmp_path)
    check = _plan(task, _state(task, status)).check_run
    assert check is not None and check.branch == "selfcorrect/issue-3"
    output = check.output
    assert (output.name, output.conclusion) == ("selfcorrect / issue #3", conclusion)
    assert output.external_id == "selfcorrect run 9e9e9e"
    assert output.title.startswith(title)
    assert ("the run was cancelled before it ended" in output.summary) == (
        status is Status.CANCELLED)


def test_the_check_runs_summary_has_the_attempts_categories_tokens_cost_and_audit_slot(
        tmp_path: Path) -> None:
    task = _task(tmp_path)
    secret = "ghp_" + "s3cr3t" * 6
    state = _state(task, Status.STOPPED).model_copy(update={"stop_reason": f"saw {secret}"})
    plan = build_plan(task, state, repository="o/r", base_branch="main", audit_md="# a",
                      run_json="{}", summary_md="s", server_url="https://github.example",
                      comment_body=None, comment_marker=None, draft_on_failure=True,
                      secrets=[secret], run_url="https://github.example/o/r/actions/runs/7")
    assert plan.check_run is not None
    output = plan.check_run.output
    summary = output.summary
    assert "| # | strategy | model | result | progress | tokens |" in summary
    for row in ("| failures by category |", "| tokens |", "| cost |"):
        assert row in summary
    assert "not green" in summary and AUDIT_SLOT in summary
    assert secret not in summary and "saw" in summary
    assert output.details_url == "https://github.example/o/r/actions/runs/7"
    assert plan.check_run.audit_link == (
        "https://github.example/o/r/blob/selfcorrect/issue-3/.selfcorrect/runs/9e9e9e/AUDIT.md")
    no_commit = _plan(task, _state(task, Status.STOPPED)).check_run
    assert no_commit is not None and no_commit.audit_link == ""


def test_a_green_check_with_model_written_tests_says_so_in_its_title(tmp_path: Path) -> None:
    task = _task(tmp_path)
    check = _plan(task, _state(task, Status.PASSED, tests_by_plan=True)).check_run
    assert check is not None and check.output.conclusion == "success"
    assert "1 caution: read before trusting" in check.output.title
    assert "written by a model" in check.output.summary
    assert "The cautions above still hold" in check.output.summary


def test_an_observed_runs_pull_request_proposes_the_allow_list_it_needed(
        tmp_path: Path) -> None:
    """Issue 19: after `observe: true` the pull request's body (not only the comment) says
    what to write in place of it."""
    from selfcorrect_action.contract import ExecutionContract
    from selfcorrect_action.network_rules import NetworkRules
    from selfcorrect_action.report.audit import summary_markdown
    from selfcorrect_action.sandbox.egress.records import ConnectionRecord, NetworkLog
    from tests.unit.report.runs import SECRETS, add_attempt, base_state, finish, result

    task = _task(tmp_path)
    observe = NetworkRules(observe=True)
    state = base_state(contract=ExecutionContract(network=observe), tests={}
                       ).model_copy(update={"run_id": "9e9e9e"})
    reached = ConnectionRecord(host="api.example.com", port=443, kind="https", allowed=True)
    log = NetworkLog(policy="observe", observe=True, connections=[reached])
    state = add_attempt(state, "print(1)\n", result(exit_code=0, network=log),
                        strategy="initial")  # type: ignore[arg-type]
    state = finish(state, Status.PASSED, "passed")
    plan = build_plan(task, state, repository="o/r", base_branch="main", audit_md="# a",
                      run_json="{}", summary_md=summary_markdown(state, secrets=SECRETS),
                      server_url="https://github.example", comment_body="body",
                      comment_marker="<!-- selfcorrect:report run=1.1 -->",
                      draft_on_failure=False)
    assert plan.pull_request is not None
    body = plan.pull_request.body
    assert "Suggested change to the task spec" in body
    assert "contract:\n  network:\n    allow:\n      - api.example.com" in body


def test_an_issues_title_and_prompt_close_no_other_issue(tmp_path: Path) -> None:
    """A red team's: an issue titled "Fixes #123" made a commit message that closed #123
    when the pull request was merged. Only the pull request's own "Closes #3" may."""
    task = dataclasses.replace(_task(tmp_path), title="Fixes #123")
    state = _state(task, Status.PASSED)
    plan = build_plan(task, state, repository="o/r", base_branch="main", audit_md="# a",
                      run_json="{}", summary_md="> Resolves o/r#7 when it runs",
                      server_url="https://github.example", comment_body="body",
                      comment_marker="<!-- selfcorrect:report run=1.1 -->",
                      draft_on_failure=False)
    assert plan.commit is not None and plan.pull_request is not None
    closing = re.compile(r"(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?):?\s+\S*#\d")
    for text in (plan.commit.message, plan.pull_request.title):
        assert "123" in text and not closing.search(text), text
    assert [m.group() for m in closing.finditer(plan.pull_request.body)] == ["Closes #3"]


def _verified(task: Task, state: RunState) -> VerifiedScript:
    """What runs/published.py hands the publisher for a script whose final check passed."""
    script = with_header("print('best')\n", spec="issue #3",
                         lock=".selfcorrect/lock/issue-3.json")
    now = Fingerprint(prompt_sha256="a" * 64, fields_sha256="b" * 64, script=None,
                      inputs=(), tests=())
    record = record_for(task.loaded, state, script=script, now=now,
                        image=ImageRecord(tag="selfcorrect-sandbox:x"), spec="issue #3",
                        run_record=".selfcorrect/runs/9e9e9e/run.json")
    return VerifiedScript(script, record, ".selfcorrect/lock/issue-3.json")


def test_a_passing_scripts_commit_carries_it_with_its_header_and_its_record(
        tmp_path: Path) -> None:
    """Issue 36: the commit holds the bytes the final check ran, and the record of them;
    an issue's record is named after the issue and points at the committed run.json."""
    task = _task(tmp_path)
    state = _state(task, Status.PASSED)
    verified = _verified(task, state)
    plan = build_plan(task, state, repository="o/r", base_branch="main", audit_md="# a",
                      run_json="{}", summary_md="s", server_url="https://github.example",
                      comment_body=None, comment_marker=None, draft_on_failure=False,
                      verified=verified)

    assert plan.commit is not None and plan.pull_request is not None
    files = {f.path: f.content for f in plan.commit.files}
    assert list(files) == ["scripts/chart.py", ".selfcorrect/lock/issue-3.json",
                           ".selfcorrect/runs/9e9e9e/AUDIT.md",
                           ".selfcorrect/runs/9e9e9e/run.json"]
    assert files["scripts/chart.py"] == verified.script
    assert files["scripts/chart.py"].startswith("# selfcorrect: generated from issue #3")
    record = parse_record(files[".selfcorrect/lock/issue-3.json"], "record")
    assert record.spec == "issue #3" and record.run_record in files
    assert record.script.sha256 == hashlib.sha256(verified.script.encode()).hexdigest()
    assert ".selfcorrect/lock/issue-3.json" in plan.pull_request.body


def test_a_failed_runs_draft_carries_no_record(tmp_path: Path) -> None:
    task = _task(tmp_path)
    verified = _verified(task, _state(task, Status.PASSED))
    plan = build_plan(task, _state(task, Status.EXHAUSTED), repository="o/r",
                      base_branch="main", audit_md="# a", run_json="{}", summary_md="s",
                      server_url="https://github.example", comment_body=None,
                      comment_marker=None, draft_on_failure=True, verified=verified)

    assert plan.commit is not None
    assert [f.path for f in plan.commit.files][:1] == ["scripts/chart.py"]
    assert not any(f.path.startswith(".selfcorrect/lock/") for f in plan.commit.files)
    assert plan.commit.files[0].content == "print('best')\n"


def test_the_pull_request_says_how_to_reproduce_its_verdict(tmp_path: Path) -> None:
    """Issue 36, item 6: the one line a reviewer runs to see the verdict hold again; none in
    a draft, which has no record to reproduce."""
    task = _task(tmp_path)
    verified = _verified(task, _state(task, Status.PASSED))

    def body(status: Status) -> str:
        plan = build_plan(task, _state(task, status), repository="o/r", base_branch="main",
                          audit_md="# a", run_json="{}", summary_md="s",
                          server_url="https://github.example", comment_body=None,
                          comment_marker=None, draft_on_failure=True, verified=verified)
        assert plan.pull_request is not None
        return plan.pull_request.body

    assert "`selfcorrect verify .selfcorrect/lock/issue-3.json`" in body(Status.PASSED)
    assert "selfcorrect verify" not in body(Status.EXHAUSTED)
