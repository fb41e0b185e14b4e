"""LangGraph's SQLite checkpoints of a run (`--orchestrator langgraph`): one thread per run,
named by its run id, holding the state after each finished step; and reading that state
back to resume an interrupted run (`--resume RUN_ID`).

The file stores RunState's records with LangGraph's serializer, which rebuilds objects by
the module and class names stored with them: only the records a RunState is made of are
rebuilt (an allowlist), so a checkpoint file cannot make the run import anything else.
"""

from __future__ import annotations

import contextlib
import enum
import sqlite3
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver
from pydantic import BaseModel

from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.state import RunState, Status

# A run that ended with one of these can go on from its last finished step (a cancel, a
# signal or an error stopped it from outside; a spent budget or a stall can be given more:
# issue 37): its checkpoints stay. A run that passed removes them.
RESUMABLE = frozenset({Status.RUNNING, Status.CANCELLED, Status.ERROR, Status.EXHAUSTED,
                       Status.STOPPED})
FINDING_RUN_IDS = ("the run id is in the `checkpoints:` line the run printed when it "
                   "started, and in `selfcorrect history`")

__all__ = ["RESUMABLE", "SqliteSaver", "open_checkpoints", "saved_state", "serializer", "thread"]


def thread(run_id: str) -> dict[str, Any]:
    """The LangGraph config naming a run's checkpoints."""
    return {"configurable": {"thread_id": run_id}}


def state_types(model: type[BaseModel] = RunState) -> set[tuple[str, str]]:
    """Every record and enum class a `model` can hold, as (module, name)."""
    found: set[tuple[str, str]] = set()
    pending: list[Any] = [model]
    while pending:
        kind = pending.pop()
        origin = typing.get_origin(kind)
        if origin is not None or isinstance(kind, types.UnionType):
            pending.extend(typing.get_args(kind))
            continue
        if not isinstance(kind, type) or (kind.__module__, kind.__name__) in found:
            continue
        if issubclass(kind, enum.Enum):
            found.add((kind.__module__, kind.__name__))
        elif issubclass(kind, BaseModel):
            found.add((kind.__module__, kind.__name__))
            pending.extend(info.annotation for info in kind.model_fields.values())
    return found


def serializer() -> JsonPlusSerializer:
    return JsonPlusSerializer(allowed_msgpack_modules=sorted(state_types()))


@contextlib.contextmanager
def open_checkpoints(path: Path | None) -> Iterator[SqliteSaver | None]:
    """A saver on the SQLite file `path` (created if missing), or None without a file."""
    if path is None:
        yield None
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(path, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"--checkpoints {path}: cannot open it ({exc})",
                         hint="name a file in a folder you can write") from exc
    # The steps run in this thread; LangGraph writes each step's checkpoint from its own
    # worker, one at a time (durability "sync" waits for it before the next step).
    with contextlib.closing(connection):
        saver = SqliteSaver(connection, serde=serializer())
        saver.setup()
        yield saver


def saved_state(path: Path, run_id: str) -> RunState | None:
    """The state run `run_id` had after its last finished step in the SQLite file `path`;
    None when the file holds no checkpoint of it. What may be resumed from it is
    loop/resume.py's to say, as for any checkpoint."""
    if not path.is_file():
        return None
    with open_checkpoints(path) as saver:
        assert saver is not None
        saved = saver.get_tuple(thread(run_id))  # type: ignore[arg-type]
    if saved is None:
        return None
    values = saved.checkpoint["channel_values"]
    return RunState.model_validate({name: value for name, value in values.items()
                                    if name in RunState.model_fields})
