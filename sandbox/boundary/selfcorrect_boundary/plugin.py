"""pytest's side of the boundary: what the tests' process adds to pytest.

- Temporary folders and files the tests make (tmp_path, tmpdir, tmp_path_factory, and the
  tempfile module) are made reachable by the candidate's uid, as they are when both share a
  process: a test that writes a file and passes its path to the candidate keeps working.
  The tests' own folder stays private to their uid.
- An assertion that compares one of the candidate's objects with plain data says why it
  fails and what to do instead.
"""

from __future__ import annotations

import os
import tempfile

import pytest

from selfcorrect_boundary.client import Link, RemoteObject

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


def share_temporary_files() -> None:
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


class Plugin:
    def __init__(self, link: Link) -> None:
        self.link = link

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: object) -> None:
        self.link.forget_callbacks()

    @pytest.hookimpl(tryfirst=True)
    def pytest_assertrepr_compare(self, config: object, op: str, left: object,
                                  right: object) -> list[str] | None:
        if op not in ("==", "!=", "<", "<=", ">", ">="):
            return None
        remote = next((side for side in (left, right) if isinstance(side, RemoteObject)), None)
        other = right if remote is left else left
        if remote is None or isinstance(other, RemoteObject):
            return None
        kind = remote._sc_desc.get("type", "?")
        return [
            f"<{kind} object of the candidate> {op} {type(other).__name__}",
            f"The candidate returned a {kind} object, which stays in its own process: "
            "comparing it with plain data never runs the candidate's own comparison, so "
            "it is equal only to itself.",
            "Compare plain values instead (list(result), result.field, str(result)), "
            "or have the candidate return plain data; tests that must compare the "
            "candidate's objects directly need `isolation: in-process` in the spec.",
        ]
