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
- pdb never reads a .pdbrc (it would run its lines as debugger commands);
- a tar archive (the candidate's, say) extracts inside the folder it is extracted to, or
  not at all: no absolute or `..` name, no link of any kind, no device, nothing writable
  by others (stricter than Python 3.12's "data" filter; the image's 3.11.2 has none). Red
  teams' archives wrote /work/tests/numpy.py, which a test's later import then ran, and
  chained links to make the final pass chmod the tests' folder 0777;
- a file the tests wrote into a folder others may write (tmp_path, the working folder,
  /tmp) is read back only if it is still the file they wrote: gVisor lets a rename replace
  another uid's file in a sticky folder, and a red team's candidate replaced the input a
  test had written for it, which the test then compared its answer with.
"""

from __future__ import annotations

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
_WRITABLE_BY_ANYONE = 0o222


def trusted(entry: str) -> bool:
    """Whether nothing in the sandbox but root can change what `entry` (a sys.path entry: a
    folder, or a zip file) holds: root's and writable by root alone, or this uid's and not
    writable at all (the tests' own folder once the runner sealed it: this process may be
    steered into writing where it may, e.g. by extracting the candidate's archive). Checked
    at every lookup, never cached: a name the candidate controls may point elsewhere from
    one import to the next."""
    try:
        real = os.path.realpath(entry or os.curdir)
        held = [real] if os.path.isdir(real) else [real, os.path.dirname(real)]
        for path in held:
            status = os.stat(path)
            if status.st_uid == 0:
                writers = _WRITABLE_BY_OTHERS
            elif status.st_uid == os.getuid():
                writers = _WRITABLE_BY_ANYONE
            else:
                return False
            if status.st_mode & writers:
                return False
    except (OSError, TypeError, ValueError):
        return False
    return True


def install() -> None:
    _only_trusted_paths()
    sys.meta_path.insert(0, _MatplotlibFromRoot())
    _pdb_without_rc()
    _archives_stay_inside()
    _files_read_back_as_written()


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


# Plain classes, not importlib.abc's: importing that module (and importlib.resources with it)
# cost about 5 ms in every tests' process; the import system needs only these methods.
class _MatplotlibFromRoot:
    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname != "matplotlib":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _FromRoot(spec.loader)  # type: ignore[assignment]
        return spec


class _FromRoot:
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


def _archives_stay_inside() -> None:
    import tarfile

    extract_all = tarfile.TarFile.extractall
    extract_one = tarfile.TarFile.extract

    def extractall(self: tarfile.TarFile, path: Any = ".", members: Any = None,
                   **kwargs: Any) -> None:
        chosen = list(self.getmembers() if members is None else members)
        for member in chosen:
            _inside(member, os.fspath(path))
        extract_all(self, path, chosen, **kwargs)

    def extract(self: tarfile.TarFile, member: Any, path: Any = "", **kwargs: Any) -> None:
        info = self.getmember(member) if isinstance(member, str) else member
        _inside(info, os.fspath(path) or os.curdir)
        extract_one(self, member, path, **kwargs)

    tarfile.TarFile.extractall = extractall  # type: ignore[method-assign]
    tarfile.TarFile.extract = extract  # type: ignore[method-assign, assignment]


def _inside(member: Any, destination: str) -> None:
    import tarfile

    name = member.name
    if os.path.isabs(name) or _leaves(name):
        raise tarfile.ExtractError(f"refused {name!r}: it would be extracted outside "
                                   f"{destination}")
    # Links not at all: a red team chained links that each read as inside (b -> ., then
    # b/b/../../work/tests) and let the final pass that sets folders' modes chmod the
    # tests' folder 0777 through them. Nor devices or pipes.
    if member.issym() or member.islnk():
        raise tarfile.ExtractError(f"refused the link {name!r} (to {member.linkname!r}): "
                                   "archives are extracted here without links")
    if member.ischr() or member.isblk() or member.isfifo():
        raise tarfile.ExtractError(f"refused {name!r}: a device or pipe")
    # What is extracted is never writable by others, whatever the archive says: a mode
    # the final pass might still apply elsewhere (a link raced into place) opens nothing.
    member.mode &= 0o755
    real = os.path.realpath(os.path.join(destination, name))
    if os.path.commonpath([real, os.path.realpath(destination)]) != os.path.realpath(
            destination):
        raise tarfile.ExtractError(f"refused {name!r}: through a link, it would be "
                                   f"extracted outside {destination}")


def _leaves(relative: str) -> bool:
    return os.path.normpath(relative).split(os.sep)[0] == os.pardir


# Files this process wrote into folders others may write: path as given, made absolute (a
# link put in its place must not be followed to a new key) -> (device, inode) written.
_written: dict[str, tuple[int, int]] = {}


def _files_read_back_as_written() -> None:
    import builtins
    import io

    opened = io.open

    def checked_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        handle = opened(file, mode, *args, **kwargs)
        if isinstance(file, int):
            return handle
        try:
            key = os.path.abspath(os.fspath(file))
            status = os.fstat(handle.fileno())
        except (OSError, TypeError, ValueError):
            return handle
        now = (status.st_dev, status.st_ino)
        if any(flag in mode for flag in "wxa+"):
            if _others_may_write(os.path.dirname(key)):
                _written[key] = now
        elif _written.get(key, now) != now:
            handle.close()
            raise PermissionError(
                f"{file}: this test wrote it into a folder the candidate may write, and "
                "another process (the candidate's) has put a different file in its place "
                "since: the test does not read it")
        return handle

    builtins.open = checked_open
    io.open = checked_open
    _forget_on(os, "remove", "unlink")
    _moved_on(os, "rename", "replace")


def _others_may_write(folder: str) -> bool:
    try:
        return bool(os.stat(folder).st_mode & 0o002)
    except OSError:
        return False


def _forget_on(module: Any, *names: str) -> None:
    for name in names:
        made = getattr(module, name)

        def forgetting(path: Any, *args: Any, _made: Any = made, **kwargs: Any) -> Any:
            result = _made(path, *args, **kwargs)
            _forget(path)
            return result

        setattr(module, name, forgetting)


def _moved_on(module: Any, *names: str) -> None:
    for name in names:
        made = getattr(module, name)

        def moving(source: Any, target: Any, *args: Any, _made: Any = made,
                   **kwargs: Any) -> Any:
            result = _made(source, target, *args, **kwargs)
            kept = _forget(source)
            _forget(target)
            if kept is not None and isinstance(target, (str, os.PathLike)):
                _written[os.path.abspath(os.fspath(target))] = kept
            return result

        setattr(module, name, moving)


def _forget(path: Any) -> tuple[int, int] | None:
    try:
        return _written.pop(os.path.abspath(os.fspath(path)), None)
    except (TypeError, ValueError):
        return None
