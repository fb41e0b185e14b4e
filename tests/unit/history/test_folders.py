"""Runs read from folders: a repository's .selfcorrect/runs/, a folder of run folders, one
`selfcorrect run` output folder; and the files a run.json names never read from outside."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from selfcorrect_action.errors import UsageError
from selfcorrect_action.history.folders import folder_artifacts, read_run, run_files
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.report.run_json import run_json
from selfcorrect_action.sandbox.models import ArtifactRecord
from tests.unit.report.runs import passing_run


def _write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(text)
    return folder / "run.json"


def test_run_files_are_found_in_each_layout(tmp_path: Path) -> None:
    text = run_json(passing_run(tmp_path), secrets=[])
    repo = tmp_path / "repo"
    found = [_write(repo / ".selfcorrect" / "runs" / name, text) for name in ("b", "a")]
    assert run_files(repo) == sorted(found)
    assert run_files(repo / ".selfcorrect" / "runs") == sorted(found)
    assert run_files(repo / ".selfcorrect" / "runs" / "a") == [found[1]]
    assert run_files(tmp_path / "empty") == []


def test_a_file_that_is_no_run_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path / "x", "{}")
    with pytest.raises(UsageError, match=f"{path}: run.json has schema version None"):
        read_run(path)
    with pytest.raises(UsageError, match="no such file"):
        read_run(tmp_path / "missing" / "run.json")


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (20, 20), "green").save(out, format="PNG")
    return out.getvalue()


def _output_folder(tmp_path: Path, paths: list[str]) -> tuple[Path, RunState]:
    """A `selfcorrect run --out` folder of a passing run whose last attempt wrote `paths`."""
    state = passing_run(tmp_path)
    last = state.attempts[-1]
    assert last.execution is not None
    records = [ArtifactRecord(path=p, size=10) for p in paths]
    attempts = [*state.attempts[:-1], last.model_copy(update={
        "execution": last.execution.model_copy(update={"artifacts": records})})]
    state = state.model_copy(update={"attempts": attempts})
    out = tmp_path / "out"
    _write(out, run_json(state, secrets=[]))
    return out, state


def test_an_output_folder_gives_its_passing_attempts_pictures(tmp_path: Path) -> None:
    out, state = _output_folder(tmp_path, ["chart.png"])
    (out / "artifacts").mkdir()
    (out / "artifacts" / "chart.png").write_bytes(_png())
    (item,) = folder_artifacts(out, state, secrets=[])
    assert (item.attempt, item.path, item.data) == (2, "chart.png", _png())
    failed = state.model_copy(update={"status": Status.EXHAUSTED})
    assert folder_artifacts(out, failed, secrets=[]) == ()  # its artifacts/ are not its own


def test_paths_from_a_run_json_never_reach_outside_its_folder(tmp_path: Path) -> None:
    private = tmp_path / "private.csv"
    private.write_text("name,password\nme,hunter2\n")
    # out/artifacts/../../private.csv is tmp_path/private.csv.
    out, state = _output_folder(tmp_path, ["../../private.csv", str(private), "link.csv",
                                           "sub/../../../private.csv"])
    (out / "artifacts").mkdir()
    os.symlink(private, out / "artifacts" / "link.csv")
    kept = folder_artifacts(out, state, secrets=[])
    assert all(b"hunter2" not in item.data for item in kept) and kept == ()
    assert json.loads((out / "run.json").read_text())["status"] == "passed"
