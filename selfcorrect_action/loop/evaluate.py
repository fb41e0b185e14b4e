"""EVALUATE: layer 1 (execution) and layer 2 (contract, then the frozen tests), cheapest
first, stopping at the first failure; then layer 3, the LLM judge, when it is enabled."""

from __future__ import annotations

from selfcorrect_action.evaluation.layers import evaluate as evaluate_layers
from selfcorrect_action.evaluation.spec_tests import TestsVerdict, judge_test_run
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.judge import judge
from selfcorrect_action.loop.llm_step import RunEnded, call_or_end, metered
from selfcorrect_action.loop.state import (
    Attempt,
    JudgeOutcome,
    Progress,
    RunState,
    with_last_attempt,
)
from selfcorrect_action.records import evolve
from selfcorrect_action.taxonomy import Category, Check, Verdict
from selfcorrect_action.templating import shorten


def evaluate(state: RunState, deps: Deps) -> RunState:
    latest = state.last
    if latest is None or latest.verdict is not None or latest.execution is None:
        return state  # a cycle or an empty answer carries its verdict already
    attempt: Attempt = latest
    verdict = evaluate_layers(latest.execution, state.contract, script_name=state.output_name)
    tests = None
    if verdict.passed and attempt.test_execution is not None:
        tests = judge_test_run(attempt.test_execution, candidate=state.output_name)
        verdict = _with_tests(verdict, tests)
    judged: JudgeOutcome | None = None
    if verdict.passed and state.spec.judge:
        deps.on_event("evaluate", f"attempt {attempt.index}: asking the judge")
        llm = metered(state, deps)
        sees = deps.sees_images(state.models.judge)
        outcome = call_or_end(state, llm, lambda: judge(
            state, attempt, llm, on_retry=lambda why: deps.on_event("evaluate", why),
            sees_images=sees))
        if isinstance(outcome, RunEnded):
            return with_last_attempt(outcome.state, evolve(attempt, {
                "verdict": verdict, "tests": tests.outcomes if tests else [],
                "progress": progress(verdict, tests), "llm_calls": [
                    *attempt.llm_calls, *llm.calls]}))
        judged, refused = outcome
        verdict = _with_judge(verdict, judged)
        state = evolve(state, {"usage": llm.usage})
        attempt = evolve(attempt, {"llm_calls": [*attempt.llm_calls, *llm.calls],
                                   "rejected": [*attempt.rejected, *refused]})
    deps.on_event("evaluate", f"attempt {attempt.index}: " + (
        "passed" if verdict.passed else f"{verdict.category} failure: "
        f"{shorten(verdict.evidence, 160)}"))
    return with_last_attempt(state, evolve(attempt, {
        "verdict": verdict, "judge": judged, "tests": tests.outcomes if tests else [],
        "progress": progress(verdict, tests),
    }))


def progress(verdict: Verdict, tests: TestsVerdict | None) -> Progress:
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
        return evolve(verdict, {"checks": checks})
    return Verdict(passed=False, failed_layer="contract", category=tests.category,
                   evidence=tests.evidence, checks=checks)


def _with_judge(verdict: Verdict, judged: JudgeOutcome) -> Verdict:
    check = Check(name="judge", passed=judged.passed, detail=judged.reasoning[:600])
    checks = [*verdict.checks, check]
    if judged.passed:
        return evolve(verdict, {"checks": checks})
    unmet = "; ".join(judged.unmet_criteria)
    evidence = f"the judge: {judged.reasoning[:400]}" + (f" (unmet: {unmet[:200]})" if unmet
                                                          else "")
    return Verdict(passed=False, failed_layer="semantic", category=Category.SEMANTIC,
                   evidence=evidence, checks=checks)

