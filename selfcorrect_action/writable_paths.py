"""Checks of the paths a run will write to (a command's --out, the API's out_dir, an MCP
run's folder), made before any work starts, so a typo in --out does not throw away a
finished (and paid-for) run. They try for real (create the folder, create and remove a
probe file): permission bits say nothing to root, and /proc or a read-only mount refuse
writes whatever the bits say. Beside the front ends that share it, not in commands/: the
API and the MCP server sit below the commands (docs/architecture.md, the layering)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from selfcorrect_action.errors import UsageError


def writable_folder(path: Path, flag: str, *, empty: bool = False) -> Path:
    """`path` is a folder we can write into; created if missing. With `empty`, one that
    already holds something is refused: nothing of the user's is overwritten, and files
    left by an earlier run are never mistaken for (or collide with) new ones."""
    if path.is_symlink() and not path.exists():
        raise UsageError(f"{flag} {path}: is a link to a folder that does not exist",
                         hint="create the folder it points to, or name another one")
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: exists and is not a folder",
                         hint="name a folder (it is created if missing)")
    if empty and path.is_dir() and any(path.iterdir()):
        raise UsageError(f"{flag} {path}: is not empty",
                         hint="name a new or empty folder, or empty this one first")
    try:
        path.mkdir(parents=True, exist_ok=True)
        _probe(path)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot create or write there ({exc.strerror})",
                         hint="choose a folder you can write to") from exc
    return path


def writable_file(path: Path, flag: str, *, new: bool = False, new_hint: str = "") -> Path:
    """`path` names a file we can create or overwrite (its folder must exist); with `new`,
    one that exists is refused: a 37 KB recording once became 3.6 KB when an interrupted
    run recorded over it (issue 9)."""
    if path.is_dir():
        raise UsageError(f"{flag} {path}: is a folder", hint="name a file, e.g. run.jsonl")
    if new and (path.exists() or path.is_symlink()):
        raise UsageError(f"{flag} {path}: exists, and would be replaced",
                         hint=new_hint or "name a new file")
    folder = path.parent
    try:
        if not folder.is_dir():
            raise FileNotFoundError(2, "no such folder")
        _probe(folder)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: not writable: the folder {folder} "
                         f"({exc.strerror or exc})",
                         hint="create the folder first, or choose another path") from exc
    return path


def _probe(folder: Path) -> None:
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".selfcorrect-probe-"):
        pass
