"""`selfcorrect history` (import, prune), `show` and `view`, through cli.main as a user types
them, against a real history file in a temporary folder. The browser is the one outside
process `view` reaches: webbrowser.open is replaced to see what it would open."""

from __future__ import annotations

import json
import webbrowser
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.history.entry import SOURCE_RUN
from selfcorrect_action.history.record import record_run
from selfcorrect_action.loop.state import Origin, RunState
from selfcorrect_action.report.run_json import run_json
from tests.unit.report.runs import cancelled_run, exhausted_run, passing_run


def _record(history: Path, state: RunState) -> None:
    record_run(history, state, run_json=run_json(state, secrets=[]), source=SOURCE_RUN,
               location="/somewhere/out")


def _runs(tmp_path: Path) -> list[RunState]:
    passed = passing_run(tmp_path).model_copy(update={
        "run_id": "aaaa11112222", "started_at": "2026-03-02T10:00:00Z"})
    failed = exhausted_run().model_copy(update={
        "run_id": "bbbb33334444", "started_at": "2026-01-15T08:00:00Z",
        "spec_source": ".selfcorrect/tasks/report.yml"})
    return [passed, failed]


@pytest.fixture
def history(tmp_path: Path) -> Path:
    folder = tmp_path / "history"
    for state in _runs(tmp_path):
        _record(folder, state)
    return folder


def _json(capsys: pytest.CaptureFixture[str]) -> Any:
    return json.loads(capsys.readouterr().out)


