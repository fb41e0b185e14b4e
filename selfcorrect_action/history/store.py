"""The history database: one SQLite file (the standard library's sqlite3), its schema
versioned in `PRAGMA user_version` and migrated forward on open, every run written in one
transaction (its row, its run.json and its kept files together or not at all).

sqlite3's errors stop here: whatever goes wrong with the file (locked past the timeout, not a
database, made by a newer selfcorrect, a full disk) is a HistoryError that names the file and
says what to do.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from types import TracebackType
from typing import Any

from selfcorrect_action.errors import UsageError
from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.history.entry import HistoryEntry
from selfcorrect_action.history.location import database

LOCK_TIMEOUT_S = 30.0  # a benchmark's parallel runs each record at their end
MIN_PREFIX = 4


def _cancelled_runs(db: sqlite3.Connection) -> None:
    """Runs recorded as `error` that a cancel or a signal stopped are `cancelled` (issue 34:
    run.json schema 8). Only their run.json tells which: SQLite cannot read it, so Python
    does; a run.json that does not read stays as it was recorded."""
    rows = db.execute("SELECT run_id, run_json FROM runs WHERE status = 'error'")
    cancelled = [(run_id,) for run_id, blob in rows if _interrupted(blob)]  # one at a time
    db.executemany("UPDATE runs SET status = 'cancelled' WHERE run_id = ?", cancelled)


def _interrupted(blob: bytes) -> bool:
    try:
        data = json.loads(zlib.decompress(blob))
    except (zlib.error, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get("interrupted_by"))


Statement = str | Callable[[sqlite3.Connection], None]
# Each step takes the schema from its index to the next; user_version counts the steps
# applied. Append a step for a change, never edit one that shipped. A step is SQL, or a
# function for what SQL cannot do (read a compressed run.json).
MIGRATIONS: tuple[tuple[Statement, ...], ...] = (
    (
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL, started_utc TEXT NOT NULL,
            finished_at TEXT NOT NULL, status TEXT NOT NULL, spec TEXT NOT NULL,
            title TEXT NOT NULL, attempts INTEGER NOT NULL, max_attempts INTEGER NOT NULL,
            tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, cost_known INTEGER NOT NULL,
            replayed INTEGER NOT NULL, repository TEXT NOT NULL, visibility TEXT NOT NULL,
            source TEXT NOT NULL, location TEXT NOT NULL, recorded_at TEXT NOT NULL,
            run_json BLOB NOT NULL)""",
        "CREATE INDEX runs_by_start ON runs (started_utc)",
        """CREATE TABLE artifacts (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            attempt INTEGER NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL,
            size INTEGER NOT NULL, note TEXT NOT NULL, data BLOB NOT NULL,
            PRIMARY KEY (run_id, attempt, path))""",
    ),
    (_cancelled_runs,),
)
ENTRY_COLUMNS = tuple(field.name for field in fields(HistoryEntry))


class HistoryError(UsageError):
    """The history cannot be read or written, or has no such run."""


@dataclass(frozen=True)
class Query:
    spec: str | None = None  # part of the spec's source
    status: str | None = None
    since_utc: str | None = None  # "YYYY-MM-DDTHH:MM:SS"


