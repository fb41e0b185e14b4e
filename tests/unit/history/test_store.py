"""The history database: a real SQLite file in a temporary folder. Records are whole or
absent, the schema is versioned and migrated forward, and what goes wrong with the file is
said with its path and a way out."""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from selfcorrect_action.history import store as store_module
from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.history.entry import SOURCE_RUN, entry_for
from selfcorrect_action.history.location import database
from selfcorrect_action.history.store import HistoryError, HistoryStore, Query
from selfcorrect_action.loop.state import Status
from selfcorrect_action.report.run_json import load_run_json, run_json
from tests.unit.report.runs import SECRETS, cancelled_run, error_run, exhausted_run, passing_run

PNG = KeptArtifact(attempt=2, path="chart.png", kind="png", size=4, data=b"\x89PNG")


def _entry(tmp_path: Path, run_id: str, started: str = "2026-03-01T10:00:00Z",
           status: Status = Status.PASSED):
    state = passing_run(tmp_path).model_copy(update={"run_id": run_id, "started_at": started,
                                                     "status": status})
    return state, entry_for(state, source=SOURCE_RUN, location=str(tmp_path))


def test_a_recorded_run_reads_back_whole(tmp_path: Path) -> None:
    state, entry = _entry(tmp_path, "abc123def456")
    text = run_json(state, secrets=SECRETS)
    with HistoryStore(tmp_path / "h") as store:
        store.record(entry, text, [PNG])
    with HistoryStore(tmp_path / "h", create=False) as store:
        (found,) = store.entries()
        assert found == entry and found.replayed is False and found.cost_known is True
        assert load_run_json(store.run_json("abc123def456")) == load_run_json(text)
        assert store.artifacts("abc123def456") == (PNG,)
        assert store.find("abc1") == entry  # a prefix is enough


def test_the_list_is_newest_first_and_filters(tmp_path: Path) -> None:
    with HistoryStore(tmp_path) as store:
        for run_id, started, status in (("aaaa1", "2026-01-01T00:00:00Z", Status.PASSED),
                                        ("bbbb2", "2026-02-01T09:30:00+02:00", Status.EXHAUSTED),
                                        ("cccc3", "2026-03-01T00:00:00Z", Status.PASSED)):
            state, entry = _entry(tmp_path, run_id, started, status)
            store.record(entry, run_json(state, secrets=[]))
        assert [e.run_id for e in store.entries()] == ["cccc3", "bbbb2", "aaaa1"]
        assert [e.run_id for e in store.entries(Query(status="passed"))] == ["cccc3", "aaaa1"]
        # 09:30 at +02:00 is 07:30 UTC: after 07:00 UTC, not after 08:00.
        assert [e.run_id for e in store.entries(Query(since_utc="2026-02-01T07:00:00"))] == [
            "cccc3", "bbbb2"]
        assert [e.run_id for e in store.entries(Query(since_utc="2026-02-01T08:00:00"))] == [
            "cccc3"]
        assert len(store.entries(Query(spec="sales-chart"))) == 3
        assert store.entries(Query(spec="nothing like it")) == []


def test_recording_a_run_again_replaces_it_and_its_files(tmp_path: Path) -> None:
    state, entry = _entry(tmp_path, "same-run-id")
    with HistoryStore(tmp_path) as store:
        store.record(entry, run_json(state, secrets=[]), [PNG])
        store.record(replace(entry, tokens=1), run_json(state, secrets=[]), [])
        (found,) = store.entries()
        assert found.tokens == 1 and store.artifacts("same-run-id") == ()


def test_a_record_that_fails_halfway_leaves_nothing_behind(tmp_path: Path) -> None:
    state, entry = _entry(tmp_path, "half-written")
    broken = KeptArtifact(attempt=1, path="x.png", kind="png", size=1,
                          data=object())  # type: ignore[arg-type]  # sqlite cannot bind it
    with HistoryStore(tmp_path) as store:
        with pytest.raises(HistoryError, match="record a run"):
            store.record(entry, run_json(state, secrets=[]), [PNG, broken])
        assert store.entries() == [] and store.artifacts("half-written") == ()


