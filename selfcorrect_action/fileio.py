"""Reading a file the user named, safely: a regular file only, never more than a cap.

A path on a command line or in a spec can name /dev/zero (never ends), a FIFO (opening it
waits for a writer, forever) or a multi-gigabyte file. The file is opened without blocking,
checked to be a regular file, and read up to one byte past the cap, so the caller can tell
"too large" without reading it whole.
"""

from __future__ import annotations

import os
import stat
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
