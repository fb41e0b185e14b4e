"""Frozen tests that never run the candidate's code in pytest's process.

A `kind: function` candidate that its tests import runs inside pytest: code at its top level
or in its functions can register a pytest hook that rewrites every report to "passed",
replace the test functions, skip them, end the process with status 0 before they run, or
return an object whose `__eq__` always says True (issue 7). The exit-status/junit agreement
check stops some of that; nothing in pytest's process can stop all of it, since the candidate
would be running there too.

A test written against this module instead loads the candidate in a child process of its own
and talks to it over two pipes. Arguments go in and results come back as plain data (None,
bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset), rebuilt on this
side from tagged JSON, so pytest compares values that the candidate cannot fake. An
exception comes back as its built-in type, arguments and the candidate's own frames, so a
failure reads (and is classified) as it would in-process: `humaneval_3.py:7: in below_zero`,
`E   TypeError: ...`.

Before the first child starts, pytest's process makes itself non-dumpable (the child runs
as the same uid: it could otherwise write pytest's memory through /proc/<pid>/mem, or open
its descriptors) and takes the candidate's folder off sys.path (a module that pytest imports
lazily later, difflib for a string diff, must not be found among files the child wrote).
The child is a fork of pytest's process made at the first call, with nothing of it but the
two pipes, stdout and stderr (pytest's capture files) and its memory, which was pytest's
before any candidate code ran.

In the sandbox this file is `_selfcorrect_isolation.py` beside the tests, which use it as

    from _selfcorrect_isolation import remote_function
    def test_it():
        assert remote_function("two_sum.py", "two_sum")([2, 7], 9) == [1, 2]

It needs only the standard library, and runs under the sandbox's Python (3.11) as it is.
"""

from __future__ import annotations

import atexit
import base64
import builtins
import contextlib
import ctypes
import importlib.util
import json
import numbers
import os
import signal
import struct
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

SANDBOX_NAME = "_selfcorrect_isolation.py"
SANDBOX_MODULE = "_selfcorrect_isolation"
# A reply larger than this is the candidate flooding us, not a result.
MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 100
MAX_TEXT_CHARS = 2000
MAX_FRAMES = 8
MAX_LINENO = 100_000
MAX_NAME_CHARS = 100
PR_SET_DUMPABLE = 4
# Ints beyond this cross as hex: Python refuses to turn more than 4,300 digits into decimal.
_NATIVE_INT = 2**63
_HEADER = struct.Struct(">I")


class CandidateError(Exception):
    """The candidate raised something that is not one of Python's built-in exceptions, or
    it broke off talking to the tests (exited, or answered with something unreadable)."""


class Unsendable(TypeError):
    """A value that is not plain data: it cannot cross the process boundary."""


def harness_source() -> str:
    """This file's text: what the host copies into the sandbox beside the tests."""
    return Path(__file__).read_text(encoding="utf-8")


# ---- plain data over JSON ---------------------------------------------------------------

