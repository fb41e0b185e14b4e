"""Temperature per attempt in the small profile, and a repeat at temperature 0 that is not
yet a cycle."""

from __future__ import annotations

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.sampling import redraw_temperature, repeats, temperature_for
from selfcorrect_action.loop.state import Attempt, RunState, Strategy
from selfcorrect_action.loop.strategy import RetryBudget, next_step_after
from selfcorrect_action.records import evolve
from selfcorrect_action.spec import TaskSpec
from selfcorrect_action.taxonomy import Category, Verdict


def attempt(index: int, category: Category, *, cycle_of: int | None = None,
            temperature: float | None = 0.0) -> Attempt:
    return Attempt(index=index, strategy=Strategy.INITIAL if index == 1 else Strategy.PATCH,
                   tier="cheap", model="m", code=f"x = {index}", code_sha=str(index),
                   cycle_of=cycle_of, temperature=temperature,
                   verdict=Verdict(passed=False, failed_layer="execution", category=category,
                                   evidence="e"))


def state(profile: str, attempts: list[Attempt]) -> RunState:
    spec = TaskSpec(prompt="p")
    base = RunState(run_id="r", started_at="t", spec_source="s", spec=spec, output_name="m.py",
                    contract=spec.contract, models=ModelTiers())
    return evolve(base, {"profile": profile, "attempts": attempts})


def test_the_small_profile_starts_at_zero_and_warms_on_each_same_failure() -> None:
    assert temperature_for(state("small", [])) == 0.0
    one = [attempt(1, Category.SYNTAX)]
    assert temperature_for(state("small", one)) == 0.0
    two = [*one, attempt(2, Category.SYNTAX)]
    assert temperature_for(state("small", two)) == 0.35
    three = [*two, attempt(3, Category.SYNTAX)]
    assert temperature_for(state("small", three)) == 0.7
    four = [*three, attempt(4, Category.SYNTAX)]
    assert temperature_for(state("small", four)) == 0.8  # the ceiling
    moved = [*two, attempt(3, Category.RUNTIME)]
    assert temperature_for(state("small", moved)) == 0.0  # a new failure: its best guess


def test_the_standard_profile_leaves_the_temperature_to_the_model() -> None:
    assert temperature_for(state("standard", [attempt(1, Category.SYNTAX)] * 3)) is None


def test_a_repeat_counts_whatever_its_category() -> None:
    assert repeats([attempt(1, Category.SYNTAX), attempt(2, Category.RUNTIME, cycle_of=1)]) == 1


def test_a_repeat_at_temperature_zero_warms_up_instead_of_escalating() -> None:
    budget, used = RetryBudget(3, 2), RetryBudget(1, 0)
    cold = [attempt(1, Category.RUNTIME), attempt(2, Category.RUNTIME, cycle_of=1)]
    decision = next_step_after(cold, budget, used)
    assert decision.next_step is not None and decision.next_step.tier == "cheap"
    warm = [attempt(1, Category.RUNTIME),
            attempt(2, Category.RUNTIME, cycle_of=1, temperature=0.7)]
    decision = next_step_after(warm, budget, used)
    assert decision.next_step is not None and decision.next_step.tier == "strong"
    assert "same code as before" in decision.next_step.reason


def test_each_redraw_is_a_step_warmer_than_the_answer_it_replaces() -> None:
    assert [redraw_temperature(0.0, draw) for draw in (1, 2)] == [0.35, 0.7]
    assert redraw_temperature(0.7, 1) == 0.8  # the ceiling
    assert redraw_temperature(None, 1) == 0.35  # the model's default: start from cold
