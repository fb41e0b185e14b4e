"""write_reports: both files, whole, in a folder it creates."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import copy_atomically, write_atomically
from selfcorrect_action.report import ReportPaths, load_run_json, write_reports
from selfcorrect_action.report import writer as writer_module
from selfcorrect_action.report.writer import destination

from .runs import GITHUB_TOKEN, SECRETS, exhausted_run


def test_both_reports_are_written_to_a_new_folder(tmp_path: Path) -> None:
    out = tmp_path / "reports" / "sales-chart"

    paths = write_reports(exhausted_run(), out, secrets=SECRETS)

    assert paths == ReportPaths(run_json=out / "run.json", audit_md=out / "AUDIT.md")
    assert load_run_json(paths.run_json.read_text(encoding="utf-8")).status.value == "exhausted"
    audit = paths.audit_md.read_text(encoding="utf-8")
    assert audit.startswith("# selfcorrect audit: ")
    assert GITHUB_TOKEN not in audit
    assert sorted(p.name for p in out.iterdir()) == ["AUDIT.md", "run.json"]  # no temp files
    assert oct(paths.audit_md.stat().st_mode & 0o777) == "0o644"


def test_an_older_report_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "AUDIT.md").write_text("old", encoding="utf-8")

    write_reports(exhausted_run(), tmp_path, secrets=SECRETS)

    assert (tmp_path / "AUDIT.md").read_text(encoding="utf-8") != "old"


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "AUDIT.md"
    target.write_text("old", encoding="utf-8")

    def refuse(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)  # the writer calls os.replace
    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, "new")

    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["AUDIT.md"]


def test_a_rendering_bug_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_args: object, **_kwargs: Any) -> str:
        raise RuntimeError("template bug")

    monkeypatch.setattr(writer_module, "audit_markdown", broken)
    with pytest.raises(RuntimeError):
        write_reports(exhausted_run(), tmp_path / "out", secrets=SECRETS)

    assert not (tmp_path / "out").exists()


def test_a_destination_through_a_link_or_a_file_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / "scripts").symlink_to(outside)
    (out / "blocker").write_text("a file where a folder is needed")
    with pytest.raises(UsageError, match="scripts is a symbolic link"):
        destination(out, "scripts/chart.py")
    with pytest.raises(UsageError, match="blocker is not a folder"):
        destination(out, "blocker/chart.py")
    assert list(outside.iterdir()) == []
    assert destination(out, "new/deeper/chart.py") == out / "new" / "deeper" / "chart.py"
    assert (out / "new" / "deeper").is_dir()


def test_copying_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    target = tmp_path / "chart.png"
    target.symlink_to(victim)
    source = tmp_path / "source.png"
    source.write_bytes(b"new")
    copy_atomically(source, target)
    assert victim.read_text() == "precious"
    assert not target.is_symlink() and target.read_bytes() == b"new"
