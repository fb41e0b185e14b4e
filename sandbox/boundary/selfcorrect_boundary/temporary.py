"""Temporary folders and files the tests make (the tempfile module's, and pytest's tmp_path,
tmpdir, tmp_path_factory) are made reachable by the candidate's uid, as they are when both
share a process: a test that writes a file and passes its path to the candidate keeps
working. The tests' own folder stays private to their uid. Apart from the plugin (plugin.py)
because a plain test run (plain.py) must not import pytest."""

from __future__ import annotations

import os
import tempfile

# typing.TYPE_CHECKING without importing typing at run time (mypy reads the name itself).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# Folders the candidate may add to (sticky: not remove or replace what the test put
# there); files it may read, not write.
SHARED_DIR_MODE = 0o1777
SHARED_FILE_MODE = 0o644
TRAVERSE_MODE = 0o711


def share() -> None:
    """Wrap the makers of named temporary folders and files (in this process only). Not
    TemporaryFile: it has no name to pass on, and pytest captures output in such files,
    which must stay the tests' alone (gVisor lets another uid open a file through
    /proc/<pid>/fd when the file's own mode allows it)."""
    made_dir = tempfile.mkdtemp
    made_file = tempfile.mkstemp
    made_named = tempfile.NamedTemporaryFile

    # Any: each stands in for an overloaded function (str or bytes paths), arguments unchanged.
    def mkdtemp(*args: Any, **kwargs: Any) -> Any:
        path = made_dir(*args, **kwargs)
        os.chmod(path, SHARED_DIR_MODE)
        return path

    def mkstemp(*args: Any, **kwargs: Any) -> Any:
        fd, path = made_file(*args, **kwargs)
        os.fchmod(fd, SHARED_FILE_MODE)
        return fd, path

    def named(*args: Any, **kwargs: Any) -> Any:
        handle = made_named(*args, **kwargs)
        os.fchmod(handle.fileno(), SHARED_FILE_MODE)
        return handle

    tempfile.mkdtemp = mkdtemp
    tempfile.mkstemp = mkstemp
    tempfile.NamedTemporaryFile = named


def share_pytests() -> None:
    """The same for the folders pytest's fixtures make (it imports part of pytest)."""
    try:
        from _pytest.tmpdir import TempPathFactory
    except ImportError:
        return
    base_of = TempPathFactory.getbasetemp
    make = TempPathFactory.mktemp

    def getbasetemp(self: TempPathFactory) -> Path:
        path = base_of(self)
        os.chmod(path, TRAVERSE_MODE)
        return path

    def mktemp(self: TempPathFactory, basename: str, numbered: bool = True) -> Path:
        path = make(self, basename, numbered)
        os.chmod(path, SHARED_DIR_MODE)
        return path

    # Patching pytest's class, in this process only (see the docstring).
    TempPathFactory.getbasetemp = getbasetemp  # type: ignore[method-assign]
    TempPathFactory.mktemp = mktemp  # type: ignore[method-assign]