def encode(value: object, depth: int = 0) -> object:
    """`value` as tagged JSON. In the child this reads objects the candidate made, so only
    their plain content is taken: an int subclass crosses as its int value, whatever its
    `__eq__` says; anything else that is not plain data raises Unsendable."""
    if depth > MAX_DEPTH:
        raise Unsendable(f"the value is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        number = int(value)
        return number if -_NATIVE_INT < number < _NATIVE_INT else {"x": format(number, "x")}
    if isinstance(value, numbers.Real):
        return {"f": float.__repr__(float(value))}
    if isinstance(value, numbers.Complex):
        both = complex(value)
        return {"c": [float.__repr__(both.real), float.__repr__(both.imag)]}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes | bytearray):
        return {"b": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list):
        return [encode(item, depth + 1) for item in value]
    if isinstance(value, tuple):
        return {"t": [encode(item, depth + 1) for item in value]}
    if isinstance(value, dict):
        return {"d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, frozenset):
        return {"fs": [encode(item, depth + 1) for item in value]}
    if isinstance(value, set):
        return {"s": [encode(item, depth + 1) for item in value]}
    raise Unsendable(f"a {_type_name(value)} object is not plain data (None, bool, int, "
                     "float, complex, str, bytes, list, tuple, dict, set)")


def decode(data: object, depth: int = 0) -> Any:
    """The plain value tagged JSON stands for; anything else raises CandidateError. Only
    built-in types are ever made here, from JSON the child wrote."""
    if depth > MAX_DEPTH:
        raise CandidateError("the candidate's answer is nested too deeply")
    if data is None or isinstance(data, bool | int | str):
        return data
    if isinstance(data, list):
        return [decode(item, depth + 1) for item in data]
    if isinstance(data, dict) and len(data) == 1:
        ((tag, body),) = data.items()
        try:
            return _decode_tagged(tag, body, depth)
        except (TypeError, ValueError) as exc:
            raise CandidateError(f"the candidate's answer is malformed: {exc}") from None
    raise CandidateError(f"the candidate's answer holds a {type(data).__name__} that is "
                         "not tagged plain data")


def _decode_tagged(tag: str, body: object, depth: int) -> Any:
    if tag == "x" and isinstance(body, str):
        return int(body, 16)
    if tag == "f" and isinstance(body, str):
        return float(body)
    if tag == "c" and isinstance(body, list) and len(body) == 2:
        return complex(float(str(body[0])), float(str(body[1])))
    if tag == "b" and isinstance(body, str):
        return base64.b64decode(body.encode("ascii"), validate=True)
    if isinstance(body, list):
        items = [decode(item, depth + 1) for item in body]
        if tag == "t":
            return tuple(items)
        if tag == "s":
            return set(items)
        if tag == "fs":
            return frozenset(items)
        if tag == "d" and all(isinstance(pair, list) and len(pair) == 2 for pair in items):
            return {key: value for key, value in items}
    raise ValueError(f"unknown tag {tag[:20]!r}")


def _type_name(value: object) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"[:MAX_NAME_CHARS]


# ---- frames on the pipes ----------------------------------------------------------------

def _write_frame(fd: int, message: object) -> None:
    data = json.dumps(message, separators=(",", ":")).encode("utf-8", "surrogatepass")
    payload = memoryview(_HEADER.pack(len(data)) + data)
    while payload:
        payload = payload[os.write(fd, payload):]


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _read_frame(fd: int) -> object:
    """The next message, or None at EOF; ValueError for anything that is not a frame."""
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        raise ValueError(f"a message of {size:,} bytes")
    data = _read_exact(fd, size)
    if data is None:
        raise ValueError("the message ended early")
    return json.loads(data.decode("utf-8", "surrogatepass"), parse_constant=_no_constant)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not plain JSON")


# ---- the tests' side --------------------------------------------------------------------

class CandidateProcess:
    """The candidate module, loaded in a child process on first use."""

    def __init__(self, module_path: str) -> None:
        self.path = os.path.abspath(module_path)
        self._pid: int | None = None
        self._to_child = self._from_child = -1
        self._fakes: dict[tuple[int, str], types.TracebackType | None] = {}

    def call(self, name: str, args: tuple[object, ...], kwargs: dict[str, object]) -> Any:
        __tracebackhide__ = True
        try:
            sent = {"op": "call", "name": name, "args": encode(list(args)),
                    "kwargs": encode(kwargs)}
        except Unsendable as exc:
            raise Unsendable(f"an argument for {name}() cannot be sent to the candidate's "
                             f"process: {exc}") from None
        return self._answer(self._ask(sent))

    def attribute(self, name: str) -> Any:
        reply = self._ask({"op": "get", "name": name})
        if reply.get("callable") is True:
            return RemoteFunction(self, name)
        return self._answer(reply)

    def close(self) -> None:
        pid, self._pid = self._pid, None
        if pid is None:
            return
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def _ask(self, message: dict[str, object]) -> dict[str, Any]:
        if self._pid is None:
            self._start()
        try:
            _write_frame(self._to_child, message)
            reply = _read_frame(self._from_child)
        except OSError:
            reply = None
        except ValueError as exc:
            raise CandidateError(f"the candidate's process answered with something that is "
                                 f"not a result: {exc}") from None
        if reply is None:
            raise CandidateError(f"the candidate's process ended ({self._ended()}) before "
                                 "it answered")
        if not isinstance(reply, dict):
            raise CandidateError("the candidate's process answered with something that is "
                                 "not a result")
        return reply

    def _answer(self, reply: dict[str, Any]) -> Any:
        __tracebackhide__ = True  # pytest shows the candidate's frames, not ours
        if "ok" in reply:
            return decode(reply["ok"])
        raised = reply.get("raised")
        if not isinstance(raised, dict):
            raise CandidateError("the candidate's process answered with something that is "
                                 "not a result")
        raise self._exception(raised).with_traceback(self._traceback(raised.get("frames")))

    def _start(self) -> None:
        """Fork the child. A fork, not a new interpreter: about 20 ms less per candidate
        (the batch benchmark runs hundreds), and no less separate: the child gets a copy of
        this process, keeps only the two pipes and stdio, and never returns from _serve."""
        _harden_tests_process(os.path.dirname(self.path))
        to_read, self._to_child = os.pipe()
        self._from_child, from_write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(self.path, to_read, from_write, (self._to_child, self._from_child))
        self._pid = pid
        os.close(to_read)
        os.close(from_write)
        atexit.register(self.close)

    def _ended(self) -> str:
        if self._pid is None:
            return "not started"
        for _ in range(100):
            try:
                pid, status = os.waitpid(self._pid, os.WNOHANG)
            except ChildProcessError:
                return "gone"
            if pid:
                code = os.waitstatus_to_exitcode(status)
                return f"exit status {code}" if code >= 0 else f"killed by signal {-code}"
            time.sleep(0.01)
        return "closed its channel"

    def _exception(self, raised: dict[str, Any]) -> BaseException:
        name = _identifier(raised.get("name")) or "Exception"
        base = getattr(builtins, str(raised.get("base")), None)
        if not (isinstance(base, type) and issubclass(base, Exception)):
            base = CandidateError  # SystemExit, KeyboardInterrupt...: never raised here
        try:
            args = decode(raised.get("args", []))
        except CandidateError:
            args = [str(raised.get("args"))[:MAX_TEXT_CHARS]]
        if not isinstance(args, list):
            args = [str(args)[:MAX_TEXT_CHARS]]
        kind = base if name == base.__name__ else type(name, (base,), {"__module__": "candidate"})
        try:
            made: BaseException = kind(*args)
            return made
        except Exception:
            return CandidateError(f"{name}: {' '.join(str(arg) for arg in args)}"[:MAX_TEXT_CHARS])

    def _traceback(self, frames: object) -> types.TracebackType | None:
        """The candidate's frames (line, function) as a traceback pytest can print: each is
        a tiny code object compiled under the candidate's file name to raise at that line."""
        chain: types.TracebackType | None = None
        if not isinstance(frames, list):
            return None
        for item in reversed(frames[-MAX_FRAMES:]):
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)):
                continue
            fake = self._fake(item[0], _identifier(item[1]) or "<module>")
            if fake is not None:
                chain = types.TracebackType(chain, fake.tb_frame, fake.tb_lasti, fake.tb_lineno)
        return chain

    def _fake(self, lineno: int, name: str) -> types.TracebackType | None:
        if not 0 < lineno <= MAX_LINENO:
            return None
        if (lineno, name) not in self._fakes:
            code = compile("\n" * (lineno - 1) + "raise __selfcorrect_marker__", self.path,
                           "exec").replace(co_name=name)
            try:
                exec(code, {"__selfcorrect_marker__": _Marker()})
            except _Marker as marker:
                self._fakes[(lineno, name)] = marker.__traceback__.tb_next if (
                    marker.__traceback__) else None
        return self._fakes[(lineno, name)]


