"""The repository a repair runs against, read once: every file the test suite may need
(without `.git`, ignored files and our own `.selfcorrect/`), bounded in count and size.

With git on PATH and a git work tree, the files are git's own list (tracked plus untracked
files that are not ignored), so a local virtualenv or build folder never travels into the
sandbox. Without git (the action's image has none; its workspace is a fresh checkout,
where nothing ignored exists yet), the tree is walked, leaving out the folders that are
never source (LEFT_OUT_FOLDERS). Symbolic links are never followed: a committed link to
/etc or ~/.ssh must not carry the host's files into the sandbox, whose output reaches
reports.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from selfcorrect_action.errors import UsageError

# The limits a repository must fit (issue 18): the work dir is a tmpfs in the container's
# memory, and every file crosses the sandbox's request stream on every run.
MAX_REPO_FILES = 5_000
MAX_REPO_BYTES = 48 * 1024 * 1024
# Where our run writes inside the work dir, and where specs, replays and reports live in a
# repository: never part of what the tests see.
OWN_FOLDER = ".selfcorrect"
LEFT_OUT_FOLDERS = frozenset({
    ".git", OWN_FOLDER, "__pycache__", ".venv", "venv", ".tox", ".nox", "node_modules",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "dist",
})  # fmt: skip
GIT_TIMEOUT_S = 60


@dataclass(frozen=True)
class Snapshot:
    """The repository's files as the run uses them: path (POSIX, relative) -> bytes."""

    root: Path
    files: dict[str, bytes]
    listed_by: str  # "git" or "walk"
    # Listed but not carried: symbolic links (never followed), files gone from the work tree.
    left_out: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(len(data) for data in self.files.values())

    def text(self, path: str) -> str:
        return self.files[path].decode("utf-8")


def read_snapshot(root: Path) -> Snapshot:
    """Every file of the repository at `root`; UsageError when it is larger than the limits
    (the message gives its size and the limit)."""
    root = root.resolve()
    names, listed_by = list_files(root)
    if len(names) > MAX_REPO_FILES:
        raise too_large(f"{len(names):,} files", f"{MAX_REPO_FILES:,} files")
    files: dict[str, bytes] = {}
    left_out: list[str] = []
    total = 0
    for name in names:
        data = _read_regular(root / name)
        if data is None:
            left_out.append(name)
            continue
        total += len(data)
        if total > MAX_REPO_BYTES:
            raise too_large(f"more than {MAX_REPO_BYTES:,} bytes",
                            f"{MAX_REPO_BYTES // (1024 * 1024)} MiB")
        files[name] = data
    return Snapshot(root, files, listed_by, left_out)


def too_large(found: str, limit: str) -> UsageError:
    return UsageError(
        f"the repository holds {found} (without .git, ignored files and .selfcorrect/); "
        f"repair mode takes at most {limit}",
        hint="add what the tests do not need (data, docs, vendored code) to .gitignore, or "
        "run the repair on a smaller repository that holds the package and its tests")


def list_files(root: Path) -> tuple[list[str], str]:
    """The repository's file names, sorted, and how they were listed."""
    if shutil.which("git") and (root / ".git").exists():
        return _git_files(root), "git"
    return sorted(_walk(root)), "walk"


def _git_files(root: Path) -> list[str]:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"cannot list the files of {root} with git: {exc}") from exc
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        raise UsageError(f"cannot list the files of {root} with git: "
                         f"{said[-1] if said else f'exit status {done.returncode}'}")
    names = {name for raw in done.stdout.split(b"\0") if (name := raw.decode(errors="replace"))}
    return sorted(name for name in names if not _left_out(name))


def _walk(root: Path) -> Iterator[str]:
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in LEFT_OUT_FOLDERS
                         and not d.endswith(".egg-info"))
        base = Path(folder).relative_to(root)
        for name in files:
            relative = (base / name).as_posix()
            if not _left_out(relative):
                yield relative


def _left_out(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return (not parts or any(part in LEFT_OUT_FOLDERS for part in parts[:-1])
            or parts[-1].endswith((".pyc", ".pyo")))


def _read_regular(path: Path) -> bytes | None:
    """The file's bytes, or None for a symbolic link or anything but a regular file (a
    tracked file deleted from the work tree is left out too)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(mode):
        return None
    return path.read_bytes()
