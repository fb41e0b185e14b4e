"""The whole loop over fakes at its two seams (a scripted model, a canned sandbox): every
terminal status and the guards that lead to them, under both orchestrators (issue 23: the
LangGraph graph of the same steps, checkpointing every step to SQLite, must end every
scenario where the plain loop does)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from selfcorrect_action.contract import ArtifactSpec, ExecutionContract
from selfcorrect_action.errors import SandboxError
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.given import GIVEN_MODEL, starting_from
from selfcorrect_action.loop.orchestrator import run_loop
from selfcorrect_action.loop.state import RunState, Status, Strategy
from selfcorrect_action.records import evolve
from selfcorrect_action.sandbox.models import (
    ArtifactRecord,
    ExecutionRequest,
    ExecutionResult,
    StreamCapture,
)
from selfcorrect_action.spec import Budget, TaskSpec
from selfcorrect_action.taxonomy import Category
from tests.fakes.scripted_llm import ScriptedLLM
from tests.orchestration import ORCHESTRATORS, use_orchestrator

PLAN = ("plan", json.dumps({"approach": "just do it", "contract": {}}))
PASS = ("judge", json.dumps({"verdict": "pass", "reasoning": "fine", "unmet_criteria": []}))
FAIL = ("judge", json.dumps({"verdict": "fail", "reasoning": "wrong", "unmet_criteria": ["x"]}))
CRASH = ExecutionResult(exit_code=1, stderr=StreamCapture(
    text='Traceback (most recent call last):\n  File "/work/task.py", line 1, in <module>\n'
         "    boom()\nNameError: name 'boom' is not defined\n"))


@pytest.fixture(autouse=True, params=ORCHESTRATORS)
def _orchestrator(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
                  tmp_path: Path) -> None:
    use_orchestrator(request.param, sys.modules[__name__], monkeypatch,
                     tmp_path / "checkpoints.sqlite")


def code(body: str) -> str:
    return f"```python\n{body}\n```"


class CannedSandbox:
    """Decides each execution's outcome from the code it is given."""

    def __init__(self, outcome: Callable[[str], ExecutionResult]) -> None:
        self.outcome = outcome
        self.requests: list[ExecutionRequest] = []

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        self.requests.append(request)
        candidate = next(f for f in request.files if f.path == "task.py").data.decode()
        result = self.outcome(candidate)
        artifact_dir.mkdir(parents=True, exist_ok=True)
        records = []
        for record in result.artifacts:
            path = artifact_dir / record.path
            path.write_text("hello")
            records.append(record.model_copy(update={"host_path": path, "size": 5}))
        return result.model_copy(update={"artifacts": records})


def ok_if(marker: str) -> Callable[[str], ExecutionResult]:
    return lambda candidate: (ExecutionResult(exit_code=0) if marker in candidate else CRASH)


def state(*, judge: bool = True, budget: Budget | None = None,
          contract: ExecutionContract | None = None) -> RunState:
    spec = TaskSpec(prompt="do the thing", judge=judge, budget=budget or Budget(),
                    contract=contract or ExecutionContract())
    return RunState(run_id="r", started_at="t0", spec_source="t.yml", spec=spec,
                    output_name="task.py", contract=spec.contract, models=ModelTiers())


def deps(llm: ScriptedLLM, sandbox: CannedSandbox, tmp_path: Path) -> Deps:
    return Deps(llm=llm, sandbox=sandbox, work_root=tmp_path, now=lambda: "t1")


