"""A warm interpreter: started by the runner while a pooled container waits for its request,
it imports the libraries the task's scripts use (numpy, pandas, matplotlib, ...) and then
*becomes* the script. It does not fork: the container serves one execution, so the process
that did the imports is the script's own process, and no parent outlives the hand-over with
memory the script could reach or that would count against its limit.

    python3 /opt/selfcorrect/warm.py REQUEST_FD READY_FD MODULE[,MODULE...]

The runner spawned it exactly as it spawns a cold script (same uid, session, seccomp filter,
signal dispositions, stdin from /dev/null, stdout and stderr into its capture pipes, OOM
score), with two more descriptors: READY_FD, where one byte says the imports are done, and
REQUEST_FD, from which it reads the request as JSON ({"argv", "env", "cwd"}) until EOF. An
EOF without a request means the runner chose a cold start: it exits.

What a cold `python3 -- script.py` would see and this one must too: sys.argv, sys.path[0]
(the script's folder), __main__ as a fresh module with __file__, the environment of the
request, the working directory, an uncaught exception's traceback starting at the script,
a SyntaxError printed as the interpreter prints it, the exit status. What differs, by
design: the preloaded modules are already in sys.modules (and what they made is frozen out
of the garbage collector's generations: gc.get_freeze_count() is not 0), and the hash seed
is the one this interpreter started with (it cannot be re-seeded after start; harmless,
since the container serves one run and the seed is random either way). random and
numpy.random were seeded from the OS at import and nothing consumed them.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


def main(argv: list[str]) -> int:
    request_fd, ready_fd = int(argv[1]), int(argv[2])
    printed = _quietly(filter(None, argv[3].split(",")))
    # What the imports made is module state for the life of the process: kept out of the
    # collector's way, the script's collections (and the interpreter's at exit, about 150
    # ms with pandas and matplotlib loaded) only walk what the script made. The script's
    # own objects are collected and finalised as in a cold interpreter.
    import gc

    gc.collect()
    gc.freeze()
    # "N": an import printed something (a warning, a cache being built), which a cold start
    # would show in the script's output: the runner starts this script cold instead.
    os.write(ready_fd, b"N" if printed else b"R")
    os.close(ready_fd)
    if printed:
        return 0
    raw = _read_all(request_fd)
    if not raw:
        return 0  # the runner started the script cold
    import json

    request = json.loads(raw)
    return _become(request["argv"], request["env"], request["cwd"])


def _quietly(names: Iterable[str]) -> bool:
    """Preload `names` with stdout and stderr into a pipe of their own; whether anything
    was printed there."""
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    saved = [os.dup(1), os.dup(2)]
    os.dup2(write_end, 1)
    os.dup2(write_end, 2)
    try:
        for name in names:
            _preload(name)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, write_end):
            os.close(fd)
    try:
        printed = bool(os.read(read_end, 1))
    except BlockingIOError:
        printed = False
    os.close(read_end)
    return printed


# Interpreter flags a request may start with, and what each sets in sys.flags: the request
# must have exactly the ones this interpreter was started with, or it is started cold.
FLAGS = {"-I": "isolated", "-S": "no_site", "-B": "dont_write_bytecode"}
BOUNDARY_ROOT = "/opt/selfcorrect/boundary"
# pytest's own plugins, which it imports at every session's start (_pytest.config's list).
PYTEST_PLUGINS = (
    "mark", "main", "runner", "fixtures", "helpconfig", "python", "terminal", "debugging",
    "unittest", "capture", "skipping", "legacypath", "tmpdir", "monkeypatch", "recwarn",
    "pastebin", "nose", "assertion", "junitxml", "doctest", "freeze_support", "setuponly",
    "setupplan", "stepwise", "warnings", "logging", "reports", "python_path",
    "unraisableexception", "threadexception", "faulthandler")


def _preload_boundary_plain() -> None:
    """The launcher's imports for tests that need no pytest (boundary/.../plain.py)."""
    sys.path.insert(0, BOUNDARY_ROOT)
    try:
        from selfcorrect_boundary import startup

        startup.site_packages()
        from selfcorrect_boundary import client, plain, temporary, trusted  # noqa: F401
    finally:
        sys.path.remove(BOUNDARY_ROOT)
    import json  # noqa: F401


def _preload_boundary() -> None:
    """The frozen tests' launcher's imports (sandbox/boundary/run_tests.py, which runs with
    -S and adds the site folders itself), pytest and its plugins, and the scan of installed
    plugins' entry points that every pytest session does (its folders' listings are cached)."""
    sys.path.insert(0, BOUNDARY_ROOT)
    try:
        from selfcorrect_boundary import startup

        startup.site_packages()
        from selfcorrect_boundary import client, plain, plugin, temporary, trusted  # noqa: F401
    finally:
        sys.path.remove(BOUNDARY_ROOT)
    import importlib.metadata

    import pytest  # noqa: F401

    for name in PYTEST_PLUGINS:
        _preload(f"_pytest.{name}")
    importlib.metadata.entry_points(group="pytest11")


def _preload(name: str) -> None:
    """Import one module; a module that fails to import is simply not preloaded (the script
    meets the same failure itself, cold, if it imports it)."""
    if name == "@boundary":
        _preload_boundary()
        return
    if name == "@boundary-plain":
        _preload_boundary_plain()
        return
    try:
        __import__(name)
    except BaseException:  # an import may raise anything, even SystemExit
        for loaded in [key for key in sys.modules if key == name or key.startswith(name + ".")]:
            del sys.modules[loaded]


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except InterruptedError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _command(argv: list[str]) -> tuple[str, list[str]] | None:
    """The script and its arguments of `python3 [FLAGS] [--] SCRIPT ARGS...`, when FLAGS are
    this interpreter's own; None for any other command."""
    index, flags = 1, set()
    while index < len(argv) and argv[index] in FLAGS:
        flags.add(argv[index])
        index += 1
    dashed = index < len(argv) and argv[index] == "--"
    index += dashed
    if index >= len(argv) or (argv[index].startswith("-") and not dashed):
        return None
    own = {flag for flag in FLAGS if flag in sys.orig_argv[1:sys.orig_argv.index(__file__)]}
    return (argv[index], argv[index + 1:]) if flags == own else None


def _become(argv: list[str], env: dict[str, str], cwd: str) -> int:
    import builtins
    import importlib.machinery
    import types

    command = _command(argv)
    if command is None:
        os.execv(sys.executable, argv)  # as a cold start, in this very process
    script_arg, args = command
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    path = os.path.abspath(script_arg)
    try:
        with open(path, "rb") as handle:
            source = handle.read()
        code = compile(source, path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        # Whatever the interpreter itself says about a missing or unparsable file (its exact
        # words and exit status) is what a cold start says: exec one.
        os.execv(sys.executable, argv)
    sys.argv = [script_arg, *args]
    sys.orig_argv = list(argv)
    if not sys.flags.safe_path:  # -I (or -P): the script's folder is not on sys.path
        sys.path[0] = os.path.dirname(path)
    main_module = types.ModuleType("__main__")
    main_module.__file__ = path
    main_module.__cached__ = None  # type: ignore[attr-defined]
    main_module.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main_module.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = main_module
    try:
        exec(code, main_module.__dict__)
    except SystemExit:
        raise
    except BaseException as exc:  # printed as the interpreter prints it
        # From the script's first frame on, as a cold interpreter prints it (the hook reads
        # the exception's own traceback).
        traceback = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        exc.__traceback__ = traceback
        sys.excepthook(type(exc), exc, traceback)
        if isinstance(exc, KeyboardInterrupt):
            import signal

            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
