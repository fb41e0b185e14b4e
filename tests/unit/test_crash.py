"""Where the last resort (crash.py) leaves a bug's redacted traceback: in the user's cache
for the CLI (tests/unit/commands/test_cli.py), and in the action beside the run folders in
the workspace's .selfcorrect/runs/, which the example workflows upload (issue 16, item 5:
"a file in the run's folder"; it used to go to .selfcorrect/crash/, which none uploaded)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from selfcorrect_action.crash import ACTION_CRASH_DIR, EXIT_INTERNAL, crash_log_path, report_crash
from selfcorrect_action.history.folders import run_files
from selfcorrect_action.report.run_json import RUNS_DIR

TOKEN = "ghs_" + "A1b2" * 9


def test_in_the_action_the_crash_log_goes_beside_the_run_folders(tmp_path: Path) -> None:
    path = crash_log_path({"GITHUB_WORKSPACE": str(tmp_path), "HOME": "/nowhere"})
    assert path.parent == tmp_path / ".selfcorrect" / "runs"
    assert re.fullmatch(r"crash-\d{8}T\d{12}Z\.log", path.name)
    assert ACTION_CRASH_DIR == RUNS_DIR  # spelled out in crash.py to import little


def test_an_empty_workspace_variable_falls_back_to_the_cache(tmp_path: Path) -> None:
    path = crash_log_path({"GITHUB_WORKSPACE": "", "XDG_CACHE_HOME": str(tmp_path)})
    assert path.parent == tmp_path / "selfcorrect"


def test_in_the_action_the_redacted_traceback_is_written_into_the_workspace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        raise RuntimeError(f"bad state with {TOKEN}")
    except RuntimeError as exc:
        code = report_crash(exc, secrets=[TOKEN],
                            environ={"GITHUB_WORKSPACE": str(tmp_path), "HOME": str(tmp_path)})
    assert code == EXIT_INTERNAL == 3
    (log,) = (tmp_path / RUNS_DIR).glob("crash-*.log")
    text = log.read_text()
    assert "Traceback" in text and "RuntimeError: bad state with" in text
    assert TOKEN not in text
    err = capsys.readouterr().err
    assert str(log) in err and "Traceback" not in err and TOKEN not in err
    assert not (tmp_path / ".cache").exists()
    # A file beside the run folders is never taken for a run (history import, the viewer).
    assert run_files(tmp_path) == []
