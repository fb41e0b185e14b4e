"""Which orchestrator drives a run's steps (the `orchestrator` setting, issue 23), checked
before anything is spent: LangGraph installed, a run to resume that can be resumed. The
steps and the reports are the same whichever it is; LangGraph's adds a checkpoint of every
finished step, so an interrupted run can go on (`--resume RUN_ID`)."""

from __future__ import annotations

from collections.abc import Callable

from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.orchestrator import Step
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.runs.settings import RunSettings


def check_orchestrator(settings: RunSettings) -> None:
    if settings.orchestrator == "langgraph":
        from selfcorrect_action.orchestrators import require_langgraph

        require_langgraph("--orchestrator langgraph")
    elif settings.resume is not None:
        raise UsageError("--resume goes on from LangGraph's checkpoints of a run",
                         hint="add --orchestrator langgraph, as the interrupted run had")


def resumed(state: RunState, settings: RunSettings) -> RunState:
    """`state`, a run's first; with --resume, the interrupted run's after its last finished
    step, read from its checkpoints (and checked to be a run of the same task)."""
    if settings.resume is None:
        return state
    path = settings.checkpoints_file
    if path is None:
        raise UsageError("--resume: there is no history folder to find the checkpoints in",
                         hint="pass --checkpoints FILE as the interrupted run had it")
    from selfcorrect_action.orchestrators.checkpoints import resumable

    return resumable(path, settings.resume, state)


def drive_for(settings: RunSettings, state: RunState,
              say: Callable[[str, str], None]) -> Step | None:
    """The orchestrator for loop.orchestrator.run_loop; None: its own plain loop."""
    if settings.orchestrator == "plain":
        return None
    from selfcorrect_action.orchestrators.langgraph import GraphOrchestrator

    path = settings.checkpoints_file
    if path is not None:
        # Said first: a run killed outright (SIGKILL, a lost machine) prints nothing after.
        say("graph", f"run {state.run_id}: each finished step is saved in {path}; "
            f"if the run stops, `--resume {state.run_id}` goes on from there")
    return GraphOrchestrator(checkpoints=path, resume=settings.resume is not None)
