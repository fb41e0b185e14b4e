"""Every branch of reflect's decision table."""

from __future__ import annotations

import pytest

from selfcorrect_action.loop.state import Attempt, Progress, Status, Strategy
from selfcorrect_action.loop.strategy import (
    DEFAULT_STRATEGY,
    RetryBudget,
    next_step_after,
    stalls,
    strategy_for,
)
from selfcorrect_action.taxonomy import Category, Verdict

ROOMY = RetryBudget(patch_attempts=3, rethink_attempts=2)
NONE_USED = RetryBudget(0, 0)


def attempt(
    index: int,
    category: Category = Category.RUNTIME,
    *,
    strategy: Strategy = Strategy.PATCH,
    progress: tuple[int, int, int] = (0, 0, 0),
    tier: str = "cheap",
    cycle_of: int | None = None,
) -> Attempt:
    layer, tests, checks = progress
    return Attempt(
        index=index,
        strategy=Strategy.INITIAL if index == 1 else strategy,
        tier=tier,  # type: ignore[arg-type]
        model=f"{tier}-model",
        code=f"code {index}",
        code_sha=f"sha{index}",
        cycle_of=cycle_of,
        verdict=Verdict(passed=False, failed_layer="execution", category=category),
        progress=Progress(layer=layer, tests_passed=tests, checks_passed=checks),
    )


@pytest.mark.parametrize(
    ("category", "expected"),
    [
        (Category.ENVIRONMENT, Strategy.PATCH),
        (Category.SYNTAX, Strategy.PATCH),
        (Category.RUNTIME, Strategy.PATCH),
        (Category.RESOURCE, Strategy.RETHINK),
        (Category.EXTERNAL, Strategy.RETHINK),
        (Category.CONTRACT, Strategy.PATCH),
        (Category.SEMANTIC, Strategy.RETHINK),
    ],
)
def test_each_category_has_its_default(category: Category, expected: Strategy) -> None:
    assert strategy_for(category, [attempt(1, category)]) is expected
    decision = next_step_after([attempt(1, category)], ROOMY, NONE_USED)
    assert decision.next_step is not None
    assert decision.next_step.strategy is expected
    assert decision.next_step.tier == "cheap"


def test_every_category_is_in_the_table() -> None:
    assert set(DEFAULT_STRATEGY) == set(Category)


def test_contract_is_patched_then_rethought() -> None:
    history = [
        attempt(1, Category.CONTRACT, progress=(1, 0, 1)),
        attempt(2, Category.CONTRACT, strategy=Strategy.PATCH, progress=(1, 0, 2)),
    ]
    assert strategy_for(Category.CONTRACT, history[:1]) is Strategy.PATCH
    assert strategy_for(Category.CONTRACT, history) is Strategy.RETHINK


def test_contract_after_a_rethink_is_patched_again() -> None:
    history = [
        attempt(1, Category.CONTRACT, progress=(1, 0, 1)),
        attempt(2, Category.CONTRACT, strategy=Strategy.RETHINK, progress=(1, 0, 2)),
    ]
    assert strategy_for(Category.CONTRACT, history) is Strategy.PATCH


def test_patch_repairs_the_latest_attempt_when_it_progressed() -> None:
    history = [attempt(1, progress=(0, 0, 0)), attempt(2, progress=(1, 0, 0))]
    step = next_step_after(history, ROOMY, RetryBudget(1, 0)).next_step
    assert step is not None and step.base_attempt == 2


def test_a_regression_restarts_from_the_best_attempt() -> None:
    history = [
        attempt(1, Category.CONTRACT, progress=(1, 2, 1)),
        attempt(2, Category.RUNTIME, progress=(0, 0, 0)),
    ]
    step = next_step_after(history, ROOMY, RetryBudget(1, 0)).next_step
    assert step is not None
    assert step.base_attempt == 1
    assert "restarting from attempt 1" in step.reason


def test_rethink_starts_from_scratch() -> None:
    step = next_step_after([attempt(1, Category.RESOURCE)], ROOMY, NONE_USED).next_step
    assert step is not None and step.base_attempt is None


def test_patch_budget_spent_falls_back_to_rethink() -> None:
    history = [attempt(1), attempt(2, progress=(1, 0, 0))]
    decision = next_step_after(history, ROOMY, RetryBudget(3, 0))
    assert decision.next_step is not None
    assert decision.next_step.strategy is Strategy.RETHINK


def test_rethink_budget_spent_falls_back_to_patch() -> None:
    decision = next_step_after([attempt(1, Category.RESOURCE)], ROOMY, RetryBudget(0, 2))
    assert decision.next_step is not None
    assert decision.next_step.strategy is Strategy.PATCH


def test_both_budgets_spent_is_exhausted() -> None:
    decision = next_step_after([attempt(1)], ROOMY, RetryBudget(3, 2))
    assert decision.next_step is None
    assert decision.status is Status.EXHAUSTED
    assert "3/3 patches" in decision.reason and "2/2 rethinks" in decision.reason


