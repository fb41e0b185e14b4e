"""Where a finished repair's files go: the output folder, or the repository in place only
when every changed file still holds what the run read and git reports it unchanged."""

from __future__ import annotations

import subprocess
from pathlib import Path

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import Attempt, RunState, Status, Strategy
from selfcorrect_action.repair.repository import read_snapshot
from selfcorrect_action.runs.repair_output import apply_refusal, write_repair_output
from selfcorrect_action.spec import TaskSpec

BEFORE, AFTER = "x = 1\n", "x = 2\n"


def repo(tmp_path: Path, *, git: bool) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text(BEFORE)
    if git:
        for args in (["init", "-q"], ["add", "-A"],
                     ["-c", "user.name=t", "-c", "user.email=t@invalid", "commit", "-qm", "x"]):
            subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root


def finished(status: Status = Status.PASSED) -> RunState:
    spec = TaskSpec(prompt="fix", kind="repair", files=["pkg/*.py"])
    attempt = Attempt(index=1, strategy=Strategy.INITIAL, tier="cheap", model="m", code="",
                      code_sha="s", files={"pkg/core.py": AFTER}, diff="--- a/pkg/core.py\n")
    return RunState(run_id="r", started_at="t", spec_source="s", spec=spec, output_name="",
                    contract=spec.contract, models=ModelTiers(), attempts=[attempt],
                    status=status)


def test_without_apply_the_changed_files_go_under_the_output_folder(tmp_path: Path) -> None:
    root = repo(tmp_path, git=True)
    written = write_repair_output(finished(), read_snapshot(root), tmp_path / "out",
                                  apply=False)
    assert written.files == [tmp_path / "out" / "pkg" / "core.py"]
    assert (tmp_path / "out" / "pkg" / "core.py").read_text() == AFTER
    assert (tmp_path / "out" / "changes.diff").read_text() == "--- a/pkg/core.py\n"
    assert (root / "pkg" / "core.py").read_text() == BEFORE and not written.applied


def test_apply_writes_into_a_clean_repository(tmp_path: Path) -> None:
    root = repo(tmp_path, git=True)
    written = write_repair_output(finished(), read_snapshot(root), tmp_path / "out", apply=True)
    assert written.applied and written.files == [root / "pkg" / "core.py"]
    assert (root / "pkg" / "core.py").read_text() == AFTER


def test_a_file_changed_since_the_run_read_it_is_not_overwritten(tmp_path: Path) -> None:
    root = repo(tmp_path, git=False)
    snapshot = read_snapshot(root)
    (root / "pkg" / "core.py").write_text("x = 3  # edited meanwhile\n")
    assert apply_refusal(snapshot, ["pkg/core.py"]).startswith(
        "pkg/core.py changed in the working tree since the run read it")
    written = write_repair_output(finished(), snapshot, tmp_path / "out", apply=True)
    assert not written.applied and written.refused
    assert (root / "pkg" / "core.py").read_text() == "x = 3  # edited meanwhile\n"
    assert (tmp_path / "out" / "pkg" / "core.py").read_text() == AFTER


def test_uncommitted_changes_git_reports_are_refused(tmp_path: Path) -> None:
    root = repo(tmp_path, git=True)
    (root / "pkg" / "core.py").write_text("x = 5\n")
    assert apply_refusal(read_snapshot(root), ["pkg/core.py"]) == (
        "pkg/core.py has uncommitted changes: commit or stash them, then apply the diff")


def test_a_failed_run_writes_no_files_and_names_an_earlier_diff(tmp_path: Path) -> None:
    root = repo(tmp_path, git=False)
    out = tmp_path / "out"
    out.mkdir()
    (out / "changes.diff").write_text("old")
    written = write_repair_output(finished(Status.EXHAUSTED), read_snapshot(root), out,
                                  apply=True)
    assert written.files == [] and written.stale == [out / "changes.diff"]
    assert (root / "pkg" / "core.py").read_text() == BEFORE
