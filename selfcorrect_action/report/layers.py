"""Per attempt: each evaluation layer's result, and the failure the attempt ended with.

The verdict (evaluation/layers.py, loop/evaluate.py) keeps every check that ran, in layer
order: execution checks, contract checks, then one "tests" check, then one "judge" check.
The rows here sort those back into the four layers the audit names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from selfcorrect_action.evaluation.layers import evaluate_execution
from selfcorrect_action.loop.state import Attempt, RunState
from selfcorrect_action.report import text
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.taxonomy import Category, Check

Result = Literal["passed", "failed", "not reached", "not applicable"]
TESTS_CHECK = "tests"
JUDGE_CHECK = "judge"
DETAIL_CHARS = 300
_EXECUTION_CHECKS = frozenset(check.name for check in evaluate_execution(ExecutionResult()))


@dataclass(frozen=True)
class LayerRow:
    layer: str
    result: Result
    detail: str


@dataclass(frozen=True)
class Failure:
    category: str
    evidence: str
    failed_checks: list[str] = field(default_factory=list)


def attempt_failure(state: RunState, attempt: Attempt) -> Failure | None:
    """Why the attempt failed (None when it passed). A cycle's failure is the original's."""
    verdict = attempt.verdict
    if verdict is None and attempt.cycle_of is not None:
        original = next((a for a in state.attempts if a.index == attempt.cycle_of), None)
        failure = attempt_failure(state, original) if original is not None else None
        if failure is not None:
            return Failure(
                failure.category,
                f"same code as attempt {attempt.cycle_of}, which failed: {failure.evidence}",
            )
    if verdict is None:
        return Failure("", "not evaluated: the run ended before this attempt was evaluated")
    if not verdict.passed:
        category = verdict.category.value if verdict.category else Category.RUNTIME.value
        checks = _contract_checks(verdict.checks) if verdict.failed_layer == "contract" else []
        failed = [check.detail or check.name for check in checks if not check.passed]
        return Failure(category, verdict.evidence, failed)
    if attempt.judge is not None and not attempt.judge.passed:
        return Failure(Category.SEMANTIC.value, "the judge rejected the result")
    return None


def layer_rows(state: RunState, attempt: Attempt) -> list[LayerRow]:
    rows = [_execution_row(attempt)]
    rows.append(_contract_row(attempt, reached=rows[-1].result == "passed"))
    rows.append(_tests_row(state, attempt, reached=rows[-1].result == "passed"))
    reached = rows[-1].result in {"passed", "not applicable"} and rows[1].result == "passed"
    rows.append(_judge_row(state, attempt, reached=reached))
    return rows


def _execution_row(attempt: Attempt) -> LayerRow:
    verdict = attempt.verdict
    if attempt.cycle_of is not None and attempt.execution is None:
        return LayerRow(
            "execution", "not reached", f"same code as attempt {attempt.cycle_of}: not run again"
        )
    if attempt.execution is None and verdict is not None and verdict.failed_layer == "execution":
        # generate rejects an answer that does not parse before anything runs
        return LayerRow("execution", "failed", _cut(f"not run: {verdict.evidence}"))
    if attempt.execution is None:
        return LayerRow("execution", "not reached", "the run ended before it was executed")
    failing = [check.detail for check in evaluate_execution(attempt.execution) if not check.passed]
    if failing:
        return LayerRow("execution", "failed", _cut("; ".join(failing)))
    took = text.duration(attempt.execution.duration_ms)
    return LayerRow("execution", "passed", f"exit code 0 in {took}")


def _contract_row(attempt: Attempt, *, reached: bool) -> LayerRow:
    if not reached or attempt.verdict is None:
        return LayerRow("contract", "not reached", "")
    checks = _contract_checks(attempt.verdict.checks)
    failing = [check.detail or check.name for check in checks if not check.passed]
    if failing:
        summary = f"{len(failing)} of {len(checks)} checks failed: {failing[0]}"
        return LayerRow("contract", "failed", _cut(summary))
    if not checks:
        return LayerRow("contract", "passed", "no artifacts or stdout expected")
    return LayerRow("contract", "passed", f"{len(checks)} checks passed")


def _tests_row(state: RunState, attempt: Attempt, *, reached: bool) -> LayerRow:
    if not state.tests:
        return LayerRow("tests", "not applicable", "the spec has no tests")
    check = _named(attempt.verdict.checks if attempt.verdict else [], TESTS_CHECK)
    if not reached or check is None:
        return LayerRow("tests", "not reached", "")
    return LayerRow("tests", "passed" if check.passed else "failed", _cut(check.detail))


def _judge_row(state: RunState, attempt: Attempt, *, reached: bool) -> LayerRow:
    if not state.spec.judge:
        return LayerRow("judge", "not applicable", "the judge is off in the spec")
    judge = attempt.judge
    if not reached or judge is None:
        return LayerRow("judge", "not reached", "")
    if judge.passed:
        return LayerRow("judge", "passed", "the result does what was asked")
    unmet = "; ".join(judge.unmet_criteria)
    return LayerRow("judge", "failed", _cut(f"unmet: {unmet}" if unmet else judge.reasoning))


def _contract_checks(checks: list[Check]) -> list[Check]:
    layered = _EXECUTION_CHECKS | {TESTS_CHECK, JUDGE_CHECK}
    return [check for check in checks if check.name not in layered]


def _named(checks: list[Check], name: str) -> Check | None:
    return next((check for check in checks if check.name == name), None)


def _cut(detail: str) -> str:
    detail = " ".join(detail.split())
    return detail if len(detail) <= DETAIL_CHARS else detail[: DETAIL_CHARS - 1] + "…"
