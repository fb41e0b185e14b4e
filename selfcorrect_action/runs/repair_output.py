"""Publishing a finished repair to the local disk: the diff beside the reports, and the
changed files either under the output folder (at their repository paths) or, with
`--apply`, into the repository in place.

Applying never overwrites work: a file the working tree changed since the run read it, or
that git reports with uncommitted changes, is refused (all files or none), and the changed
files then go to the output folder instead, so nothing the run found is lost.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.repair.repository import Snapshot
from selfcorrect_action.report.writer import destination

DIFF_NAME = "changes.diff"
GIT_TIMEOUT_S = 60


@dataclass(frozen=True)
class RepairOutput:
    files: list[Path] = field(default_factory=list)  # where the changed files were written
    diff: Path | None = None
    applied: bool = False
    refused: str = ""  # why --apply wrote nothing into the repository
    stale: list[Path] = field(default_factory=list)  # an earlier run's diff, not replaced


def write_repair_output(state: RunState, snapshot: Snapshot, out_dir: Path, *,
                        apply: bool) -> RepairOutput:
    diff_path = out_dir / DIFF_NAME
    if state.status is not Status.PASSED or state.last is None or not state.last.files:
        return RepairOutput(stale=[diff_path] if diff_path.is_file() else [])
    changed = state.last.files
    write_atomically(destination(out_dir, DIFF_NAME), state.last.diff)
    if apply:
        refused = apply_refusal(snapshot, list(changed))
        if not refused:
            return RepairOutput(_write(snapshot.root, changed), diff_path, applied=True)
        return RepairOutput(_write(out_dir, changed), diff_path, refused=refused)
    return RepairOutput(_write(out_dir, changed), diff_path)


def _write(root: Path, files: dict[str, str]) -> list[Path]:
    written = []
    for path, text in sorted(files.items()):
        # destination(): never through a symbolic link on the way, replacing the file.
        target = destination(root, path)
        write_atomically(target, text)
        written.append(target)
    return written


def apply_refusal(snapshot: Snapshot, paths: list[str]) -> str:
    """Why the changed files may not be written into the working tree ("" when they may):
    each must still hold what the run read, and git must report no uncommitted change."""
    moved = [path for path in paths
             if current_bytes(snapshot.root / path) != snapshot.files[path]]
    if moved:
        return (f"{', '.join(moved)} changed in the working tree since the run read it: "
                "applying would overwrite that work")
    dirty = uncommitted(snapshot.root, paths)
    if dirty:
        return (f"{', '.join(dirty)} has uncommitted changes: commit or stash them, then "
                "apply the diff")
    return ""


def current_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def uncommitted(root: Path, paths: list[str]) -> list[str]:
    if not (shutil.which("git") and (root / ".git").exists()):
        return []
    done = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "-z", "--", *paths],
                          capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    if done.returncode != 0:
        return list(paths)  # git could not say: nothing is applied on a guess
    entries = [entry.decode(errors="replace") for entry in done.stdout.split(b"\0") if entry]
    return sorted({entry[3:] for entry in entries if len(entry) > 3} & set(paths))