def test_first_attempt_passes(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("print('good')")), PASS])
    final = run_loop(state(), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.PASSED
    assert len(final.attempts) == 1 and final.attempts[0].progress.layer == 3
    assert final.usage.llm_calls == 3 and final.finished_at == "t1"
    assert final.attempts[0].judge is not None and final.attempts[0].judge.passed


def test_runtime_failure_is_patched_with_a_packet(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("boom()")), ("repair", code("print('good')")),
                       PASS])
    final = run_loop(state(), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.PASSED
    first, second = final.attempts
    assert first.verdict is not None and first.verdict.category is Category.RUNTIME
    assert first.packet is not None and "NameError" in first.packet.evidence
    assert second.strategy is Strategy.PATCH and second.base_attempt == 1
    repair_prompt = llm.requests[2].messages[-1].content
    assert "boom()" in repair_prompt and "NameError" in repair_prompt
    assert final.usage.patch_attempts == 1


def test_judge_rejection_is_rethought(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("print('good 1')")), FAIL,
                       ("generate", code("print('good 2')")), PASS])
    final = run_loop(state(), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.PASSED
    assert final.attempts[0].verdict.category.value == "semantic"  # type: ignore[union-attr]
    assert final.attempts[1].strategy is Strategy.RETHINK
    assert final.usage.rethink_attempts == 1


def test_contract_miss_fails_layer_two(tmp_path: Path) -> None:
    contract = ExecutionContract(artifacts=[ArtifactSpec(path="out.txt", kind="txt")])
    sandbox = CannedSandbox(lambda c: ExecutionResult(exit_code=0, artifacts=[
        ArtifactRecord(path="out.txt", size=5)] if "write" in c else []))
    llm = ScriptedLLM([PLAN, ("generate", code("print(1)")), ("repair", code("write()")),
                       PASS])
    final = run_loop(state(contract=contract), deps(llm, sandbox, tmp_path))
    assert final.status is Status.PASSED
    assert final.attempts[0].verdict.failed_layer == "contract"  # type: ignore[union-attr]


def test_same_code_twice_is_a_cycle_that_escalates_then_stops(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("boom()")), ("repair", code("boom()")),
                       ("repair", code("boom()"))])
    sandbox = CannedSandbox(ok_if("good"))
    final = run_loop(state(), deps(llm, sandbox, tmp_path))
    assert final.status is Status.STOPPED
    assert [a.cycle_of for a in final.attempts] == [None, 1, 1]
    assert final.attempts[2].tier == "strong"
    assert len(sandbox.requests) == 1  # cycles are never run again


