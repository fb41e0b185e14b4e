"""Which orchestrator drives a run's steps (the `orchestrator` setting, issue 23), checked
before anything is spent: LangGraph installed. The steps, the reports and the way a run is
resumed (runs/resume.py) are the same whichever it is; LangGraph's keeps its own SQLite
checkpoint of every finished step as well."""

from __future__ import annotations

from collections.abc import Callable

from selfcorrect_action.loop.orchestrator import Step
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.runs.settings import RunSettings


def check_orchestrator(settings: RunSettings) -> None:
    if settings.orchestrator == "langgraph":
        from selfcorrect_action.orchestrators import require_langgraph

        require_langgraph("--orchestrator langgraph")


def drive_for(settings: RunSettings, state: RunState,
              say: Callable[[str, str], None]) -> Step | None:
    """The orchestrator for loop.orchestrator.run_loop; None: its own plain loop."""
    if settings.orchestrator == "plain":
        return None
    from selfcorrect_action.orchestrators.langgraph import GraphOrchestrator

    path = settings.checkpoints_file
    if path is not None:
        say("graph", f"LangGraph saves each finished step in {path} as well")
    return GraphOrchestrator(checkpoints=path)