class _Marker(Exception):
    pass


class RemoteFunction:
    """A function of the candidate module, called in its process."""

    def __init__(self, process: CandidateProcess, name: str) -> None:
        self._process = process
        self.__name__ = name

    def __call__(self, *args: object, **kwargs: object) -> Any:
        __tracebackhide__ = True
        return self._process.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        # pytest's assertion rewrite shows "where 3 = below_zero([1, -4])".
        return self.__name__


class RemoteModule:
    """The candidate module: `remote_module("two_sum.py").two_sum(...)`. A function comes
    back as a RemoteFunction, plain data as its value; nothing else crosses."""

    def __init__(self, process: CandidateProcess) -> None:
        self._process = process

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._process.attribute(name)


_processes: dict[str, CandidateProcess] = {}


def _process_for(module_path: str) -> CandidateProcess:
    path = os.path.abspath(module_path)
    if path not in _processes:
        _processes[path] = CandidateProcess(path)
    return _processes[path]


def remote_function(module_path: str, name: str) -> RemoteFunction:
    """`name` from the candidate at `module_path`; its process starts at the first call."""
    return RemoteFunction(_process_for(module_path), name)


def remote_module(module_path: str) -> RemoteModule:
    return RemoteModule(_process_for(module_path))


_hardened = False