def test_runs_recorded_at_once_from_threads_all_land(tmp_path: Path) -> None:
    """A benchmark's parallel runs each record at their end, on connections of their own."""
    state, entry = _entry(tmp_path, "x")
    text = run_json(state, secrets=[])

    def record(number: int) -> None:
        with HistoryStore(tmp_path) as store:
            store.record(replace(entry, run_id=f"run-{number:02d}"), text, [PNG])

    threads = [threading.Thread(target=record, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with HistoryStore(tmp_path) as store:
        assert len(store.entries()) == 8


def test_a_prefix_that_names_two_runs_or_none_is_refused_clearly(tmp_path: Path) -> None:
    with HistoryStore(tmp_path) as store:
        for run_id in ("abcd0001", "abcd0002"):
            state, entry = _entry(tmp_path, run_id)
            store.record(entry, run_json(state, secrets=[]))
        with pytest.raises(HistoryError, match="more than one run") as two:
            store.find("abcd")
        with pytest.raises(HistoryError, match="no run 'zzzz'") as none:
            store.find("zzzz")
        with pytest.raises(HistoryError, match="no run 'abc'"):
            store.find("abc")  # shorter than a prefix may be
    assert two.value.exit_code == 2 and two.value.hint and none.value.hint


def test_prune_forgets_older_runs_and_their_files(tmp_path: Path) -> None:
    with HistoryStore(tmp_path) as store:
        for run_id, started in (("old", "2025-01-01T00:00:00Z"), ("new", "2026-06-01T00:00:00Z")):
            state, entry = _entry(tmp_path, run_id, started)
            store.record(entry, run_json(state, secrets=[]), [replace(PNG, attempt=1)])
        assert store.prune("2026-01-01T00:00:00") == 1
        assert [e.run_id for e in store.entries()] == ["new"]
        assert store.artifacts("old") == () and store.artifacts("new") != ()


def test_a_missing_history_is_not_created_by_readers(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="no run history at") as caught:
        HistoryStore(tmp_path / "none", create=False).__enter__()
    assert not (tmp_path / "none").exists() and "history import" in (caught.value.hint or "")


def test_a_new_database_gets_the_current_schema_version(tmp_path: Path) -> None:
    with HistoryStore(tmp_path):
        pass
    with sqlite3.connect(database(tmp_path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(store_module.MIGRATIONS)
    db.close()


def test_an_older_database_is_migrated_and_keeps_its_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Made by this version; the next version adds a step."""
    state, entry = _entry(tmp_path, "kept-across")
    with HistoryStore(tmp_path) as store:
        store.record(entry, run_json(state, secrets=[]))
    added = ("CREATE TABLE notes (run_id TEXT, note TEXT)",
             "INSERT INTO notes SELECT run_id, 'migrated' FROM runs")
    monkeypatch.setattr(store_module, "MIGRATIONS", (*store_module.MIGRATIONS, added))
    with HistoryStore(tmp_path) as store:
        assert [e.run_id for e in store.entries()] == ["kept-across"]
    with sqlite3.connect(database(tmp_path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(store_module.MIGRATIONS)
        assert db.execute("SELECT note FROM notes").fetchall() == [("migrated",)]
    db.close()


def test_a_migration_that_fails_leaves_the_old_schema(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with HistoryStore(tmp_path):
        pass
    broken = ("CREATE TABLE half (x)", "THIS IS NOT SQL")
    current = len(store_module.MIGRATIONS)
    monkeypatch.setattr(store_module, "MIGRATIONS", (*store_module.MIGRATIONS, broken))
    with pytest.raises(HistoryError, match="cannot open"):
        HistoryStore(tmp_path).__enter__()
    with sqlite3.connect(database(tmp_path)) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == current
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        assert "half" not in tables
    db.close()


def test_runs_an_older_version_recorded_as_errors_of_a_cancel_read_as_cancelled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before issue 34 a cancelled run was recorded with status error (its run.json, version
    7, saying interrupted_by): the migration makes it cancelled, for `--status cancelled` to
    find it. An infrastructure error, or a row whose run.json does not read, stays error."""
    with monkeypatch.context() as old:
        old.setattr(store_module, "MIGRATIONS", store_module.MIGRATIONS[:1])
        with HistoryStore(tmp_path) as store:
            for state in (cancelled_run().model_copy(update={"run_id": "was-cancelled"}),
                          error_run().model_copy(update={"run_id": "failed"})):
                written = {**json.loads(run_json(state, secrets=[])), "schema_version": 7,
                           "status": "error"}
                store.record(replace(entry_for(state, source=SOURCE_RUN, location=""),
                                     status="error"), json.dumps(written))
            unreadable = entry_for(error_run(), source=SOURCE_RUN, location="")
            store.record(replace(unreadable, run_id="unreadable"), "{not json")
    with HistoryStore(tmp_path) as store:
        assert [e.run_id for e in store.entries(Query(status="cancelled"))] == ["was-cancelled"]
        assert sorted(e.run_id for e in store.entries(Query(status="error"))) == [
            "failed", "unreadable"]
        assert load_run_json(store.run_json("was-cancelled")).status is Status.CANCELLED


def test_a_database_from_a_newer_selfcorrect_is_refused(tmp_path: Path) -> None:
    with HistoryStore(tmp_path):
        pass
    with sqlite3.connect(database(tmp_path)) as db:
        db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(HistoryError, match="schema version 99") as caught:
        HistoryStore(tmp_path).__enter__()
    assert "newer selfcorrect" in (caught.value.hint or "")


def test_a_file_that_is_no_database_is_named_with_a_way_out(tmp_path: Path) -> None:
    database(tmp_path).write_text("these are my notes, not a database\n" * 100)
    with pytest.raises(HistoryError, match="not a selfcorrect run history") as caught:
        HistoryStore(tmp_path).__enter__()
    assert str(database(tmp_path)) in caught.value.message
    assert "move it aside" in (caught.value.hint or "")


def test_a_folder_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(HistoryError, match="cannot open the run history") as caught:
        HistoryStore(tmp_path / "file" / "history").__enter__()
    assert "--history DIR" in (caught.value.hint or "")


def test_entries_say_how_visible_their_repository_is(tmp_path: Path) -> None:
    from selfcorrect_action.loop.state import Origin

    state = exhausted_run().model_copy(update={"origin": Origin(
        repository="octo/secret", visibility="internal")})
    entry = entry_for(state, source=SOURCE_RUN, location="")
    assert (entry.repository, entry.visibility, entry.private) == ("octo/secret", "internal",
                                                                   True)
    assert entry_for(exhausted_run(), source=SOURCE_RUN, location="").private is False
