"""The one orchestrator: plan once, then generate → execute → evaluate → reflect until the
state stops running. Infrastructure failures (sandbox, LLM API) end the run as `error`
with the reason; everything the run did until then is kept in the state."""

from __future__ import annotations

from selfcorrect_action.errors import SelfcorrectError, interrupted_by
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.evaluate import evaluate
from selfcorrect_action.loop.execute import execute
from selfcorrect_action.loop.generate import generate
from selfcorrect_action.loop.plan import plan
from selfcorrect_action.loop.reflect import reflect
from selfcorrect_action.loop.state import RunState, Status, end_run
from selfcorrect_action.records import evolve

# generate → execute → evaluate → reflect once per attempt; this bounds a buggy decision.
HARD_ATTEMPT_CAP = 40


def run_loop(state: RunState, deps: Deps) -> RunState:
    try:
        if state.plan is None:
            state = plan(state, deps)
            deps.on_state(state)
        while state.status is Status.RUNNING:
            if len(state.attempts) >= min(state.max_attempts, HARD_ATTEMPT_CAP):
                state = end_run(state, Status.EXHAUSTED,
                                f"all {state.max_attempts} attempts used")
                break
            state = generate(state, deps)
            if state.status is not Status.RUNNING:
                break
            state = reflect(evaluate(execute(state, deps), deps))
            deps.on_state(state)
    except SelfcorrectError as exc:
        # A bad input found mid-run (a replay that does not fit) keeps its usage exit code;
        # everything else that stops a run from outside it is infrastructure (3).
        state = evolve(end_run(state, Status.ERROR, str(exc)),
                       {"error_exit_code": 2 if exc.exit_code == 2 else 3})
    except KeyboardInterrupt as exc:
        # The caller writes the reports, then exits 130 or 143: tokens spent are not lost.
        interruption = interrupted_by(exc)
        state = evolve(end_run(
            state, Status.ERROR,
            f"interrupted by {interruption.described}: the attempts so far are kept in "
            "this report"), {"interrupted_by": interruption.signal_name})
    state = evolve(state, {"finished_at": deps.now(), "next_step": None})
    deps.on_event("done", f"{state.status.value}: {state.stop_reason}")
    return state
