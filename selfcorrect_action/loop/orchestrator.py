"""The one orchestrator: plan once, then generate → execute → evaluate → reflect until the
state stops running. Infrastructure failures (sandbox, LLM API) end the run as `error`
with the reason; everything the run did until then is kept in the state.

A repair (kind repair) runs the same loop with its own steps: a baseline before the plan,
and a review between generate and execute (loop/repair/)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from selfcorrect_action.errors import SelfcorrectError, interrupted_by
from selfcorrect_action.loop.budget import add_call
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.evaluate import evaluate
from selfcorrect_action.loop.execute import execute
from selfcorrect_action.loop.generate import generate
from selfcorrect_action.loop.given import awaits_execution
from selfcorrect_action.loop.plan import plan
from selfcorrect_action.loop.reflect import reflect
from selfcorrect_action.loop.repair.baseline import take_baseline
from selfcorrect_action.loop.repair.evaluate import evaluate_repair
from selfcorrect_action.loop.repair.execute import execute_repair
from selfcorrect_action.loop.repair.generate import generate_repair
from selfcorrect_action.loop.repair.plan import plan_repair
from selfcorrect_action.loop.repair.review import review_change
from selfcorrect_action.loop.state import LLMCall, RunState, Status, end_run
from selfcorrect_action.records import evolve
from selfcorrect_action.templating import shorten

# generate → execute → evaluate → reflect once per attempt; this bounds a buggy decision.
HARD_ATTEMPT_CAP = 40

Step = Callable[[RunState, Deps], RunState]


def unchanged(state: RunState, deps: Deps) -> RunState:
    """The step a kind of task does not have (a script has no baseline and no review)."""
    return state


@dataclass(frozen=True)
class Steps:
    """The steps a kind of task runs, in the orchestrator's order."""

    prepare: Step  # before the plan, once
    plan: Step
    generate: Step
    review: Step  # between generate and execute
    execute: Step
    evaluate: Step


SCRIPT_STEPS = Steps(unchanged, plan, generate, unchanged, execute, evaluate)
REPAIR_STEPS = Steps(take_baseline, plan_repair, generate_repair, review_change,
                     execute_repair, evaluate_repair)


def steps_for(state: RunState) -> Steps:
    return REPAIR_STEPS if state.spec.kind == "repair" else SCRIPT_STEPS


def _with_unrecorded_calls(state: RunState, made: list[LLMCall], before: int) -> RunState:
    """Usage that also counts the calls an interrupted step made but could not record:
    `made` are this run's calls in order, of which the state holds the first
    `usage.llm_calls - before`."""
    usage = state.usage
    for call in made[usage.llm_calls - before:]:
        usage = add_call(usage, call)
    return evolve(state, {"usage": usage})


def attempt_cap(state: RunState) -> int:
    """How many attempts a run may make: its budget's, within the hard cap."""
    return min(state.max_attempts, HARD_ATTEMPT_CAP)


def out_of_attempts(state: RunState) -> RunState:
    return end_run(state, Status.EXHAUSTED, f"all {state.max_attempts} attempts used")


def run_loop(state: RunState, deps: Deps, *, drive: Step | None = None) -> RunState:
    """The run from `state` to its end, its usage and end time settled. `drive` takes the
    state through the steps (this module's loop unless another orchestrator is given:
    orchestrators/langgraph.py); what happens around it is the same for every one."""
    before, ledger_start = state.usage.llm_calls, len(deps.ledger)
    deps.on_step(state)
    state = _retaken(state, deps)
    if state.status is Status.RUNNING:
        state = (drive or _run)(state, deps)
    state = _with_unrecorded_calls(state, deps.ledger[ledger_start:], before)
    state = evolve(state, {"finished_at": deps.now(), "next_step": None})
    # One line: the full reason and its hint are in the summary that follows (both used to
    # print the whole error twice, issue 9).
    deps.on_event("done", f"{state.status.value}: "
                  f"{shorten(state.stop_reason.splitlines()[0] if state.stop_reason else '', 200)}")
    return state


def _retaken(state: RunState, deps: Deps) -> RunState:
    """A resumed repair's baseline, taken again before its attempts go on (loop/resume.py
    clears it: a checkpoint carries answers, not verdicts); for every orchestrator."""
    if state.plan is None or state.repair is None or state.repair.baseline is not None:
        return state
    try:
        deps.check_cancelled()
        state = steps_for(state).prepare(state, deps)
    except (SelfcorrectError, KeyboardInterrupt) as exc:
        return stopped_by(state, exc)
    deps.on_step(state)
    return state


def _run(state: RunState, deps: Deps) -> RunState:
    steps = steps_for(state)

    def step(function: Step, current: RunState) -> RunState:
        after = function(current, deps)
        if after is not current:
            deps.on_step(after)
        return after

    try:
        deps.check_cancelled()
        if state.plan is None:
            state = step(steps.prepare, state)
            if state.status is Status.RUNNING:
                state = step(steps.plan, state)
            deps.on_state(state)
        while state.status is Status.RUNNING:
            # A given attempt not yet run is counted already: it is run, not refused.
            if len(state.attempts) >= attempt_cap(state) and not awaits_execution(state):
                state = out_of_attempts(state)
                deps.on_step(state)
                break
            deps.check_cancelled()
            if not awaits_execution(state):  # given code (a regeneration's) is run as it is
                state = step(steps.generate, state)
            # A repair's change is reviewed before it runs, a resumed one too (once).
            state = step(steps.review, state)
            if state.status is not Status.RUNNING:
                break
            deps.check_cancelled()
            state = step(steps.execute, state)
            state = step(reflect_step, step(steps.evaluate, state))
            deps.on_state(state)
    except (SelfcorrectError, KeyboardInterrupt) as exc:
        state = stopped_by(state, exc)
    return state


def reflect_step(state: RunState, deps: Deps) -> RunState:
    return reflect(state)


def stopped_by(state: RunState, exc: SelfcorrectError | KeyboardInterrupt) -> RunState:
    """The state a run ends with when `exc` stopped it from outside the steps: everything
    done until then is kept."""
    if isinstance(exc, SelfcorrectError):
        # A bad input found mid-run (a replay that does not fit) keeps its usage exit code;
        # everything else that stops a run from outside it is infrastructure (3).
        return evolve(end_run(state, Status.ERROR, str(exc)),
                      {"error_exit_code": 2 if exc.exit_code == 2 else 3})
    # Cancelled, not failed: the caller writes the reports, then exits 130 or 143, so the
    # tokens spent are not lost.
    interruption = interrupted_by(exc)
    return evolve(end_run(
        state, Status.CANCELLED,
        f"interrupted by {interruption.described}: the attempts so far are kept in "
        "this report"), {"interrupted_by": interruption.signal_name})
