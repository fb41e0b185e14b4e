"""Write a run's reports to a folder: run.json and AUDIT.md.

Each file is written atomically (fileio.write_atomically): a crash (or a runner cancelled
mid-write) leaves the previous report or none, never half of one, and whoever reads the
folder (the PR step, an upload) sees whole files only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report.audit import audit_markdown, summary_markdown
from selfcorrect_action.report.run_json import RUN_JSON, run_json

AUDIT_MD = "AUDIT.md"


@dataclass(frozen=True)
class ReportPaths:
    run_json: Path
    audit_md: Path


@dataclass(frozen=True)
class Reports:
    """A run's reports, rendered and redacted: what is written to a folder, committed to a
    pull request, or handed to an API caller."""

    run_json: str
    audit_md: str
    summary_md: str  # the short Markdown summary (job summary, comments, the PR body)


def render_reports(state: RunState, *, secrets: Sequence[str]) -> Reports:
    return Reports(run_json=run_json(state, secrets=secrets),
                   audit_md=audit_markdown(state, secrets=secrets),
                   summary_md=summary_markdown(state, secrets=secrets))


def write_rendered(reports: Reports, out_dir: Path) -> ReportPaths:
    out_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(out_dir / RUN_JSON, reports.run_json)
    write_atomically(out_dir / AUDIT_MD, reports.audit_md)
    return ReportPaths(run_json=out_dir / RUN_JSON, audit_md=out_dir / AUDIT_MD)


def write_reports(state: RunState, out_dir: Path, *, secrets: Sequence[str]) -> ReportPaths:
    """Render both reports first, then write them: a rendering bug writes nothing."""
    return write_rendered(render_reports(state, secrets=secrets), out_dir)


def destination(out_dir: Path, relative: str) -> Path:
    """`out_dir/relative` with its folders created. Refused (UsageError) when something on
    the way below out_dir is a symbolic link or not a folder: a committed link such as
    scripts -> ../tests would make the passing script overwrite a frozen test, or land
    outside the repository."""
    target = out_dir
    parts = PurePosixPath(relative).parts
    for part in parts[:-1]:
        target = target / part
        if target.is_symlink() or (target.exists() and not target.is_dir()):
            what = "a symbolic link" if target.is_symlink() else "not a folder"
            raise UsageError(f"not writing {relative}: {target} is {what}",
                             hint="make it a real folder, or choose another --out")
        target.mkdir(exist_ok=True)
    final = target / parts[-1]
    if final.is_dir() and not final.is_symlink():
        raise UsageError(f"not writing {relative}: {final} is a folder",
                         hint="remove the folder, or choose another --out")
    return final
