"""The RUN that `selfcorrect show` and `selfcorrect view` take: a run id (or the start of
one) in the history, or a path to a run.json or to the folder that holds it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.errors import UsageError
from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.history.entry import SOURCE_IMPORT, HistoryEntry, entry_for
from selfcorrect_action.history.folders import folder_artifacts, read_run
from selfcorrect_action.history.location import ENV_HISTORY
from selfcorrect_action.history.store import HistoryStore
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report.run_json import RUN_JSON, load_run_json

NO_HISTORY_HINT = (f"pass --history DIR or set {ENV_HISTORY} (the default, under "
                   "$XDG_DATA_HOME or ~/.local/share, needs HOME)")


@dataclass(frozen=True)
class FoundRun:
    state: RunState
    entry: HistoryEntry  # from the history, or made from the file for a path
    artifacts: tuple[KeptArtifact, ...]
    in_history: bool


def need_history(folder: Path | None) -> Path:
    if folder is None:
        raise UsageError("no run history is configured", hint=NO_HISTORY_HINT)
    return folder


def find_run(ref: str, folder: Path | None, *, secrets: Sequence[str]) -> FoundRun:
    path = Path(ref)
    if path.exists():
        file = path / RUN_JSON if path.is_dir() else path
        state, _ = read_run(file)
        entry = entry_for(state, source=SOURCE_IMPORT, location=str(file.parent.resolve()))
        return FoundRun(state, entry, folder_artifacts(file.parent, state, secrets=secrets),
                        in_history=False)
    with HistoryStore(need_history(folder), create=False) as store:
        entry = store.find(ref)
        text, artifacts = store.run_json(entry.run_id), store.artifacts(entry.run_id)
    try:
        state = load_run_json(text)
    except UsageError as exc:
        raise UsageError(f"run {entry.run_id} in the history: {exc.message}",
                         hint=exc.hint) from exc
    return FoundRun(state, entry, artifacts, in_history=True)
