"""The loop's graph as data: the nodes of each kind of task, where each leads, and the steps
a run can still take (LangGraph's recursion bound)."""

from __future__ import annotations

import pytest

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.evaluate import evaluate
from selfcorrect_action.loop.execute import execute
from selfcorrect_action.loop.generate import generate
from selfcorrect_action.loop.orchestrator import REPAIR_STEPS, SCRIPT_STEPS
from selfcorrect_action.loop.plan import plan
from selfcorrect_action.loop.repair.baseline import take_baseline
from selfcorrect_action.loop.repair.review import review_change
from selfcorrect_action.loop.state import PlanRecord, RunState, Status, end_run
from selfcorrect_action.orchestrators.shape import (
    END,
    after,
    first,
    shape_for,
    steps_left,
)
from selfcorrect_action.spec import TaskSpec

SCRIPT = shape_for(SCRIPT_STEPS)
REPAIR = shape_for(REPAIR_STEPS)


def running(*, planned: bool = False) -> RunState:
    spec = TaskSpec(prompt="do the thing")
    return RunState(run_id="r", started_at="t0", spec_source="t.yml", spec=spec,
                    output_name="task.py", contract=spec.contract, models=ModelTiers(),
                    plan=PlanRecord() if planned else None)


def test_a_script_has_no_baseline_and_no_review() -> None:
    assert SCRIPT.nodes == ("plan", "generate", "execute", "evaluate", "reflect")
    assert dict(SCRIPT.steps) == {"plan": plan, "generate": generate, "execute": execute,
                                  "evaluate": evaluate}
    assert SCRIPT.conditional == {"plan", "generate", "reflect"}


def test_a_repair_has_both() -> None:
    assert REPAIR.nodes == ("baseline", "plan", "generate", "review", "execute", "evaluate",
                            "reflect")
    assert REPAIR.steps["baseline"] is take_baseline
    assert REPAIR.steps["review"] is review_change
    assert REPAIR.conditional == {"baseline", "plan", "review", "reflect"}


def test_a_run_starts_at_its_plan_unless_it_has_one() -> None:
    assert first(SCRIPT, running()) == "plan"
    assert first(REPAIR, running()) == "baseline"
    assert first(SCRIPT, running(planned=True)) == "generate"
    assert first(SCRIPT, end_run(running(planned=True), Status.PASSED, "done")) == END


def test_the_run_goes_on_only_while_it_is_running() -> None:
    going, ended = running(), end_run(running(), Status.STOPPED, "no usable answer")
    assert after(SCRIPT, "reflect", going) == "generate"
    assert after(SCRIPT, "reflect", ended) == END
    assert after(SCRIPT, "generate", ended) == END
    assert after(REPAIR, "generate", ended) == "review"  # as the plain loop: review decides
    assert after(REPAIR, "review", ended) == END
    # execute → evaluate → reflect, whatever the status (the plain loop runs all three)
    assert after(SCRIPT, "execute", ended) == "evaluate"
    assert after(SCRIPT, "evaluate", ended) == "reflect"


@pytest.mark.parametrize(("next_node", "attempts", "left"), [
    ("plan", 0, 1 + 3 * 4),
    ("generate", 0, 3 * 4),
    ("generate", 2, 4),
    ("generate", 3, 0),  # the budget is used: not one step more
    ("execute", 2, 3 + 4),  # attempt 2 is in progress: its execute, evaluate and reflect
    ("reflect", 3, 1),
    (END, 1, 0),
])
def test_the_steps_left_are_the_budgets(next_node: str, attempts: int, left: int) -> None:
    assert steps_left(SCRIPT, next_node, attempts=attempts, cap=3) == left


def test_a_repairs_attempt_has_its_review_too() -> None:
    assert steps_left(REPAIR, "baseline", attempts=0, cap=2) == 2 + 2 * 5
    assert steps_left(REPAIR, "review", attempts=1, cap=2) == 4 + 5
