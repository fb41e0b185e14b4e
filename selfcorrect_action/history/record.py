"""Recording a finished run in the history: the one call runs/pipeline.py makes, and the one
`history import` makes for each run.json it reads."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.history.entry import HistoryEntry, entry_for
from selfcorrect_action.history.store import HistoryStore
from selfcorrect_action.loop.state import RunState


def record_run(folder: Path, state: RunState, *, run_json: str,
               artifacts: Sequence[KeptArtifact] = (), source: str, location: str
               ) -> HistoryEntry:
    """`run_json` is the run's report as written (redacted): what the history keeps."""
    entry = entry_for(state, source=source, location=location)
    with HistoryStore(folder) as store:
        store.record(entry, run_json, artifacts)
    return entry
