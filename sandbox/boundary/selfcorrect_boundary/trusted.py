"""What the tests' process reads: code and configuration from folders the candidate cannot
write, whatever folder the tests are in or put on sys.path.

The candidate may write the tests' working folder (/work/shared, so that files either side
writes by relative path reach the other), the folders tests make (tmp_path: tests hand their
paths to the candidate) and /tmp. Red teams passed wrong answers through each: a module the
candidate wrote into the working folder, imported by a test that put that folder on
sys.path; a matplotlibrc (matplotlib eval()s part of it) written into the tmp_path a test
had moved into. So, in this process only:

- modules are found only in folders owned by root or the tests' uid that nobody else may
  write (sys.path entries elsewhere are passed over, as if empty), pytest's assertion
  rewriter included, which keeps its own reference to the path finder;
- matplotlib is imported with the working folder set to "/" for the length of the import,
  which is when it reads ./matplotlibrc (before any other rc file);
- pdb never reads a .pdbrc (it would run its lines as debugger commands).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

# typing.TYPE_CHECKING without importing typing at run time (mypy reads the name itself).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

_WRITABLE_BY_OTHERS = 0o022


def trusted(entry: str) -> bool:
    """Whether nobody but root and this uid can change what `entry` (a sys.path entry: a
    folder, or a zip file) holds. Checked at every lookup, never cached: a name the
    candidate controls may point elsewhere from one import to the next."""
    try:
        real = os.path.realpath(entry or os.curdir)
        held = [real] if os.path.isdir(real) else [real, os.path.dirname(real)]
        for path in held:
            status = os.stat(path)
            if status.st_uid not in (0, os.getuid()) or status.st_mode & _WRITABLE_BY_OTHERS:
                return False
    except (OSError, TypeError, ValueError):
        return False
    return True


def install() -> None:
    _only_trusted_paths()
    sys.meta_path.insert(0, _MatplotlibFromRoot())
    _pdb_without_rc()


def _only_trusted_paths() -> None:
    finder = importlib.machinery.PathFinder
    found = finder.find_spec  # bound to the class: the original lookup

    def find_spec(cls: type, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        search = sys.path if path is None else path
        return found(fullname, [entry for entry in search if trusted(entry)], target)

    finder.find_spec = classmethod(find_spec)  # type: ignore[method-assign, assignment]
    rewrite = sys.modules.get("_pytest.assertion.rewrite")
    if rewrite is not None:  # imported already (a warm start): it holds the original
        rewrite.AssertionRewritingHook._find_spec = finder.find_spec


class _MatplotlibFromRoot(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname != "matplotlib":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _FromRoot(spec.loader)
        return spec


class _FromRoot(importlib.abc.Loader):
    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        made: ModuleType | None = self._loader.create_module(spec)
        return made

    def exec_module(self, module: ModuleType) -> None:
        # Back by descriptor, not by name: a name in a folder others write may lead
        # elsewhere by the time the import is done.
        here = os.open(os.curdir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.chdir("/")
            self._loader.exec_module(module)
        finally:
            os.fchdir(here)
            os.close(here)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package...
        return getattr(self._loader, name)


def _pdb_without_rc() -> None:
    import pdb

    made = pdb.Pdb.__init__

    def init(self: pdb.Pdb, *args: Any, **kwargs: Any) -> None:
        kwargs["readrc"] = False
        if len(args) > 5:
            args = args[:5]
        made(self, *args, **kwargs)

    pdb.Pdb.__init__ = init  # type: ignore[method-assign]