class HistoryStore:
    """`with HistoryStore(folder) as store:` opens (and creates, unless `create=False`) the
    database under `folder`, brought to the current schema."""

    def __init__(self, folder: Path, *, create: bool = True) -> None:
        self.folder = folder
        self.path = database(folder)
        self._create = create
        self._db: sqlite3.Connection | None = None

    def __enter__(self) -> HistoryStore:
        if not self._create and not self.path.is_file():
            raise HistoryError(f"no run history at {self.path} yet",
                               hint="runs are recorded there as they end; or import a "
                               "repository's with `selfcorrect history import DIR`")
        with self._translated("open"):
            self.folder.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: transactions are begun and ended here, explicitly.
            db = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S, isolation_level=None)
            try:
                db.execute("PRAGMA foreign_keys = ON")
                migrate(db, self.path)
            except BaseException:
                db.close()
                raise
        self._db = db
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def record(self, entry: HistoryEntry, run_json: str,
               artifacts: Sequence[KeptArtifact] = ()) -> None:
        """The run, replacing any earlier record of the same run id, in one transaction."""
        row = [getattr(entry, name) for name in ENTRY_COLUMNS]
        with self._transaction("record a run") as db:
            db.execute("DELETE FROM artifacts WHERE run_id = ?", (entry.run_id,))
            db.execute("DELETE FROM runs WHERE run_id = ?", (entry.run_id,))
            db.execute(f"INSERT INTO runs ({', '.join(ENTRY_COLUMNS)}, run_json) VALUES "
                       f"({', '.join('?' * (len(row) + 1))})",
                       (*row, zlib.compress(run_json.encode())))
            db.executemany(
                "INSERT OR REPLACE INTO artifacts (run_id, attempt, path, kind, size, note, "
                "data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(entry.run_id, a.attempt, a.path, a.kind, a.size, a.note, a.data)
                 for a in artifacts])

    def entries(self, query: Query | None = None) -> list[HistoryEntry]:
        """The runs that match, newest first."""
        query = query or Query()
        where, values = ["1 = 1"], []
        if query.spec:
            where.append("instr(spec, ?) > 0")
            values.append(query.spec)
        if query.status:
            where.append("status = ?")
            values.append(query.status)
        if query.since_utc:
            where.append("started_utc >= ?")
            values.append(query.since_utc)
        sql = (f"SELECT {', '.join(ENTRY_COLUMNS)} FROM runs WHERE {' AND '.join(where)} "
               "ORDER BY started_utc DESC, run_id")
        with self._translated("read"):
            return [_entry(row) for row in self._opened().execute(sql, values)]

    def find(self, run: str) -> HistoryEntry:
        """The run whose id is `run`, or the one run whose id starts with it."""
        with self._translated("read"):
            rows = self._opened().execute(
                f"SELECT {', '.join(ENTRY_COLUMNS)} FROM runs WHERE run_id = ? OR "
                "(length(?) >= ? AND substr(run_id, 1, length(?)) = ?) LIMIT 3",
                (run, run, MIN_PREFIX, run, run)).fetchall()
        exact = [row for row in rows if row[0] == run]
        if exact or len(rows) == 1:
            return _entry((exact or rows)[0])
        if rows:
            raise HistoryError(f"{run!r} names more than one run in {self.path}",
                               hint="give more of the run id (`selfcorrect history` lists them)")
        raise HistoryError(f"no run {run!r} in {self.path}",
                           hint="`selfcorrect history` lists the run ids; a prefix of "
                           f"{MIN_PREFIX} or more characters is enough")

    def has(self, run_id: str) -> bool:
        with self._translated("read"):
            return self._opened().execute("SELECT 1 FROM runs WHERE run_id = ?",
                                          (run_id,)).fetchone() is not None

    def run_json(self, run_id: str) -> str:
        with self._translated("read"):
            row = self._opened().execute("SELECT run_json FROM runs WHERE run_id = ?",
                                         (run_id,)).fetchone()
        if row is None:
            raise HistoryError(f"no run {run_id!r} in {self.path}")
        return zlib.decompress(row[0]).decode()

    def artifacts(self, run_id: str) -> tuple[KeptArtifact, ...]:
        with self._translated("read"):
            rows = self._opened().execute(
                "SELECT attempt, path, kind, size, data, note FROM artifacts WHERE run_id = ? "
                "ORDER BY attempt, path", (run_id,)).fetchall()
        return tuple(KeptArtifact(attempt=row[0], path=row[1], kind=row[2], size=row[3],
                                  data=bytes(row[4]), note=row[5]) for row in rows)

    def prune(self, before_utc: str) -> int:
        """Forget the runs started before `before_utc`; the file shrinks to what is left."""
        with self._transaction("prune") as db:
            gone = db.execute("DELETE FROM runs WHERE started_utc < ?", (before_utc,)).rowcount
        with self._translated("compact"):
            self._opened().execute("VACUUM")
        return gone

    def _opened(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the history store is not open: use it in a `with` block")
        return self._db

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        db = self._opened()
        with self._translated(doing):
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @contextmanager
    def _translated(self, doing: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise history_error(self.path, doing, exc) from exc
        except OSError as exc:
            raise HistoryError(f"cannot {doing} the run history at {self.path}: "
                               f"{exc.strerror or exc}",
                               hint=f"check that {self.folder} is a folder you can write "
                               "to, or choose another with --history DIR") from exc


def _entry(row: Sequence[Any]) -> HistoryEntry:
    """SQLite keeps booleans as 0 and 1."""
    entry = HistoryEntry(*row)
    return replace(entry, cost_known=bool(entry.cost_known), replayed=bool(entry.replayed))


def migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the database to len(MIGRATIONS), each missing step in one transaction with
    the version it reaches: a crash leaves the old schema or the new one."""
    db.execute("BEGIN IMMEDIATE")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > len(MIGRATIONS):
            raise HistoryError(
                f"the run history at {path} has schema version {version}; this selfcorrect "
                f"knows versions up to {len(MIGRATIONS)}",
                hint="use the newer selfcorrect that wrote it, or choose another folder "
                "with --history DIR")
        for step in MIGRATIONS[version:]:
            for statement in step:
                if callable(statement):
                    statement(db)
                else:
                    db.execute(statement)
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def history_error(path: Path, doing: str, exc: sqlite3.Error) -> HistoryError:
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return HistoryError(f"the run history at {path} stayed locked for "
                            f"{LOCK_TIMEOUT_S:g} s (another selfcorrect is writing to it)",
                            hint="try again when it is done")
    if isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc):
        return HistoryError(f"{path} is not a selfcorrect run history (not a SQLite "
                            "database)", hint="move it aside (a new one is made on the next "
                            "run), or choose another folder with --history DIR")
    return HistoryError(f"cannot {doing} the run history at {path}: {exc}",
                        hint="move the file aside if it is damaged (a new one is made on "
                        "the next run)")
