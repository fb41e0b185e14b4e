"""results.json: every item's result, keyed by run (mode, isolation, runtime, and what it
scored) and item (a task id, or `HumanEval/3#1` for a second sample), written atomically
after each item, so an interrupted run resumes where it stopped.

The functions that decide (what is left to do, how a result merges in) are pure; the store
around them only loads, locks and writes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import write_atomically

SCHEMA_VERSION = 1
KIND = "selfcorrect.bench.humaneval"


class Segment(BaseModel):
    """One invocation's share of a run: how many items it did and in how long."""

    model_config = ConfigDict(extra="forbid")

    started_at: str
    items: int = 0
    wall_s: float = 0.0


class RunRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: str
    settings: dict[str, Any] = Field(default_factory=dict)
    items: dict[str, dict[str, Any]] = Field(default_factory=dict)
    segments: list[Segment] = Field(default_factory=list)
    # Whole-run measurements (the reference harness, the bare container loop, the cheats'
    # control run): the latest invocation's.
    extras: dict[str, Any] = Field(default_factory=dict)


class Results(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    kind: Literal["selfcorrect.bench.humaneval"] = "selfcorrect.bench.humaneval"
    runs: dict[str, RunRecord] = Field(default_factory=dict)


def run_key(mode: str, isolation: str, runtime: str, *detail: str) -> str:
    return "/".join([mode, isolation, runtime, *(part for part in detail if part)])


def todo(items: Iterable[str], results: Results, key: str) -> list[str]:
    """The items of `key` without a result yet, in the given order."""
    done = results.runs[key].items if key in results.runs else {}
    return [item for item in items if item not in done]


def with_item(results: Results, key: str, item: str, record: dict[str, Any]) -> Results:
    """`results` with `record` as item's result in run `key` (replacing an older one)."""
    run = results.runs[key]
    updated = run.model_copy(update={"items": {**run.items, item: record}})
    return results.model_copy(update={"runs": {**results.runs, key: updated}})


def started_run(results: Results, key: str, mode: str, settings: dict[str, Any], *,
                fresh: bool) -> Results:
    """`results` with run `key` ready for another invocation: kept as it was (a resume), or
    empty with --fresh; either way a new segment is opened."""
    run = results.runs.get(key)
    if run is None or fresh:
        run = RunRecord(mode=mode, settings=settings)
    segment = Segment(started_at=datetime.now(UTC).isoformat(timespec="seconds"))
    run = run.model_copy(update={"settings": settings, "segments": [*run.segments, segment]})
    return results.model_copy(update={"runs": {**results.runs, key: run}})


class Store:
    """results.json on disk; safe to call from worker threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results = load(path)
        self._lock = threading.Lock()
        # Each run's JSON, remade only when that run changes: a put after every item must
        # not re-encode every other run in the file (a mutants run holds thousands).
        self._encoded: dict[str, str] = {}

    def start(self, key: str, mode: str, settings: dict[str, Any], *, fresh: bool) -> None:
        with self._lock:
            self.results = started_run(self.results, key, mode, settings, fresh=fresh)
            self._changed(key)
            self._save()

    def put(self, key: str, item: str, record: dict[str, Any]) -> None:
        with self._lock:
            self.results = with_item(self.results, key, item, record)
            self._changed(key)
            self._save()

    def put_extra(self, key: str, name: str, value: Any) -> None:
        with self._lock:
            run = self.results.runs[key]
            run = run.model_copy(update={"extras": {**run.extras, name: value}})
            self.results = self.results.model_copy(
                update={"runs": {**self.results.runs, key: run}})
            self._changed(key)
            self._save()

    def end_segment(self, key: str, items: int, wall_s: float) -> None:
        with self._lock:
            run = self.results.runs[key]
            last = run.segments[-1].model_copy(update={"items": items,
                                                       "wall_s": round(wall_s, 3)})
            run = run.model_copy(update={"segments": [*run.segments[:-1], last]})
            self.results = self.results.model_copy(
                update={"runs": {**self.results.runs, key: run}})
            self._changed(key)
            self._save()

    def run(self, key: str) -> RunRecord:
        with self._lock:
            return self.results.runs[key]

    def _save(self) -> None:
        runs = self.results.runs
        self._encoded = {key: self._encoded.get(key) or runs[key].model_dump_json()
                         for key in runs}
        head = json.dumps({"schema_version": self.results.schema_version,
                           "kind": self.results.kind})[:-1]
        runs_text = ", ".join(f"{json.dumps(key)}: {encoded}"
                              for key, encoded in self._encoded.items())
        text = f'{head}, "runs": {{{runs_text}}}}}'
        write_atomically(self.path, text)

    def _changed(self, key: str) -> None:
        self._encoded.pop(key, None)


def load(path: Path) -> Results:
    if not path.exists():
        return Results()
    try:
        return Results.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        raise UsageError(f"{path}: not a results file of this benchmark ({exc})".splitlines()[0],
                         hint="pass --fresh to start over, or --out a new folder") from exc


def save(path: Path, results: Results) -> None:
    write_atomically(path, results.model_dump_json(indent=1))


def slug(text: str) -> str:
    """`text` as one file or folder name: a model name (openai/gpt-4o-mini) or a run key
    (model/strict/runc/...)."""
    return "".join(char if char.isalnum() or char in "-." else "_" for char in text)[:80]
