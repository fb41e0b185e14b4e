"""Both orchestrators over the same tests (issue 23): the plain loop and the LangGraph graph
of the same steps must end every run the same way, in run.json as a whole."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from selfcorrect_action.loop import orchestrator

ORCHESTRATORS = ["plain", "langgraph"]
# What differs between two runs of the same task whoever drives them: ids, clock times,
# measured durations, which orchestrator it was, and which interpreter started the script:
# whether the pool had a warm one ready, what it had preloaded (chosen from whichever script
# ran before in that sandbox) and its memory are the sandbox's history, not the run's.
UNCOMPARED = frozenset({"run_id", "started_at", "finished_at", "orchestrator", "start",
                        "start_note", "preloaded", "warm_rss_kb"})
# ...and, in what a script printed, where its objects were in memory ("<HTTPSConnection
# object at 0x7fafa825fc10>") and the seconds things took ("5 passed in 0.14s"): no two
# runs share them.
MEASURED = re.compile(r"\b0x[0-9a-f]{8,}\b|\b\d+\.\d+s\b")


def use_orchestrator(name: str, module: ModuleType, monkeypatch: pytest.MonkeyPatch,
                     checkpoints: Path) -> None:
    """Make `module`'s `run_loop` drive its runs with orchestrator `name` (LangGraph's
    checkpointing every step to the SQLite file `checkpoints`)."""
    if name == "langgraph":
        from selfcorrect_action.orchestrators.langgraph import GraphOrchestrator

        drive = GraphOrchestrator(checkpoints=checkpoints)
        monkeypatch.setattr(module, "run_loop",
                            functools.partial(orchestrator.run_loop, drive=drive))


def comparable(data: Any) -> Any:
    """A run.json (as loaded JSON) without what UNCOMPARED names, every `*_ms` field, and
    what MEASURED matches."""
    if isinstance(data, dict):
        return {key: comparable(value) for key, value in data.items()
                if key not in UNCOMPARED and not key.endswith("_ms")}
    if isinstance(data, list):
        return [comparable(item) for item in data]
    if isinstance(data, str):
        return MEASURED.sub("…", data)
    return data
