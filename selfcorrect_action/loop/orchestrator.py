"""The one orchestrator: plan once, then generate → execute → evaluate → reflect until the
state stops running. Infrastructure failures (sandbox, LLM API) end the run as `error`
with the reason; everything the run did until then is kept in the state."""

from __future__ import annotations

from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.evaluate import evaluate
from selfcorrect_action.loop.execute import execute
from selfcorrect_action.loop.generate import generate
from selfcorrect_action.loop.plan import plan
from selfcorrect_action.loop.reflect import reflect
from selfcorrect_action.loop.state import RunState, Status

# generate → execute → evaluate → reflect once per attempt; this bounds a buggy decision.
HARD_ATTEMPT_CAP = 40
INTERRUPTED = "interrupted (Ctrl-C): the attempts so far are kept in this report"


def run_loop(state: RunState, deps: Deps) -> RunState:
    try:
        if state.plan is None:
            state = plan(state, deps)
        while state.status is Status.RUNNING:
            if len(state.attempts) >= min(state.max_attempts, HARD_ATTEMPT_CAP):
                state = state.model_copy(update={
                    "status": Status.EXHAUSTED,
                    "stop_reason": f"all {state.max_attempts} attempts used"})
                break
            state = generate(state, deps)
            if state.status is not Status.RUNNING:
                break
            state = reflect(evaluate(execute(state, deps), deps))
    except SelfcorrectError as exc:
        state = state.model_copy(update={"status": Status.ERROR, "stop_reason": str(exc)})
    except KeyboardInterrupt:
        # The caller writes the reports, then exits 130: tokens spent are not lost.
        state = state.model_copy(update={"status": Status.ERROR, "stop_reason": INTERRUPTED})
    state = state.model_copy(update={"finished_at": deps.now(), "next_step": None})
    deps.on_event("done", f"{state.status.value}: {state.stop_reason}")
    return state
