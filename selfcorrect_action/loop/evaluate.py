"""EVALUATE: layer 1 (execution) and layer 2 (contract, then the frozen tests), cheapest
first, stopping at the first failure; then layer 3, the LLM judge, when it is enabled."""

from __future__ import annotations

from selfcorrect_action.evaluation.layers import evaluate as evaluate_layers
from selfcorrect_action.evaluation.spec_tests import TestsVerdict, judge_test_run
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.judge import judge
from selfcorrect_action.loop.state import Attempt, JudgeOutcome, Progress, RunState
from selfcorrect_action.loop.steps_common import metered, settle_llm_step
from selfcorrect_action.taxonomy import Category, Check, Verdict


def evaluate(state: RunState, deps: Deps) -> RunState:
    attempt = state.last
    if attempt is None or attempt.verdict is not None or attempt.execution is None:
        return state  # a cycle or an empty answer carries its verdict already
    verdict = evaluate_layers(attempt.execution, state.contract, script_name=state.output_name)
    tests = None
    if verdict.passed and attempt.test_execution is not None:
        tests = judge_test_run(attempt.test_execution, candidate=state.output_name)
        verdict = _with_tests(verdict, tests)
    judged: JudgeOutcome | None = None
    if verdict.passed and state.spec.judge:
        deps.on_event("evaluate", f"attempt {attempt.index}: asking the judge")
        llm = metered(state, deps)
        outcome = settle_llm_step(state, llm, lambda: judge(state, attempt, llm))
        if outcome.failed is not None:
            return _store(outcome.failed, attempt.model_copy(update={
                "verdict": verdict, "tests": tests.outcomes if tests else [],
                "progress": progress(verdict, tests, None), "llm_calls": [
                    *attempt.llm_calls, *llm.calls]}))
        judged = outcome.value
        verdict = _with_judge(verdict, judged)
        state = state.model_copy(update={"usage": llm.usage})
        attempt = attempt.model_copy(update={"llm_calls": [*attempt.llm_calls, *llm.calls]})
    deps.on_event("evaluate", f"attempt {attempt.index}: " + (
        "passed" if verdict.passed else f"{verdict.category} failure: {verdict.evidence[:120]}"))
    return _store(state, attempt.model_copy(update={
        "verdict": verdict, "judge": judged, "tests": tests.outcomes if tests else [],
        "progress": progress(verdict, tests, judged),
    }))


def progress(verdict: Verdict, tests: TestsVerdict | None, judged: JudgeOutcome | None
             ) -> Progress:
    """Layer reached (0 crashed, 1 ran cleanly, 2 met contract and tests, 3 judge passed),
    then tests and checks passed: how a regression is recognised."""
    execution_ok = verdict.failed_layer != "execution"
    contract_ok = verdict.passed or verdict.failed_layer == "semantic"
    layer = 3 if verdict.passed else 2 if contract_ok else 1 if execution_ok else 0
    return Progress(
        layer=layer,
        tests_passed=tests.totals.passed if tests else 0,
        checks_passed=sum(check.passed for check in verdict.checks),
    )


def _with_tests(verdict: Verdict, tests: TestsVerdict) -> Verdict:
    checks = [*verdict.checks, tests.check]
    if tests.passed:
        return verdict.model_copy(update={"checks": checks})
    return Verdict(passed=False, failed_layer="contract", category=tests.category,
                   evidence=tests.evidence, checks=checks)


def _with_judge(verdict: Verdict, judged: JudgeOutcome) -> Verdict:
    check = Check(name="judge", passed=judged.passed, detail=judged.reasoning[:600])
    checks = [*verdict.checks, check]
    if judged.passed:
        return verdict.model_copy(update={"checks": checks})
    unmet = "; ".join(judged.unmet_criteria)
    evidence = f"the judge: {judged.reasoning[:400]}" + (f" (unmet: {unmet[:200]})" if unmet
                                                          else "")
    return Verdict(passed=False, failed_layer="semantic", category=Category.SEMANTIC,
                   evidence=evidence, checks=checks)


def _store(state: RunState, attempt: Attempt) -> RunState:
    return state.model_copy(update={"attempts": [*state.attempts[:-1], attempt]})