def _harden_tests_process(candidate_dir: str) -> None:
    """Once, before the first child starts: see the module docstring."""
    global _hardened
    if _hardened:
        return
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise CandidateError("cannot make the tests' process non-dumpable "
                                 f"(errno {ctypes.get_errno()}): the candidate is not started")
    shadowing = {os.path.realpath(place) for place in (candidate_dir, os.getcwd())}
    unprivileged = os.getuid() != 0
    sys.path[:] = [
        entry for entry in sys.path
        if entry not in ("", ".") and not any(
            _within(os.path.realpath(entry), place) for place in shadowing)
        and not (unprivileged and os.access(entry, os.W_OK))
    ]
    _hardened = True


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _identifier(raw: object) -> str:
    text = str(raw)[:MAX_NAME_CHARS] if raw is not None else ""
    return text if text.replace(".", "_").isidentifier() else ""


# ---- the candidate's side (the child process) -------------------------------------------

def _child(path: str, from_tests: int, to_tests: int, parents: tuple[int, int],
           _exit: Callable[[int], NoReturn] = os._exit) -> NoReturn:
    """The forked child: its own session (everything it starts dies with it), stdin from
    /dev/null, no descriptor of the tests' but stdout and stderr (pytest's capture files),
    then the candidate. `_exit` is bound here, before the candidate can replace os._exit."""
    try:
        os.setsid()
        for fd in parents:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        keep = sorted({0, 1, 2, from_tests, to_tests})
        for low, high in zip(keep, [*keep[1:], _max_fd()], strict=True):
            os.closerange(low + 1, high)
        _serve(path, from_tests, to_tests)
    finally:
        _exit(0)


def _max_fd() -> int:
    try:
        return max(int(os.sysconf("SC_OPEN_MAX")), 256)
    except (ValueError, OSError):
        return 65536


def _serve(path: str, from_tests: int, to_tests: int) -> None:
    """Load the candidate module, then answer calls until the tests close the pipe."""
    sys.path.insert(0, os.path.dirname(path))
    module: types.ModuleType | None = None
    failure: dict[str, object] | None = None
    try:
        spec = importlib.util.spec_from_file_location(Path(path).stem, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    except BaseException as exc:  # whatever the candidate raises, reported
        failure = _described(exc, path)
    while True:
        message = _read_frame(from_tests)
        if message is None:
            return
        reply: dict[str, object] = ({"raised": failure} if failure is not None or module is None
                                    else _answer(module, message, path))
        try:
            _write_frame(to_tests, reply)
        except Unsendable as exc:  # a value only json itself refused (a huge str...)
            _write_frame(to_tests, {"raised": _described(exc, path)})


def _answer(module: types.ModuleType, message: object, path: str) -> dict[str, object]:
    try:
        if not isinstance(message, dict):
            raise TypeError("the tests sent something that is not a request")
        name = str(message.get("name"))
        if message.get("op") == "get":
            value = getattr(module, name)
            return {"callable": True} if callable(value) else {"ok": encode(value)}
        function = getattr(module, name)
        args = decode(message.get("args", []))
        kwargs = decode(message.get("kwargs", {}))
        return {"ok": encode(function(*args, **kwargs))}
    except BaseException as exc:  # reported to the tests, never raised here
        return {"raised": _described(exc, path)}


def _described(exc: BaseException, path: str) -> dict[str, object]:
    builtin_base = next(kind for kind in type(exc).__mro__ if kind.__module__ == "builtins")
    try:
        args = encode(list(exc.args))
    except Exception:  # arguments that are not plain data: their text
        args = [str(exc)[:MAX_TEXT_CHARS]]
    frames = [[lineno, frame.f_code.co_name] for frame, lineno in _walk(exc.__traceback__)
              if frame.f_code.co_filename == path]
    return {"name": type(exc).__name__, "base": builtin_base.__name__, "args": args,
            "frames": frames[-MAX_FRAMES:]}


def _walk(tb: types.TracebackType | None) -> list[tuple[types.FrameType, int]]:
    found = []
    while tb is not None:
        found.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return found
