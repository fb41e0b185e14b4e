"""Each layer's row in an attempt's verdict table, and the failure an attempt ended with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selfcorrect_action.loop.state import JudgeOutcome, RunState, Strategy
from selfcorrect_action.report.layers import attempt_failure, layer_rows
from selfcorrect_action.taxonomy import TestOutcome

from .runs import FIXED_CODE, add_attempt, base_state, chart_png, result

FAILING_TEST = TestOutcome(
    test_id="test_sales.py::test_totals_per_month",
    outcome="failed",
    message="assert {'2024-01': 7.0} == {'2024-01': 7}",
)


def one_attempt(tmp_path: Path, state: RunState | None = None, **fields: Any) -> RunState:
    execution = result(stdout="Total: 7\n", artifacts=[chart_png(tmp_path)])
    return add_attempt(
        state or base_state(), FIXED_CODE, execution, strategy=Strategy.INITIAL, **fields
    )


def rows(state: RunState) -> list[tuple[str, str, str]]:
    return [(r.layer, r.result, r.detail) for r in layer_rows(state, state.attempts[-1])]


def test_failing_tests_fail_the_tests_layer(tmp_path: Path) -> None:
    state = one_attempt(tmp_path, tests=[FAILING_TEST])

    assert rows(state) == [
        ("execution", "passed", "exit code 0 in 2.3 s"),
        ("contract", "passed", "4 checks passed"),
        ("tests", "failed", "0 passed, 1 failed"),
        ("judge", "not reached", ""),
    ]
    failure = attempt_failure(state, state.attempts[-1])
    assert failure is not None and failure.category == "runtime"


def test_a_judge_rejection_fails_the_judge_layer(tmp_path: Path) -> None:
    judge = JudgeOutcome(
        passed=False, reasoning="It plots days, not months.", unmet_criteria=["one point per month"]
    )
    state = one_attempt(
        tmp_path, tests=[FAILING_TEST.model_copy(update={"outcome": "passed"})], judge=judge
    )

    assert rows(state)[2:] == [
        ("tests", "passed", "1 passed"),
        ("judge", "failed", "unmet: one point per month"),
    ]
    failure = attempt_failure(state, state.attempts[-1])
    assert failure is not None and failure.category == "semantic"


def test_layers_the_spec_turned_off_are_not_applicable(tmp_path: Path) -> None:
    base = base_state(tests={})
    base = base.model_copy(update={"spec": base.spec.model_copy(update={"judge": False})})
    state = one_attempt(tmp_path, base)

    assert rows(state)[2:] == [
        ("tests", "not applicable", "the spec has no tests"),
        ("judge", "not applicable", "the judge is off in the spec"),
    ]
    assert attempt_failure(state, state.attempts[-1]) is None


def test_an_unevaluated_attempt_is_not_a_pass() -> None:
    state = add_attempt(base_state(), "", None, strategy=Strategy.INITIAL)

    assert [r[1] for r in rows(state)] == ["not reached"] * 4
    failure = attempt_failure(state, state.attempts[-1])
    assert failure is not None and failure.evidence.startswith("not evaluated")
