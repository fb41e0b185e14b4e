"""`selfcorrect history`: the runs in the history, newest first, filtered by spec, status and
start; `history import DIR` reads the run.json files a repository holds (the action's record,
.selfcorrect/runs/*/run.json); `history prune --older-than DAYS` forgets old runs."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from selfcorrect_action.commands.run_ref import need_history
from selfcorrect_action.errors import UsageError
from selfcorrect_action.history.entry import SOURCE_IMPORT, HistoryEntry, entry_for, utc_stamp
from selfcorrect_action.history.folders import folder_artifacts, read_run, run_files
from selfcorrect_action.history.location import database
from selfcorrect_action.history.store import HistoryStore, Query
from selfcorrect_action.templating import render, terminal_safe

MAX_PRUNE_DAYS = 100 * 365


def list_runs(folder: Path | None, query: Query, *, as_json: bool) -> int:
    where = need_history(folder)
    entries: list[HistoryEntry] = []
    if database(where).is_file():
        with HistoryStore(where, create=False) as store:
            entries = store.entries(query)
    if as_json:
        print(json.dumps({"history": str(database(where)),
                          "runs": [entry_json(entry) for entry in entries]}, indent=2))
    else:
        print(render("reports/history.txt.j2", entries=entries, path=database(where),
                     filtered=query != Query()), end="")
    return 0


def entry_json(entry: HistoryEntry) -> dict[str, object]:
    return {**asdict(entry), "cost_usd": round(entry.cost_usd, 6) if entry.cost_known else None}


def import_runs(folder: Path | None, source: Path, *, secrets: Sequence[str]) -> int:
    """Every run.json under `source` into the history; a run already there is kept as it
    is (recorded by the run itself, it has every attempt's pictures). 1 if any file was
    not a run this selfcorrect reads."""
    files = run_files(source)
    if not files:
        raise UsageError(f"{source}: no run.json found (looked for .selfcorrect/runs/*/"
                         "run.json, */run.json and run.json)",
                         hint="name a repository checkout, its .selfcorrect/runs folder, or "
                         "a `selfcorrect run` output folder")
    counts = {"imported": 0, "already there": 0, "not read": 0}
    with HistoryStore(need_history(folder)) as store:
        for path in files:
            try:
                state, text = read_run(path)
            except UsageError as exc:
                print(f"selfcorrect: skipped: {terminal_safe(exc)}", file=sys.stderr)
                counts["not read"] += 1
                continue
            if store.has(state.run_id):
                counts["already there"] += 1
                continue
            entry = entry_for(state, source=SOURCE_IMPORT, location=str(path.parent.resolve()))
            store.record(entry, text, folder_artifacts(path.parent, state, secrets=secrets))
            counts["imported"] += 1
            print(f"imported {terminal_safe(entry.run_id)}: {entry.status}, "
                  f"{terminal_safe(entry.spec)}")
        path = store.path
    summary = ", ".join(f"{count} {what}" for what, count in counts.items() if count)
    print(f"{summary} (of {len(files)} run.json) in {path}")
    return 1 if counts["not read"] else 0


def prune_runs(folder: Path | None, older_than_days: int, *, now: datetime | None = None
               ) -> int:
    if not 0 <= older_than_days <= MAX_PRUNE_DAYS:
        raise UsageError(f"--older-than: expected days from 0 to {MAX_PRUNE_DAYS}, got "
                         f"{older_than_days}", hint="for example --older-than 30")
    where = need_history(folder)
    if not database(where).is_file():
        print(f"no run history at {database(where)}: nothing to prune")
        return 0
    cutoff = utc_stamp(((now or datetime.now(UTC)) - timedelta(days=older_than_days))
                       .isoformat())
    with HistoryStore(where, create=False) as store:
        gone = store.prune(cutoff)
        left = len(store.entries())
    print(f"forgot {gone} run{'s' * (gone != 1)} started before {cutoff} UTC; {left} left in "
          f"{database(where)}")
    return 0


def since_stamp(raw: str) -> str:
    """--since: a date (2026-01-31, from its start in UTC) or a time (2026-01-31T14:00,
    UTC unless it names its zone)."""
    stamp = utc_stamp(raw.strip())
    if not stamp:
        raise UsageError(f"--since: expected a date like 2026-01-31 or a time like "
                         f"2026-01-31T14:00, got {raw!r}")
    return stamp
