"""The reports render whatever state the real loop ends in: the orchestrator over a scripted
model and a canned sandbox, one run per way a run can end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.errors import SandboxError
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report import audit_markdown, load_run_json, run_json, summary_markdown
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult, StreamCapture
from selfcorrect_action.spec import Budget, TaskSpec
from tests.fakes.scripted_llm import ScriptedLLM

from .markdown_checks import assert_well_formed, attempt_sections

PLAN = ("plan", json.dumps({"approach": "print a greeting", "contract": {}}))
PASS = ("judge", json.dumps({"verdict": "pass", "reasoning": "fine", "unmet_criteria": []}))
REJECT = ("judge", json.dumps({"verdict": "fail", "reasoning": "it greets nobody",
                               "unmet_criteria": ["greets the user"]}))  # fmt: skip
CRASH = ExecutionResult(exit_code=1, stderr=StreamCapture(
    text='Traceback (most recent call last):\n  File "/work/task.py", line 1, in <module>\n'
    "    boom()\nNameError: name 'boom' is not defined\n"))  # fmt: skip


def code(body: str) -> str:
    return f"```python\n{body}\n```"


class CannedSandbox:
    """Runs nothing: code containing "good" passes, anything else crashes."""

    def __init__(self, *, broken: bool = False) -> None:
        self.broken = broken

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        if self.broken:
            raise SandboxError("the engine went away")
        candidate = next(f for f in request.files if f.path == "task.py").data.decode()
        if "good" in candidate:
            return ExecutionResult(exit_code=0, stdout=StreamCapture(text="hello\n"))
        return CRASH


SCRIPTS = {
    "passes after a patch": [PLAN, ("generate", code("boom()")),
                             ("repair", code("print('good')")), PASS],
    "judge rejects, then a rethink": [PLAN, ("generate", code("print('good 1')")), REJECT,
                                      ("generate", code("print('good 2')")), PASS],
    "cycle, then stops": [PLAN, ("generate", code("boom()")), ("repair", code("boom()")),
                          ("repair", code("boom()"))],
    "no code in the answer": [PLAN, ("generate", "I cannot help with that."),
                              ("repair", code("print('good')")), PASS],
    "malformed plan, then a pass": [("plan", "sure! here you go"), ("plan", "{not json"),
                                    ("generate", code("print('good')")), PASS],
}  # fmt: skip


def final_state(answers: list[tuple[str, str]], tmp_path: Path, *, broken: bool = False
                ) -> RunState:  # fmt: skip
    spec = TaskSpec(prompt="Print a greeting.", budget=Budget(patch_attempts=2))
    state = RunState(run_id="r1", started_at="2024-05-01T10:00:00Z", spec_source="t.yml",
                     spec=spec, output_name="task.py", contract=spec.contract,
                     models=ModelTiers())  # fmt: skip
    deps = Deps(llm=ScriptedLLM(list(answers)), sandbox=CannedSandbox(broken=broken),
                work_root=tmp_path, now=lambda: "2024-05-01T10:00:42Z")  # fmt: skip
    return run_loop(state, deps)


def check_reports(state: RunState) -> str:
    text = audit_markdown(state, secrets=[])
    assert_well_formed(text)
    assert_well_formed(summary_markdown(state, secrets=[]))
    assert len(attempt_sections(text)) == len(state.attempts)
    assert f"**Status: {state.status.value}" in text or "**Status: failed" in text
    assert load_run_json(run_json(state, secrets=[])).status is state.status
    return text


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_every_way_a_loop_ends_renders(name: str, tmp_path: Path) -> None:
    text = check_reports(final_state(SCRIPTS[name], tmp_path))

    assert "| wall time | 42.0 s |" in text


def test_a_judge_rejection_shows_the_judge(tmp_path: Path) -> None:
    text = check_reports(final_state(SCRIPTS["judge rejects, then a rethink"], tmp_path))
    first = attempt_sections(text)[0]

    assert "| judge | failed | unmet: greets the user |" in first
    assert "The judge's reasoning:\n\n> it greets nobody" in first
    assert "- greets the user" in first


def test_an_answer_without_code_failed_before_running(tmp_path: Path) -> None:
    text = check_reports(final_state(SCRIPTS["no code in the answer"], tmp_path))
    first = attempt_sections(text)[0]

    assert "Not run: the answer was rejected before running" in first
    assert "| execution | failed | not run: " in first
    assert "Category: **syntax**." in first


def test_a_skipped_plan_and_its_refused_answers_are_in_the_audit(tmp_path: Path) -> None:
    text = check_reports(final_state(SCRIPTS["malformed plan, then a pass"], tmp_path))
    plan = text.split("## Plan", 1)[1].split("## Contract", 1)[0]
    assert "The plan step was skipped: the plan answer was unusable twice" in plan
    assert "<summary>refused plan answer: the reply contains no JSON object</summary>" in plan
    assert "sure! here you go" in plan and "{not json" in plan


def test_an_empty_generation_is_kept_as_a_refused_answer(tmp_path: Path) -> None:
    text = check_reports(final_state([PLAN, ("generate", "```python\n```\nSorry, no."),
                                      ("repair", code("print('good')")), PASS], tmp_path))
    first = attempt_sections(text)[0]
    assert "refused generate answer: the answer held no Python code" in first
    assert "Sorry, no." in first
    assert "time  " not in first and " 0 ms" not in first  # it never ran: no time shown


def test_a_sandbox_failure_leaves_an_unevaluated_attempt(tmp_path: Path) -> None:
    state = final_state([PLAN, ("generate", code("print(1)"))], tmp_path, broken=True)
    text = check_reports(state)

    assert "Not run: the run ended before this attempt was executed." in text
    assert "Not evaluated: the run ended before this attempt was evaluated." in text
    assert "Why it stopped: the engine went away." in text