def test_retry_budgets_exhaust(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("boom(1)")), ("repair", code("boom(2)"))])
    final = run_loop(state(budget=Budget(patch_attempts=1, rethink_attempts=0)),
                     deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.EXHAUSTED
    assert "retry budget" in final.stop_reason and len(final.attempts) == 2


def test_token_budget_is_checked_before_the_call(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("boom(1)"))], prompt_tokens=2000)
    final = run_loop(state(budget=Budget(tokens=4500)),
                     deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.EXHAUSTED
    assert "token budget" in final.stop_reason
    assert final.usage.tokens <= 4500
    assert not llm.answers or len(llm.requests) <= 2


def test_a_plan_unusable_twice_does_not_sink_the_run(tmp_path: Path) -> None:
    """Issue 8: it goes on with the contract as written, and says the plan was skipped;
    the refused replies are kept with their reasons (issue 9)."""
    events: list[tuple[str, str]] = []
    llm = ScriptedLLM([("plan", "sure! here you go"), ("plan", "{not json"),
                       ("generate", code("print('good')")), PASS])
    final = run_loop(state(), Deps(llm=llm, sandbox=CannedSandbox(ok_if("good")),
                                   work_root=tmp_path, on_event=lambda *e: events.append(e)))
    assert final.status is Status.PASSED and final.usage.llm_calls == 4
    assert final.plan is not None and final.plan.skipped.startswith("skipped: the plan answer")
    assert [r.text for r in final.plan.rejected] == ["sure! here you go", "{not json"]
    assert "no JSON object" in final.plan.rejected[0].reason
    assert any("asking once more" in message for _, message in events)


def test_a_function_plan_unusable_twice_stops_the_run(tmp_path: Path) -> None:
    spec = TaskSpec(prompt="add two numbers", kind="function")
    start = RunState(run_id="r", started_at="t0", spec_source="t.yml", spec=spec,
                     output_name="task.py", contract=spec.contract, models=ModelTiers())
    llm = ScriptedLLM([("plan", "no"), ("plan", "still no")])
    final = run_loop(start, deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.STOPPED  # exit 1, not 3: nothing to fix in the setup
    assert "unusable twice" in final.stop_reason and final.usage.llm_calls == 2
    assert final.plan is not None and len(final.plan.rejected) == 2


def test_nothing_to_plan_means_no_plan_call(tmp_path: Path) -> None:
    contract = ExecutionContract(artifacts=[], stdout_contains=["hi"], timeout_s=5,
                                 memory_mb=256, success_criteria=["says hi"])
    spec = TaskSpec(prompt="say hi", contract=contract)
    start = RunState(run_id="r", started_at="t0", spec_source="t.yml", spec=spec,
                     output_name="task.py", contract=contract, models=ModelTiers(),
                     user_contract_fields=sorted(contract.model_fields_set))
    llm = ScriptedLLM([("generate", code("print('hi good')")), PASS])
    sandbox = CannedSandbox(lambda c: ExecutionResult(
        exit_code=0, stdout=StreamCapture(text="hi\n", total_bytes=3)))
    final = run_loop(start, deps(llm, sandbox, tmp_path))
    assert final.status is Status.PASSED and final.usage.llm_calls == 2
    assert final.plan is not None and "nothing to plan" in final.plan.skipped


def test_a_parroted_approach_is_sent_back_once(tmp_path: Path) -> None:
    prompt = "Read sales.csv and print the total of the units column, then print done."
    spec = TaskSpec(prompt=prompt)
    start = RunState(run_id="r", started_at="t0", spec_source="t.yml", spec=spec,
                     output_name="task.py", contract=spec.contract, models=ModelTiers())
    echo = "Read sales.csv, and print the TOTAL of the units column; then print 'done'!"
    llm = ScriptedLLM([("plan", json.dumps({"approach": echo, "contract": {}})),
                       ("plan", json.dumps({"approach": "Loop over rows and print the sum "
                                            "with the csv module.", "contract": {}})),
                       ("generate", code("print('good')")), PASS])
    final = run_loop(start, deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.plan is not None and final.plan.approach.startswith("Loop over rows")
    assert "repeats the words it was asked with" in final.plan.rejected[0].reason


def test_sandbox_failure_ends_as_error_keeping_the_work(tmp_path: Path) -> None:
    def broken(candidate: str) -> ExecutionResult:
        raise SandboxError("the engine went away")

    llm = ScriptedLLM([PLAN, ("generate", code("print(1)"))])
    final = run_loop(state(), deps(llm, CannedSandbox(broken), tmp_path))
    assert final.status is Status.ERROR
    assert "engine went away" in final.stop_reason
    assert len(final.attempts) == 1 and final.plan is not None


def test_an_answer_without_code_is_a_syntax_failure_not_a_run(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", "I cannot help with that."),
                       ("repair", code("print('good')")), PASS])
    sandbox = CannedSandbox(ok_if("good"))
    final = run_loop(state(), deps(llm, sandbox, tmp_path))
    assert final.status is Status.PASSED
    assert final.attempts[0].verdict.category.value == "syntax"  # type: ignore[union-attr]
    assert len(sandbox.requests) == 1


def test_judge_off_skips_layer_three(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("print('good')"))])
    final = run_loop(state(judge=False), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.PASSED and final.attempts[0].judge is None


@pytest.mark.parametrize("answer", ["nonsense", '{"verdict": "maybe", "reasoning": "?"}'])
def test_an_unreadable_judge_fails_closed(tmp_path: Path, answer: str) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("print('good')")), ("judge", answer),
                       ("judge", answer), ("generate", code("print('good 2')")), PASS])
    final = run_loop(state(), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    first = final.attempts[0]
    assert first.judge is not None and not first.judge.passed
    assert first.verdict.category.value == "semantic"  # type: ignore[union-attr]
    assert final.status is Status.PASSED


def test_the_same_unusable_answer_twice_is_a_cycle(tmp_path: Path) -> None:
    nocode = "I'm sorry, I cannot help with that."
    llm = ScriptedLLM([PLAN, ("generate", nocode), ("repair", nocode), ("repair", nocode)])
    final = run_loop(state(), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert [a.cycle_of for a in final.attempts] == [None, 1, 1]
    assert final.attempts[2].tier == "strong"
    assert final.status is Status.STOPPED


def test_an_interrupt_keeps_the_attempts_made(tmp_path: Path) -> None:
    """Cancelled, not an error (issue 34): nothing failed, the run was stopped."""
    def interrupted(candidate: str) -> ExecutionResult:
        raise KeyboardInterrupt

    llm = ScriptedLLM([PLAN, ("generate", code("print(1)"))])
    final = run_loop(state(), deps(llm, CannedSandbox(interrupted), tmp_path))
    assert final.status is Status.CANCELLED and final.stop_reason.startswith("interrupted")
    assert final.interrupted_by == "SIGINT" and final.error_exit_code is None
    assert len(final.attempts) == 1 and final.usage.llm_calls == 2


def test_a_function_plan_without_tests_stops_the_run_cleanly(tmp_path: Path) -> None:
    """Issue 10: this path used to set status to the string "error", and the final
    `status.value` crashed. It is the model's failure: stopped, with the reason kept."""
    spec = TaskSpec(prompt="add two numbers", kind="function")
    start = RunState(run_id="r", started_at="t0", spec_source="t.yml", spec=spec,
                     output_name="task.py", contract=spec.contract, models=ModelTiers())
    llm = ScriptedLLM([PLAN])
    final = run_loop(start, deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.STOPPED
    assert "wrote none" in final.stop_reason
    assert final.attempts == [] and final.plan is not None
    assert final.usage.llm_calls == 1 and final.finished_at == "t1"


def test_states_are_observed_after_the_plan_and_every_attempt(tmp_path: Path) -> None:
    seen: list[RunState] = []
    llm = ScriptedLLM([PLAN, ("generate", code("boom()")), ("repair", code("print('good')")),
                       PASS])
    run_loop(state(), Deps(llm=llm, sandbox=CannedSandbox(ok_if("good")), work_root=tmp_path,
                           on_state=seen.append))
    assert [len(s.attempts) for s in seen] == [0, 1, 2]
    assert seen[-1].status is Status.PASSED and seen[0].plan is not None


def test_a_replay_that_runs_short_ends_with_the_replay_problems_exit_code(
    tmp_path: Path,
) -> None:
    """It used to exit 3 (infrastructure) while every other replay problem exits 2."""
    from selfcorrect_action.llm.errors import LLMReplayError
    from selfcorrect_action.runs.outcome import exit_code

    class ShortReplay:
        def complete(self, request: object) -> object:
            raise LLMReplayError("r.jsonl: the run asked for exchange index 0 but the "
                                 "recording has only 0")

    final = run_loop(state(), Deps(llm=ShortReplay(), sandbox=CannedSandbox(ok_if("x")),  # type: ignore[arg-type]
                                   work_root=tmp_path))
    assert final.status is Status.ERROR and final.error_exit_code == 2
    assert exit_code(final) == 2


def test_an_oversized_answer_is_cut_and_never_run(tmp_path: Path) -> None:
    """run.json stores every attempt's code: it must stay bounded whatever a server sends."""
    from selfcorrect_action.loop.generate import MAX_CODE_CHARS

    huge = "x = 1\n" * (MAX_CODE_CHARS // 3)
    llm = ScriptedLLM([PLAN, ("generate", code(huge)), ("repair", code("print('good')")),
                       PASS])
    sandbox = CannedSandbox(ok_if("good"))
    final = run_loop(state(budget=Budget(tokens=1_000_000)), deps(llm, sandbox, tmp_path))
    first = final.attempts[0]
    assert len(first.code) == MAX_CODE_CHARS
    assert first.verdict is not None and first.verdict.category is Category.SYNTAX
    assert "more than the 200,000" in first.verdict.evidence
    assert len(sandbox.requests) == 1 and final.status is Status.PASSED


def test_calls_an_interrupted_step_made_still_count(tmp_path: Path) -> None:
    """A step stopped mid-way (here: the judge's repair-retry meets an outage) has not put
    its calls into the state; their tokens and unknown price must still be reported."""
    from selfcorrect_action.llm.errors import LLMUnavailable

    class UnpricedThenDown(ScriptedLLM):
        def complete(self, request):
            if not self.answers:
                raise LLMUnavailable("the API is down")
            response = super().complete(request)
            return response.model_copy(update={"cost_usd": 0.0, "cost_known": False})

    llm = UnpricedThenDown([PLAN, ("generate", code("print('good')")),
                            ("judge", "not json")])
    final = run_loop(state(), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.ERROR
    assert final.usage.llm_calls == 3  # plan, generate, and the judge's first answer
    assert not final.usage.cost_known  # "cost unknown", not "$0.0000"


def test_the_done_line_is_one_line_without_the_hint(tmp_path: Path) -> None:
    """The reason and its hint print in full in the summary; the progress line said it all
    again (issue 9)."""
    events: list[tuple[str, str]] = []

    def broken(candidate: str) -> ExecutionResult:
        raise SandboxError("the engine went away", hint="start it again")

    llm = ScriptedLLM([PLAN, ("generate", code("print(1)"))])
    run_loop(state(), Deps(llm=llm, sandbox=CannedSandbox(broken), work_root=tmp_path,
                           on_event=lambda *e: events.append(e)))
    (done,) = [message for step, message in events if step == "done"]
    assert done == "error: the engine went away" and "hint" not in done


def small(base: RunState, redraws: int = 2) -> RunState:
    return evolve(base, {"profile": "small", "redraws": redraws})


def test_an_unrunnable_answer_is_drawn_again_warmer_within_its_attempt(tmp_path: Path) -> None:
    """Issue 21: prose, then code that does not parse, then code that runs: one attempt,
    the two answers drawn again kept with why, each draw a step warmer."""
    events: list[tuple[str, str]] = []
    llm = ScriptedLLM([PLAN, ("generate", "Sure! First you should think about the task."),
                       ("generate", code("def f(:\n    pass")),
                       ("generate", code("print('good')")), PASS])
    sandbox = CannedSandbox(ok_if("good"))
    run_deps = deps(llm, sandbox, tmp_path)
    run_deps.on_event = lambda step, message: events.append((step, message))
    final = run_loop(small(state()), run_deps)
    assert final.status is Status.PASSED and len(final.attempts) == 1
    (only,) = final.attempts
    assert [r.temperature for r in llm.requests[1:4]] == [0.0, 0.35, 0.7]
    assert only.temperature == 0.7
    assert [c.purpose for c in only.llm_calls][:3] == ["generate"] * 3
    assert [r.reason.split(";")[-1] for r in only.rejected] == [
        " asked again at temperature 0.35", " asked again at temperature 0.7"]
    assert only.rejected[0].reason.startswith("the answer held no code block")
    assert only.rejected[1].reason.startswith("SyntaxError")
    assert "Sure! First" in only.rejected[0].text
    assert len(sandbox.requests) == 1 and len(llm.requests) == 5
    assert any("asking again at temperature 0.35 (1 of 2)" in m for _, m in events)


def test_redraws_that_never_parse_leave_a_syntax_attempt(tmp_path: Path) -> None:
    bad = [("generate", code(f"def f({n}:")) for n in range(3)]
    llm = ScriptedLLM([PLAN, *bad, ("repair", code("print('good')")), PASS])
    sandbox = CannedSandbox(ok_if("good"))
    final = run_loop(small(state()), deps(llm, sandbox, tmp_path))
    first = final.attempts[0]
    assert first.verdict is not None and first.verdict.category is Category.SYNTAX
    assert first.code.startswith("def f(2:") and len(first.rejected) == 2
    assert final.status is Status.PASSED and len(sandbox.requests) == 1


def test_the_standard_profile_never_draws_again(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("def f(:")), ("repair", code("print('good')")),
                       PASS])
    final = run_loop(state(), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.PASSED and len(final.attempts) == 2
    assert final.attempts[0].rejected == []


def test_a_redraw_the_budget_cannot_pay_keeps_the_answer_and_ends_the_run(
    tmp_path: Path
) -> None:
    llm = ScriptedLLM([PLAN, ("generate", code("def f(:"))], prompt_tokens=2000)
    final = run_loop(small(state(budget=Budget(tokens=4100))),
                     deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.EXHAUSTED and "token budget" in final.stop_reason
    (only,) = final.attempts
    assert only.code.startswith("def f(:") and only.rejected == []
    assert only.verdict is not None and only.verdict.category is Category.SYNTAX
    assert final.usage.tokens <= 4100


def test_given_code_is_run_as_the_first_attempt_then_patched(tmp_path: Path) -> None:
    """A regeneration's seam (issue 36): the committed script is attempt 1, executed
    without a generation, its failure classified and patched from it."""
    llm = ScriptedLLM([PLAN, ("repair", code("print('good')")), PASS])
    sandbox = CannedSandbox(ok_if("good"))
    final = run_loop(starting_from(state(), "boom()"), deps(llm, sandbox, tmp_path))
    assert final.status is Status.PASSED
    given, patched = final.attempts
    assert (given.model, given.llm_calls, given.code) == (GIVEN_MODEL, [], "boom()")
    assert given.verdict is not None and given.verdict.category is Category.RUNTIME
    assert patched.strategy is Strategy.PATCH and patched.base_attempt == 1
    assert [r.purpose for r in llm.requests] == ["plan", "repair", "judge"]
    assert "boom()" in llm.requests[1].messages[-1].content
    assert len(sandbox.requests) == 2


def test_given_code_that_passes_costs_no_generation(tmp_path: Path) -> None:
    llm = ScriptedLLM([PLAN, PASS])
    final = run_loop(starting_from(state(), "print('good')"),
                     deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.PASSED and len(final.attempts) == 1
    assert [r.purpose for r in llm.requests] == ["plan", "judge"]


def test_given_code_counts_against_the_attempt_budget(tmp_path: Path) -> None:
    """With one attempt in the budget, the given code is it: nothing is generated."""
    llm = ScriptedLLM([PLAN])
    final = run_loop(starting_from(state(budget=Budget(patch_attempts=0, rethink_attempts=0)),
                                   "boom()"), deps(llm, CannedSandbox(ok_if("good")), tmp_path))
    assert final.status is Status.EXHAUSTED and len(final.attempts) == 1
    assert [r.purpose for r in llm.requests] == ["plan"]


def test_given_code_that_passes_is_run_even_when_it_is_the_only_attempt(
        tmp_path: Path) -> None:
    """Both orchestrators run the given attempt with a budget of one (the plain loop used
    to count it spent before it ran)."""
    sandbox = CannedSandbox(ok_if("good"))
    final = run_loop(starting_from(state(judge=False,
                                         budget=Budget(patch_attempts=0, rethink_attempts=0)),
                                   "print('good')"), deps(ScriptedLLM([PLAN]), sandbox, tmp_path))
    assert final.status is Status.PASSED and len(sandbox.requests) == 1


def test_a_run_with_attempts_cannot_start_from_given_code() -> None:
    begun = starting_from(state(), "print(1)")
    with pytest.raises(ValueError, match="before its first attempt"):
        starting_from(begun, "print(2)")
