"""What a finished run commits and opens, and the caps the action's inputs put on a spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.plan_builder import build_plan
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.task_run import _with_budget_caps
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import Attempt, Progress, RunState, Status, Strategy
from selfcorrect_action.spec import load_spec_text


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
