"""Reading a file the user named, safely: a regular file only, never more than a cap.

A path on a command line or in a spec can name /dev/zero (never ends), a FIFO (opening it
waits for a writer, forever) or a multi-gigabyte file. The file is opened without blocking,
checked to be a regular file, and read up to one byte past the cap, so the caller can tell
"too large" without reading it whole.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path


class NotRegularFile(OSError):
    """The path names a device, FIFO or socket."""


def read_capped(path: Path, max_bytes: int) -> bytes:
    """Up to max_bytes + 1 bytes of the regular file at `path` (more than max_bytes means
    it is too large). Raises NotRegularFile, or the OSError that opening or reading raised
    (FileNotFoundError, IsADirectoryError, PermissionError...)."""
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. It has no
    # effect on reading a regular file.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{path} is not a regular file")
        return handle.read(max_bytes + 1)


class FileProblem(Exception):
    """Why a file someone named cannot be used, in words for them: `problem` completes
    "<what> <path>: ...", `hint` says what to do. Each caller raises it as its own error."""

    def __init__(self, problem: str, hint: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.hint = hint


class FileTooLarge(FileProblem):
    pass


class FileMissing(FileProblem):
    pass


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` of them; FileProblem for
    a missing file, a folder, a device or FIFO, an unreadable file or one that is too large."""
    try:
        data = read_capped(path, max_bytes)
    except NotRegularFile as exc:
        raise FileProblem("is not a regular file (a device, FIFO or socket)",
                          "copy what it holds into a file and pass that") from exc
    except FileNotFoundError as exc:
        raise FileMissing("no such file", "check the path and its spelling") from exc
    except IsADirectoryError as exc:
        raise FileProblem("is a folder, not a file", "name a file") from exc
    except OSError as exc:
        raise FileProblem(f"cannot read: {exc.strerror or exc}",
                          "check its permissions") from exc
    if len(data) > max_bytes:
        raise FileTooLarge(f"is larger than {_size(max_bytes)}, the most accepted here",
                           "pass a smaller file")
    return data


def _size(count: int) -> str:
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count:,} bytes"


def write_atomically(path: Path, content: str) -> None:
    """`content` at `path` in UTF-8, replacing any older file in one rename: written aside
    in the same folder, fsync'ed, then renamed, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        # mkstemp makes the file 0600; a report is meant to be read by others (a PR, an upload).
        os.chmod(temp_name, 0o644)
        os.replace(temp_name, path)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def copy_atomically(source: Path, target: Path) -> None:
    """`source`'s bytes at `target`, replacing (never writing through) whatever is there."""
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                         dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as file, source.open("rb") as original:
            shutil.copyfileobj(original, file)
        os.chmod(temp_name, 0o644)
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