def test_zero_budgets_exhaust_after_the_first_attempt() -> None:
    decision = next_step_after([attempt(1)], RetryBudget(0, 0), NONE_USED)
    assert decision.status is Status.EXHAUSTED


def test_stalls_count_attempts_without_progress() -> None:
    assert stalls([attempt(1, progress=(1, 0, 0))]) == 0
    assert stalls([attempt(1, progress=(1, 0, 0)), attempt(2, progress=(1, 0, 0))]) == 1
    assert stalls([attempt(1, progress=(1, 0, 0)), attempt(2, progress=(0, 0, 0)),
                   attempt(3, progress=(1, 0, 0))]) == 2
    assert stalls([attempt(1, progress=(1, 0, 0)), attempt(2, progress=(0, 0, 0)),
                   attempt(3, progress=(1, 1, 0))]) == 0


def test_no_progress_twice_escalates_to_the_strong_model() -> None:
    history = [attempt(1, progress=(1, 0, 0)), attempt(2, progress=(1, 0, 0)),
               attempt(3, progress=(0, 0, 0))]
    step = next_step_after(history, ROOMY, RetryBudget(2, 0)).next_step
    assert step is not None and step.tier == "strong"
    assert "no progress" in step.reason


def test_one_stall_does_not_escalate() -> None:
    history = [attempt(1, progress=(1, 0, 0)), attempt(2, progress=(1, 0, 0))]
    step = next_step_after(history, ROOMY, RetryBudget(1, 0)).next_step
    assert step is not None and step.tier == "cheap"


def test_a_cycle_escalates_at_once() -> None:
    history = [attempt(1, progress=(1, 0, 0)), attempt(2, progress=(1, 0, 0), cycle_of=1)]
    step = next_step_after(history, ROOMY, RetryBudget(1, 0)).next_step
    assert step is not None and step.tier == "strong"
    assert "same code" in step.reason


def test_a_cycle_after_escalating_stops() -> None:
    history = [attempt(1), attempt(2, tier="strong", cycle_of=1)]
    decision = next_step_after(history, ROOMY, RetryBudget(1, 0))
    assert decision.status is Status.STOPPED
    assert "repeated attempt 1" in decision.reason


def test_no_progress_twice_after_escalating_stops() -> None:
    history = [
        attempt(1, progress=(1, 0, 0)), attempt(2, progress=(1, 0, 0)),
        attempt(3, progress=(1, 0, 0)),
        attempt(4, tier="strong", progress=(1, 0, 0)),
        attempt(5, tier="strong", progress=(1, 0, 0)),
    ]
    decision = next_step_after(history, RetryBudget(9, 9), RetryBudget(4, 0))
    assert decision.status is Status.STOPPED
    assert "no progress" in decision.reason


def test_escalation_is_sticky_while_progressing() -> None:
    history = [attempt(1, progress=(0, 0, 0)), attempt(2, tier="strong", progress=(1, 0, 0))]
    step = next_step_after(history, ROOMY, RetryBudget(1, 0)).next_step
    assert step is not None and step.tier == "strong"


def test_progress_after_escalating_resets_the_stall_count() -> None:
    history = [
        attempt(1, progress=(1, 0, 0)), attempt(2, progress=(1, 0, 0)),
        attempt(3, progress=(1, 0, 0)),
        attempt(4, tier="strong", progress=(1, 1, 0)),
        attempt(5, tier="strong", progress=(1, 1, 0)),
    ]
    decision = next_step_after(history, RetryBudget(9, 9), RetryBudget(4, 0))
    assert decision.status is Status.RUNNING


def test_more_budget_starts_the_stall_window_again_from_the_attempt_continued_from() -> None:
    """Issue 37: a run stopped for lack of progress (even with the strong model) and given
    more attempts goes on from attempt 5, executed again: two stalls before it do not
    stop it at once; two more after it do."""
    history = [
        attempt(1, progress=(1, 0, 0)), attempt(2, progress=(1, 0, 0)),
        attempt(3, progress=(1, 0, 0)),
        attempt(4, tier="strong", progress=(1, 0, 0)),
        attempt(5, tier="strong", progress=(1, 0, 0)),
    ]
    assert stalls(history) == 2 and stalls(history, since=5) == 0
    decision = next_step_after(history, RetryBudget(9, 9), RetryBudget(4, 0), since=5)
    assert decision.status is Status.RUNNING and decision.next_step is not None
    assert decision.next_step.tier == "strong"  # escalated before: stays so
    later = [*history, attempt(6, tier="strong", progress=(1, 0, 0)),
             attempt(7, tier="strong", progress=(1, 0, 0))]
    assert next_step_after(later, RetryBudget(9, 9), RetryBudget(6, 0),
                           since=5).status is Status.STOPPED