def test_history_lists_runs_newest_first(history: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--history", str(history)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["run", "started", "(UTC)"]
    assert lines[1].startswith("aaaa11112222") and "passed" in lines[1] and "2/4" in lines[1]
    assert lines[2].startswith("bbbb33334444") and "exhausted" in lines[2]
    assert lines[-1].startswith(f"2 runs in {history}/history.sqlite3")


@pytest.mark.parametrize(("flags", "expected"), [
    (["--status", "exhausted"], ["bbbb33334444"]),
    (["--spec", "report.yml"], ["bbbb33334444"]),
    (["--since", "2026-02-01"], ["aaaa11112222"]),
    (["--since", "2026-03-02T11:00+01:00"], ["aaaa11112222"]),
    (["--since", "2026-03-02T10:00:01"], []),
])
def test_history_filters(history: Path, capsys: pytest.CaptureFixture[str],
                         flags: list[str], expected: list[str]) -> None:
    assert main(["history", "--history", str(history), "--json", *flags]) == 0
    assert [run["run_id"] for run in _json(capsys)["runs"]] == expected


def test_a_bad_date_is_bad_usage(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--history", str(history), "--since", "last week"]) == 2
    assert "--since: expected a date like 2026-01-31" in capsys.readouterr().err


def test_without_a_home_there_is_no_default_history(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("HOME", "XDG_DATA_HOME", "SELFCORRECT_HISTORY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["history"]) == 2
    err = capsys.readouterr().err
    assert "no run history is configured" in err and "SELFCORRECT_HISTORY" in err


def test_the_default_history_is_under_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("SELFCORRECT_HISTORY", raising=False)
    assert main(["history"]) == 0
    assert f"No runs in {tmp_path}/.local/share/selfcorrect/history.sqlite3" in \
        capsys.readouterr().out


def _repository(tmp_path: Path) -> Path:
    """A checkout as the action leaves it: one folder per run under .selfcorrect/runs/."""
    repo = tmp_path / "repo"
    runs = repo / ".selfcorrect" / "runs"
    private = exhausted_run().model_copy(update={
        "run_id": "cccc55556666", "origin": Origin(repository="octo/private",
                                                   visibility="private")})
    for state in (passing_run(tmp_path).model_copy(update={"run_id": "dddd77778888"}),
                  private):
        (runs / state.run_id).mkdir(parents=True)
        (runs / state.run_id / "run.json").write_text(run_json(state, secrets=[]))
    (runs / "broken").mkdir()
    (runs / "broken" / "run.json").write_text('{"schema_version": 99}')
    return repo


def test_import_reads_a_repositorys_runs(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "h"
    repo = _repository(tmp_path)
    assert main(["history", "import", str(repo), "--history", str(history)]) == 1
    out, err = capsys.readouterr()
    assert "2 imported, 1 not read (of 3 run.json)" in out
    assert "broken/run.json: run.json has schema version 99" in err
    assert main(["history", "--history", str(history), "import", str(repo)]) == 1
    assert "2 already there, 1 not read" in capsys.readouterr().out
    assert main(["history", "--history", str(history), "--json"]) == 0
    runs = {run["run_id"]: run for run in _json(capsys)["runs"]}
    assert set(runs) == {"cccc55556666", "dddd77778888"}
    assert runs["cccc55556666"]["visibility"] == "private"
    assert runs["cccc55556666"]["source"] == "import"
    assert runs["dddd77778888"]["location"] == str((repo / ".selfcorrect" / "runs" /
                                                    "dddd77778888").resolve())


def test_cancelled_runs_are_listed_filtered_shown_and_published_as_cancelled(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 34: a run recorded as it was cancelled, and one imported from a version 7
    run.json, which said `error` with interrupted_by set: both are cancelled, not red."""
    history, site = tmp_path / "h", tmp_path / "site"
    _record(history, cancelled_run().model_copy(update={"run_id": "eeee99990000"}))
    old = tmp_path / "repo" / ".selfcorrect" / "runs" / "ffff12345678"
    old.mkdir(parents=True)
    written = json.loads(run_json(cancelled_run(), secrets=[]))
    (old / "run.json").write_text(json.dumps({**written, "run_id": "ffff12345678",
                                              "schema_version": 7, "status": "error"}))
    assert main(["history", "import", str(tmp_path / "repo"), "--history", str(history)]) == 0
    capsys.readouterr()
    assert main(["history", "--history", str(history), "--json", "--status", "cancelled"]) == 0
    assert sorted(run["run_id"] for run in _json(capsys)["runs"]) == [
        "eeee99990000", "ffff12345678"]
    assert main(["history", "--history", str(history), "--status", "error"]) == 0
    assert "No runs" in capsys.readouterr().out
    assert main(["show", "ffff", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run ffff12345678: cancelled: stopped before it ended\n")
    assert "stopped because: interrupted by SIGTERM" in out
    assert main(["view", "--site", str(site), "--history", str(history)]) == 0
    index = (site / "index.html").read_text()
    assert index.count('<td class="result cancelled">cancelled</td>') == 2
    assert '<option value="cancelled">cancelled</option>' in index


def test_import_of_a_folder_without_runs_says_what_it_looked_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "import", str(tmp_path), "--history", str(tmp_path / "h")]) == 2
    assert ".selfcorrect/runs/*/run.json" in capsys.readouterr().err


def test_prune_forgets_old_runs(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "prune", "--older-than", "100000", "--history", str(history)]) == 2
    capsys.readouterr()
    assert main(["history", "prune", "--older-than", "0", "--history", str(history)]) == 0
    assert "forgot 2 runs" in capsys.readouterr().out
    assert main(["history", "--history", str(history)]) == 0
    assert "No runs in" in capsys.readouterr().out


def test_show_prints_one_run(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "aaaa", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("run aaaa11112222: passed")
    assert "   1  initial  cheap openai/gpt-4o-mini: contract" in out
    assert "reports: /somewhere/out" in out and "selfcorrect view aaaa11112222" in out
    assert main(["show", "bbbb33334444", "--history", str(history), "--json"]) == 0
    shown = _json(capsys)
    assert shown["in_history"] is True
    assert shown["state"]["status"] == "exhausted"


def test_show_reads_a_run_json_given_by_path(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repository(tmp_path)
    folder = repo / ".selfcorrect" / "runs" / "cccc55556666"
    assert main(["show", str(folder), "--history", str(tmp_path / "none")]) == 0
    assert "run cccc55556666: failed: budget exhausted" in capsys.readouterr().out
    assert not (tmp_path / "none").exists()


def test_an_unknown_run_is_bad_usage(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "zzzz", "--history", str(history)]) == 2
    assert "no run 'zzzz'" in capsys.readouterr().err


def test_view_writes_the_page_and_opens_it(history: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    opened: list[str] = []

    def open_(url: str) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(webbrowser, "open", open_)
    assert main(["view", "aaaa1111", "--history", str(history)]) == 0
    page = history / "pages" / "aaaa11112222.html"
    assert capsys.readouterr().out.strip() == str(page)
    assert opened == [page.resolve().as_uri()]
    assert "<title>selfcorrect: scripts/sales_chart.py (passed)</title>" in page.read_text()
    assert main(["view", "bbbb", "--no-open", "--history", str(history), "--out",
                 str(history / "b.html")]) == 0
    assert opened == [page.resolve().as_uri()] and (history / "b.html").is_file()


def test_view_without_a_browser_says_where_the_page_is(
        history: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(webbrowser, "open", lambda url: False)
    assert main(["view", "aaaa", "--history", str(history)]) == 0
    assert "no browser to open it with here" in capsys.readouterr().err


def test_view_takes_a_run_or_a_site(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["view", "--history", str(history)]) == 2
    assert main(["view", "aaaa", "--site", "x", "--history", str(history)]) == 2
    assert "view takes a RUN or --site DIR" in capsys.readouterr().err


def test_view_site_writes_an_index_and_a_page_per_run(
        history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "site"
    assert main(["view", "--site", str(site), "--history", str(history)]) == 0
    assert capsys.readouterr().out.strip() == str(site / "index.html")
    assert sorted(p.name for p in (site / "runs").iterdir()) == [
        "aaaa11112222.html", "bbbb33334444.html"]
    index = (site / "index.html").read_text()
    assert 'href="runs/aaaa11112222.html"' in index and (site / ".nojekyll").is_file()
    # Written again with a filter: the page of the run no longer listed goes.
    assert main(["view", "--site", str(site), "--status", "passed",
                 "--history", str(history)]) == 0
    assert [p.name for p in (site / "runs").iterdir()] == ["aaaa11112222.html"]


def test_view_site_leaves_private_runs_out_unless_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = tmp_path / "h"
    assert main(["history", "import", str(_repository(tmp_path)), "--history",
                 str(history)]) == 1
    capsys.readouterr()
    site = tmp_path / "site"
    assert main(["view", "--site", str(site), "--history", str(history)]) == 0
    err = capsys.readouterr().err
    assert "leaving out 1 run of private repositories (octo/private)" in err
    assert "--include-private" in err
    assert [p.name for p in (site / "runs").iterdir()] == ["dddd77778888.html"]
    assert "cccc55556666" not in (site / "index.html").read_text()
    assert main(["view", "--site", str(site), "--include-private", "--history",
                 str(history)]) == 0
    assert "writing 1 run of private repositories (octo/private)" in capsys.readouterr().err
    assert len(list((site / "runs").iterdir())) == 2


def test_view_site_refuses_a_folder_of_other_files(
        history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("mine")
    assert main(["view", "--site", str(tmp_path / "mine"), "--history", str(history)]) == 2
    assert "holds files that are not a selfcorrect site (notes.txt)" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]


def test_show_prints_a_reasons_hint_on_a_line_of_its_own(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A stop reason quoting an error with its hint was shown with a literal `\\n  hint:`
    (issue 38, item 8)."""
    reason = ("the model call failed: no usable API key for model 'openai/gpt-4o-mini'"
              "\n  hint: set OPENAI_API_KEY in the environment\nPASSED")
    history = tmp_path / "history"
    _record(history, exhausted_run().model_copy(update={
        "run_id": "cccc55556666", "stop_reason": reason}))
    assert main(["show", "cccc", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert "\\n" not in out
    lines = out.splitlines()
    at = lines.index("stopped because: the model call failed: no usable API key for model "
                     "'openai/gpt-4o-mini'")
    # The reason's own lines stay under it, indented: none can pass for a line of show's.
    assert lines[at + 1:at + 3] == ["    hint: set OPENAI_API_KEY in the environment",
                                    "  PASSED"]
