"""The tests' side: the link to the candidate's process, the stand-ins the tests use, and the
import hook that serves `import <candidate>` through them.

Trust runs one way. Everything read from the candidate's process is checked here before a
test sees it: replies are size-capped JSON, values are rebuilt by codec.decode as built-in
types, names become identifiers, exceptions become Python's own classes (or stand-ins of
the candidate's, made here), and nothing the candidate sent ever runs as code here.

A stand-in for one of the candidate's objects forwards attribute access, calls, indexing,
iteration and arithmetic to the candidate's process. Comparing it with plain data never asks
the candidate: an object whose class derives from a built-in type (an int, a tuple, a dict)
is compared by its built-in content, fetched and rebuilt here; any other object is equal
only to itself. Two of the candidate's objects are compared by the candidate (a test of its
own `__eq__`).
"""

from __future__ import annotations

import _frozen_importlib
import _operator as operator
import _socket
import builtins
import linecache
import os
import sys
import time
import types
import warnings
import weakref
from _struct import unpack

from selfcorrect_boundary import (
    BoundaryError,
    CandidateCrashed,
    CandidateHung,
    CandidateRefused,
    NotPlainData,
    ProtocolBroken,
    codec,
)

# typing.TYPE_CHECKING without importing typing at run time (mypy reads the name itself).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NoReturn, TypeVar

    _T = TypeVar("_T")

# pytest leaves this module's frames out of every traceback it prints: a failure reads as
# the test's line and the candidate's, as it would in one process.
__tracebackhide__ = True

MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_TEXT_CHARS = 2000
MAX_LINENO = 100_000
MAX_FAKE_FRAMES = 512
MAX_RESTARTS = 32
MAX_DOC_CHARS = 10_000
MAX_DEATHS_AT_IMPORT = 3
NAME_CHARS = 100
_BOUNDARY_ERRORS: dict[str, type[BoundaryError]] = {
    kind.__name__: kind for kind in (NotPlainData, ProtocolBroken, CandidateHung)}
# Attributes pytest probes on every name a test module holds: never the candidate's to
# answer (its answers could only confuse collection).
_PROBES = ("_pytest", "pytestmark", "__test__")
_NO_TIME_LEFT = ("the test run's time limit was used up by earlier calls (a call that hung or "
                 "ran long): this call was not made")
# Exceptions that a test framework reads as an outcome, not a failure: never rebuilt from
# what the candidate raised.
CONTROL_MODULES = ("_pytest", "pytest", "unittest", "pluggy", "selfcorrect_boundary")
_FIX = ("pass plain data (numbers, str, bytes, lists, tuples, dicts, sets, datetime, "
        "Decimal, paths, numpy arrays, pandas objects) or functions, or set "
        "`isolation: in-process` in the spec for tests that need real objects")


def _identifier(raw: object, default: str = "") -> str:
    text = str(raw)[:NAME_CHARS] if raw is not None else ""
    return text if text and text.replace(".", "_").isidentifier() else default


class Link(codec.Peer):
    """One test run's connection to the candidate: restarted by the runner when the
    candidate's process dies or hangs, each process an epoch of its own."""

    def __init__(self, control_fd: int, name: str, path: str, source: str,
                 deadline: float, reserve_s: float) -> None:
        self.control = _socket.socket(fileno=control_fd)
        self.name, self.path = name, path
        self.deadline, self.reserve_s = deadline, reserve_s
        self.sock: _socket.socket | None = None
        self.epoch = 0
        self.restarts = 0
        self.deaths_at_import = 0
        self.buffer = b""
        self.callbacks: dict[int, Callable[..., object]] = {}
        self.callback_ids: dict[int, int] = {}
        self.next_callback = 1
        self.proxies: weakref.WeakValueDictionary[int, RemoteObject | RemoteClass] = (
            weakref.WeakValueDictionary())
        self.classes: dict[int, RemoteClass] = {}
        self.class_by_name: dict[str, RemoteClass] = {}
        self.exceptions: dict[str, type] = {}
        self.releases: list[int] = []
        self.callback_failure: BoundaryError | None = None
        self.namespace: dict | None = None
        self.import_failure: dict | None = None
        # What the tests' process started with (the candidate's has its own home and
        # caches): only what a test changes from there is sent.
        self.started_env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        self.started_cwd = _cwd()
        self.sent_env, self.sent_cwd = self.started_env, self.started_cwd
        self.sent_log_level: int | None = None
        self.module: RemoteModule | None = None
        if source:
            linecache.cache[path] = (len(source), None, source.splitlines(True), path)

    # -- the candidate's process ------------------------------------------------------

    def _connect(self) -> None:
        if self.sock is not None:
            return
        if self.deadline - self.reserve_s - time.monotonic() <= 0:
            raise CandidateHung(_NO_TIME_LEFT)
        if self.restarts >= MAX_RESTARTS:
            raise CandidateCrashed(f"the candidate's process ended {self.restarts} times; "
                                   "it is not started again in this run")
        if self.deaths_at_import >= MAX_DEATHS_AT_IMPORT:
            raise CandidateCrashed("the candidate's process ended while its module was "
                                   f"being imported, {self.deaths_at_import} times; it is "
                                   "not started again in this run")
        status, fd = self._control(b"S")
        if fd is None:
            raise CandidateCrashed(f"the candidate's process could not be started: {status}")
        self.sock = _socket.socket(fileno=fd)
        # A new process starts as the first did: tell it what the tests have changed since.
        self.sent_env, self.sent_cwd = self.started_env, self.started_cwd
        self.sent_log_level = None
        self.epoch += 1
        self.restarts += 1 if self.epoch > 1 else 0
        self.proxies = weakref.WeakValueDictionary()
        self.classes = {}
        self.releases = []
        reply = self._exchange({"op": "load"}, loading=True)
        self._deliver(reply)  # what the module printed while it was imported
        if "raised" in reply:
            self.namespace, self.import_failure = None, reply["raised"]
            return
        namespace = reply.get("ok")
        if not isinstance(namespace, dict) or not isinstance(namespace.get("names"), dict):
            self._fail(ProtocolBroken("the candidate's process described its module in a "
                                      "form that is not a namespace"), loading=True)
        self.namespace, self.import_failure = namespace, None
        self._learn_classes(namespace["names"])

    def _control(self, command: bytes) -> tuple[str, int | None]:
        """One command to the runner: its answer, and the socket it handed over if any."""
        self.control.sendall(command + b"\n")
        message, ancillary, _flags, _addr = self.control.recvmsg(4096, _socket.CMSG_LEN(4))
        fds = [unpack("i", data[:4])[0] for level, kind, data in ancillary
               if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS and len(data) >= 4]
        text = message.decode("utf-8", "replace").strip()
        return text[3:] if text.startswith("OK") else text, (fds[0] if fds else None)

    def reset(self) -> None:
        """After a plain run in a child of this process (plain.py), which used this link's
        control socket but none of this object: the runner ends the candidate's process it
        left, so that the next import starts a fresh one. Replies to commands the child
        sent and did not read come first, in order, each discarded."""
        self.control.sendall(b"R\n")
        pending = b""
        while True:
            message, ancillary, _flags, _addr = self.control.recvmsg(4096, _socket.CMSG_LEN(4))
            for level, kind, data in ancillary:
                if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS and len(data) >= 4:
                    _socket.socket(fileno=unpack("i", data[:4])[0]).close()
            if not message:
                raise CandidateCrashed("the runner closed the tests' control socket")
            pending += message
            if b"RESET\n" in pending:
                return

    def _disconnect(self) -> str:
        """Close the channel and have the runner kill what is left of the process: how it
        ended, for the error the test sees."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        self.buffer = b""
        status, fd = self._control(b"K")
        if fd is not None:
            _socket.socket(fileno=fd).close()
        return status

    def _fail(self, error: BoundaryError, *, loading: bool = False) -> NoReturn:
        status = self._disconnect()
        if loading:
            self.deaths_at_import += 1
        raise type(error)(f"{error} ({status})" if status else str(error)) from None

    # -- requests -----------------------------------------------------------------------

    def request(self, message: dict, args: tuple = (), kwargs: dict | None = None) -> object:
        """Send one request and return its value (or raise what the candidate raised); a
        call's changed arguments are applied to `args` and `kwargs` first."""
        __tracebackhide__ = True
        self._connect()
        if self.import_failure is not None:
            raise self.rebuild(self.import_failure)
        reply = self._exchange(message)
        failure, self.callback_failure = self.callback_failure, None
        self._deliver(reply)
        if failure is not None:
            raise failure
        self._write_back(reply.get("back"), args, kwargs or {})
        if "raised" in reply:
            iterating = message.get("op") == "op" and message.get("name") == "next"
            raise self.rebuild(reply["raised"], iterating=iterating)
        same = reply.get("same")
        if isinstance(same, str):  # it returned an argument it was given: that object
            return _argument(same, args, kwargs or {}, lambda: self.decode(reply.get("ok")))
        return self.decode(reply.get("ok"))

    def _exchange(self, message: dict, *, loading: bool = False) -> dict:
        __tracebackhide__ = True
        if self.releases:
            message["release"], self.releases = self.releases, []
        self._with_surroundings(message)
        what = "while its module was being imported" if loading else "during the call"
        if self.deadline - self.reserve_s - time.monotonic() <= 0:
            raise CandidateHung(_NO_TIME_LEFT)
        try:
            self._send(message)
            while True:
                reply = self._receive()
                if not isinstance(reply, dict):
                    raise ProtocolBroken("the candidate's process answered with something "
                                         "that is not a reply")
                if "callback" not in reply:
                    return reply
                self._send(self._run_callback(reply["callback"]))
        except TimeoutError:
            self._fail(CandidateHung(f"the candidate did not answer in time {what}: it hung "
                                     "or ran too long, and its process was killed"),
                       loading=loading)
        except (ConnectionError, EOFError, OSError):
            self._fail(CandidateCrashed(f"the candidate's process ended {what}"),
                       loading=loading)
        except ProtocolBroken as exc:
            self._fail(exc, loading=loading)
        raise AssertionError("unreachable")

    def _with_surroundings(self, message: dict) -> None:
        """What changed in the tests' environment variables and working folder since the
        candidate's process last heard (a new process hears all of it)."""
        # Never pytest's own variables: PYTEST_CURRENT_TEST names the test, and a test's
        # name (its parameters) can spell its expected value.
        now = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        if now != self.sent_env:
            message["env"] = {"set": {k: v for k, v in now.items() if self.sent_env.get(k) != v},
                              "unset": [k for k in self.sent_env if k not in now]}
            self.sent_env = now
        cwd = _cwd()
        if cwd and cwd != self.sent_cwd:
            message["cwd"] = self.sent_cwd = cwd
        logging = sys.modules.get("logging")
        level = logging.getLogger().level if logging is not None else None
        if level is not None and level != self.sent_log_level:
            message["log_level"] = self.sent_log_level = level

    def _send(self, message: dict) -> None:
        assert self.sock is not None
        self.sock.settimeout(self._wait())
        self.sock.sendall(codec.dump_frame(message))

    def _receive(self) -> object:
        header = self._exactly(codec.HEADER_SIZE)
        size = codec.frame_size(header)
        if size > MAX_FRAME_BYTES:
            raise ProtocolBroken(f"the candidate's process sent a reply of {size:,} bytes")
        try:
            return codec.load_frame_body(self._exactly(size))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ProtocolBroken(f"the candidate's reply is not JSON: {exc}") from None

    def _exactly(self, size: int) -> bytes:
        assert self.sock is not None
        while len(self.buffer) < size:
            self.sock.settimeout(self._wait())
            chunk = self.sock.recv(max(65536, size - len(self.buffer)))
            if not chunk:
                raise EOFError
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def _wait(self) -> float:
        left = self.deadline - self.reserve_s - time.monotonic()
        if left <= 0:
            raise TimeoutError  # mid-exchange: the candidate is what used the time
        return left

    def _deliver(self, reply: dict) -> None:
        """What the candidate printed and warned during the request, as if here."""
        for key, stream in (("out", sys.stdout), ("err", sys.stderr)):
            text = reply.get(key)
            if isinstance(text, str) and text:
                stream.write(text)
        self._log_again(reply.get("logs"))
        for item in reply.get("warnings", [])[:20] if isinstance(
                reply.get("warnings"), list) else []:
            if isinstance(item, list) and len(item) == 5:
                name, module, base, message, line = item
                category = self._warning_class(name, module, base)
                warnings.warn_explicit(str(message)[:MAX_TEXT_CHARS], category, self.path,
                                       line if isinstance(line, int) and 0 <= line
                                       < MAX_LINENO else 0, module=self.name)

    def _log_again(self, logs: object) -> None:
        """The candidate's log records, made again here: caplog sees them."""
        logging = sys.modules.get("logging")
        if logging is None or not isinstance(logs, list):
            return
        for item in logs[:200]:
            if not (isinstance(item, list) and len(item) == 4 and type(item[1]) is int):
                continue
            name, level, text, line = item
            logger = logging.getLogger(_identifier(name) or "candidate")
            record = logger.makeRecord(logger.name, level, self.path,
                                       line if type(line) is int and line >= 0 else 0,
                                       str(text)[:MAX_TEXT_CHARS], None, None)
            logger.handle(record)

    def _warning_class(self, name: object, module: object, base: object) -> type[Warning]:
        builtin = getattr(builtins, str(base), None)
        if not (isinstance(builtin, type) and issubclass(builtin, Warning)):
            builtin = UserWarning
        if module == self.name and str(name) in self.exceptions and issubclass(
                self.exceptions[str(name)], Warning):
            return self.exceptions[str(name)]
        return builtin

    def forget_callbacks(self) -> None:
        """After each test: the functions it passed are no longer the candidate's to call."""
        self.callbacks.clear()
        self.callback_ids.clear()

    def _run_callback(self, body: object) -> dict:
        """Run one of the tests' functions for the candidate. What it raises reaches the
        candidate as a built-in exception; an assertion of the test's, or a pytest outcome
        (skip, fail), also fails the call whatever the candidate does with it, as it would
        have failed the test had the test called the function itself."""
        try:
            if not (isinstance(body, list) and len(body) == 3):
                raise ProtocolBroken("a malformed callback")
            key, args, kwargs = body[0], self.decode(body[1]), self.decode(body[2])
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise ProtocolBroken("a callback's arguments")
            function = self._callback(key)
            result = function(*args, **kwargs)
            return {"ok": codec.encode(result, self)}
        except BoundaryError as exc:
            self.callback_failure = self.callback_failure or exc
            return {"raised": {"builtin": "RuntimeError", "text": str(exc)[:MAX_TEXT_CHARS]}}
        except Exception as exc:  # the test's own function raised: the candidate sees it
            if isinstance(exc, AssertionError):
                self.callback_failure = self.callback_failure or _kept(exc)
            builtin = next(k for k in type(exc).__mro__ if k.__module__ == "builtins")
            return {"raised": {"builtin": builtin.__name__, "text": str(exc)[:MAX_TEXT_CHARS]}}
        except BaseException as exc:  # pytest.skip/fail/exit, SystemExit in the test's code
            self.callback_failure = self.callback_failure or CandidateRefused(
                f"a function of the tests' that the candidate called raised "
                f"{type(exc).__name__}({str(exc)[:200]!r}): it fails this call")
            return {"raised": {"builtin": "RuntimeError", "text": str(exc)[:MAX_TEXT_CHARS]}}

    def _callback(self, key: object) -> Callable[..., object]:
        if key == "input":
            return builtins.input
        if key == "stdin.read":
            return lambda size: sys.stdin.read(size)
        if key == "stdin.readline":
            return lambda size: sys.stdin.readline(size)
        if type(key) is int and key in self.callbacks:
            return self.callbacks[key]
        raise ProtocolBroken("a callback the tests never gave")

    # -- values (the codec's peer) ------------------------------------------------------

    def decode(self, data: object) -> object:
        return codec.decode(data, self)

    def encode(self, value: object) -> object:
        return codec.encode(value, self)

    def export(self, value: Any, depth: int) -> dict:
        if isinstance(value, RemoteObject):
            if value._sc_epoch != self.epoch:
                raise CandidateCrashed("the test uses an object of a candidate process that "
                                       "has ended")
            return {"h": {"id": value._sc_id}}
        if isinstance(value, RemoteFunction) and value._sc_link is self:
            return {"mm": value._sc_member}
        if isinstance(value, ClassAttribute) and value.owner is not None:
            return {"cattr": [value.owner._scc_ref(), value.name]}
        if isinstance(value, RemoteClass) and value._scc_link is self:
            return {"mm": value._scc_member} if value._scc_member else {"h": {"id": value._scc_id}}
        if callable(value):
            key = self.callback_ids.get(id(value))
            if key is None:
                key, self.next_callback = self.next_callback, self.next_callback + 1
                self.callbacks[key] = value
                self.callback_ids[id(value)] = key
            return {"cb": key}
        if hasattr(type(value), "__next__") and hasattr(type(value), "__iter__"):
            items = []
            for item in value:
                items.append(codec.encode(item, self, depth + 1))
                if len(items) > codec.MAX_ITERATOR_ITEMS:
                    raise NotPlainData(f"an iterator of more than {codec.MAX_ITERATOR_ITEMS:,}"
                                       " items cannot be sent to the candidate's process")
            return {"it": items}
        raise NotPlainData(f"the test passes a {codec.type_name(value)} object, which cannot "
                           f"be sent to the candidate's process: {_FIX}")

    def resolve(self, tag: str, body: object) -> object:
        if tag != "h" or not isinstance(body, dict) or type(body.get("id")) is not int:
            raise ProtocolBroken(f"unexpected {str(tag)[:20]!r} from the candidate")
        handle = body["id"]
        known = self.proxies.get(handle)
        if known is not None:
            return known
        if body.get("is_class") is True:
            made: RemoteObject | RemoteClass = self._class_proxy(body)
        else:
            made = RemoteObject._sc_make(self, handle, body, self._instance_class(body))
        self.proxies[handle] = made
        return made

    def _instance_class(self, body: dict) -> type:
        owner = body.get("class")
        return self.classes.get(owner, RemoteObject) if type(owner) is int else RemoteObject

    def _learn_classes(self, names: dict) -> None:
        """Stand-ins for the candidate's classes and exception classes, kept across its
        restarts by name (tests hold them: `from mod import Stack`)."""
        for member, described in names.items():
            if not isinstance(described, dict):
                continue
            if described.get("kind") == "exception":
                self._exception_class(described.get("class"))
            elif described.get("kind") == "class":
                handle = described.get("handle")
                if isinstance(handle, dict) and isinstance(handle.get("h"), dict):
                    self._class_proxy(handle["h"], member=_identifier(member))

    def _class_proxy(self, body: dict, member: str = "") -> RemoteClass:
        handle = body.get("id")
        if type(handle) is int and handle in self.classes:
            return self.classes[handle]
        name = _identifier(body.get("name"), "RemoteClass")
        known = self.class_by_name.get(member) if member else None
        if known is None:
            bases = tuple(self.classes[b] for b in body.get("bases", [])
                          if type(b) is int and b in self.classes) or (RemoteObject,)
            # The class's own attributes as descriptors that read the candidate's: where a
            # test (monkeypatch, mock.patch.object) looks in the class's __dict__, it finds
            # them, and what it puts back is the original.
            attrs = {attr: ClassAttribute(attr) for attr in body.get("attrs", [])
                     if isinstance(attr, str) and _identifier(attr)
                     and not attr.startswith(("__", "_sc", *_PROBES))}
            known = RemoteClass(name, bases, {
                **attrs, "__module__": self.name, "__qualname__": name, "__slots__": ()})
            known._scc_link = self
            known._scc_member = member
            if member:
                self.class_by_name[member] = known
        known._scc_id = handle
        known._scc_epoch = self.epoch
        known._scc_type = str(body.get("type", name))[:120]
        if type(handle) is int:
            self.classes[handle] = known
        return known

    def _exception_class(self, described: object) -> type[BaseException] | None:
        if not isinstance(described, dict):
            return None
        name = _identifier(described.get("name"))
        if not name:
            return None
        if name in self.exceptions:
            return self.exceptions[name]
        parents = tuple(self.exceptions[b] for b in described.get("bases", [])
                        if isinstance(b, str) and b in self.exceptions)
        builtin = getattr(builtins, str(described.get("builtin")), None)
        if not (isinstance(builtin, type) and issubclass(builtin, Exception)):
            builtin = Exception
        made = type(name.rsplit(".", 1)[-1], parents or (builtin,), {
            "__module__": self.name, "__qualname__": name, "__str__": _told_text})
        self.exceptions[name] = made
        return made

    # -- exceptions ---------------------------------------------------------------------

    def rebuild(self, raised: object, *, iterating: bool = False) -> BaseException:
        """The candidate's exception as one the test can catch, with its frames. Every rule
        here is the tests' side's own: the candidate's process could send anything."""
        if not isinstance(raised, dict):
            return ProtocolBroken("the candidate's process reported an exception in a form "
                                  "that is not one")
        name = _identifier(raised.get("name"), "Exception")
        module = _identifier(raised.get("module"), "?")
        text = str(raised.get("text", ""))[:MAX_TEXT_CHARS]
        builtin = getattr(builtins, str(raised.get("builtin")), None)
        if module == "selfcorrect_boundary" and name in _BOUNDARY_ERRORS:
            # The candidate's side could not send its answer (a value that cannot cross):
            # said as such. (Forged, it can only fail the test.)
            return _BOUNDARY_ERRORS[name](text)
        if builtin is SystemExit and module == "builtins" and name == "SystemExit":
            # sys.exit() in a call is the candidate's answer (argparse on bad arguments):
            # pytest.raises(SystemExit) catches it, and uncaught it fails the test.
            code = self._decoded_or(raised.get("args"), [text])
            return SystemExit(*code[:1])
        if (not isinstance(builtin, type) or not issubclass(builtin, BaseException)
                or not issubclass(builtin, Exception) or _control_module(module, self.name)):
            return CandidateRefused(
                f"the candidate raised {module}.{name}({text[:200]!r}), which a test must not "
                "take as its outcome (an exit, an interrupt, or a test framework's skip or "
                "failure): it counts as a failure of this call")
        kind = self._exception_type(name, module, builtin)
        if issubclass(kind, StopIteration | StopAsyncIteration) and not iterating:
            # Only next() may end an iteration: from a call it would end the test's own
            # loop (map, all, zip) early, as PEP 479 says for generators.
            return RuntimeError(f"the candidate raised {name} outside an iteration")
        try:
            args = self.decode(raised.get("args"))
        except (NotPlainData, ProtocolBroken):
            args = None
        if not isinstance(args, list):
            args = [text]
        made = _instantiate(kind, args, text)
        attrs = raised.get("attrs")
        for key, value in (attrs.items() if isinstance(attrs, dict) else ()):
            # Its own data only: nothing the class or pytest defines (with_traceback...).
            if (_identifier(key) and not str(key).startswith(("_", *_PROBES))
                    and not hasattr(type(made), str(key))):
                try:
                    setattr(made, str(key), self.decode(value))
                except Exception:
                    continue
        cause = raised.get("cause")
        if isinstance(cause, dict) and "cause" not in cause:
            made.__cause__ = self.rebuild(cause)
        return made.with_traceback(self._traceback(raised.get("frames")))

    def _decoded_or(self, data: object, default: list) -> list:
        try:
            value = self.decode(data)
        except (NotPlainData, ProtocolBroken):
            return default
        return value if isinstance(value, list) else default

    def _exception_type(self, name: str, module: str, builtin: type[BaseException]
                        ) -> type[BaseException]:
        if module == self.name and name in self.exceptions:
            return self.exceptions[name]
        if module == "builtins":
            found = getattr(builtins, name, None)
            if isinstance(found, type) and issubclass(found, builtin):
                return found
        loaded = sys.modules.get(module) if module != self.name else None
        if loaded is not None and "." not in name and _library(loaded):
            found = vars(loaded).get(name)
            if (isinstance(found, type) and issubclass(found, builtin)
                    and found.__module__ == module
                    and not _control_module(found.__module__, self.name)):
                return found
        key = f"{module}:{name}"
        if key not in self.exceptions:
            self.exceptions[key] = type(name.rsplit(".", 1)[-1], (builtin,), {
                "__module__": module, "__qualname__": name, "__str__": _told_text})
        return self.exceptions[key]

    def _traceback(self, frames: object) -> types.TracebackType | None:
        """The candidate's frames (line, function) as a traceback pytest prints like its own:
        each a tiny code object compiled under the candidate's file name."""
        chain = None
        for item in reversed(frames[-8:] if isinstance(frames, list) else []):
            if not (isinstance(item, list) and len(item) == 2 and type(item[0]) is int
                    and 0 < item[0] <= MAX_LINENO):
                continue
            fake = _fake_frame(self.path, item[0], _identifier(item[1], "<module>"))
            if fake is not None:
                chain = types.TracebackType(chain, fake.tb_frame, fake.tb_lasti,
                                            fake.tb_lineno)
        return chain

    # -- requests on objects ------------------------------------------------------------

    def call(self, ref: dict, args: tuple, kwargs: dict) -> object:
        __tracebackhide__ = True
        message = {"op": "call", "of": ref, "args": [self.encode(arg) for arg in args],
                   "kwargs": {"d": [[key, self.encode(value)] for key, value in kwargs.items()]}}
        return self.request(message, args, kwargs)

    def _write_back(self, back: object, args: tuple, kwargs: dict) -> None:
        """The candidate changed these arguments in place: so do we, to ours."""
        if not isinstance(back, dict):
            return
        for key, value in back.items():
            original = _named_argument(key, args, kwargs)
            if codec.mutable(original):
                codec.update_in_place(original, self.decode(value))

    def ask(self, op: str, ref: dict | None, **fields: object) -> object:
        __tracebackhide__ = True
        return self.request({"op": op, "of": ref, **fields})


def _library(module: types.ModuleType) -> bool:
    """A module of the interpreter or an installed library, not one from the work dir (the
    test modules, or anything under /work a test put on sys.path)."""
    path = getattr(module, "__file__", None)
    return path is None or not str(path).startswith("/work/")


def _control_module(module: str, candidate: str) -> bool:
    return module != candidate and any(
        module == name or module.startswith(name + ".") for name in CONTROL_MODULES)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return ""


def _kept(failure: AssertionError) -> BoundaryError:
    error = BoundaryError(f"an assertion in a function of the tests' failed when the "
                          f"candidate called it: {str(failure)[:MAX_TEXT_CHARS]}")
    error.__cause__ = failure
    return error


def _argument(key: str, args: tuple, kwargs: dict, otherwise: Callable[[], object]) -> object:
    """The argument the candidate says it returned, if it could have (one that is mutable:
    an immutable one crosses as its value anyway); otherwise the value it sent."""
    original = _named_argument(key, args, kwargs)
    return original if original is not None and codec.mutable(original) else otherwise()


def _named_argument(key: object, args: tuple, kwargs: dict) -> object | None:
    if not isinstance(key, str):
        return None
    if key.startswith("=") and key[1:] in kwargs:
        return kwargs[key[1:]]
    if key.isascii() and key.isdecimal() and int(key) < len(args):
        return args[int(key)]
    return None


def _told_text(self: BaseException) -> str:
    told = self.__dict__.get("_sc_text")
    return told if isinstance(told, str) else BaseException.__str__(self)


def _instantiate(kind: type[BaseException], args: list, text: str) -> BaseException:
    try:
        made = kind(*args)
    except Exception:
        made = kind.__new__(kind)
        made.args = tuple(args)
    if kind.__str__ is _told_text:
        made._sc_text = text  # type: ignore[attr-defined]  # what _told_text reads back
    return made


_fakes: dict[tuple[str, int, str], types.TracebackType | None] = {}


class _Marker(Exception):
    pass


def _fake_frame(path: str, lineno: int, name: str) -> types.TracebackType | None:
    key = (path, lineno, name)
    if key not in _fakes and len(_fakes) >= MAX_FAKE_FRAMES:
        return None  # enough of them: later tracebacks show fewer of the candidate's frames
    if key not in _fakes:
        code = compile("\n" * (lineno - 1) + "raise __selfcorrect_marker__", path,
                       "exec").replace(co_name=name)
        try:
            exec(code, {"__selfcorrect_marker__": _Marker()})
        except _Marker as marker:
            _fakes[key] = marker.__traceback__.tb_next if marker.__traceback__ else None
    return _fakes[key]


_PLAIN_TYPES = {kind.__name__: kind for kind in (
    bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set, frozenset)}


# ---- stand-ins ---------------------------------------------------------------------------

def _exact(value: object, kind: type[_T], what: str) -> _T:
    if type(value) is not kind:
        raise ProtocolBroken(f"the candidate's {what} is a {type(value).__name__}, not a "
                             f"{kind.__name__}")
    return value


class RemoteObject:
    """One of the candidate's objects, held in its process."""

    __slots__ = ("__weakref__", "_sc_desc", "_sc_epoch", "_sc_id", "_sc_link")
    _sc_link: Link
    _sc_id: int
    _sc_epoch: int
    _sc_desc: dict

    @classmethod
    def _sc_make(cls, link: Link, handle: int, desc: dict, kind: type) -> RemoteObject:
        made: RemoteObject = object.__new__(kind)
        object.__setattr__(made, "_sc_link", link)
        object.__setattr__(made, "_sc_id", handle)
        object.__setattr__(made, "_sc_epoch", link.epoch)
        object.__setattr__(made, "_sc_desc", desc)
        return made

    def _sc_ref(self) -> dict:
        if self._sc_epoch != self._sc_link.epoch:
            raise CandidateCrashed("this object belonged to a candidate process that has "
                                   "ended")
        return {"h": self._sc_id}

    def _sc_op(self, name: str, *args: object) -> object:
        __tracebackhide__ = True
        link = self._sc_link
        return link.ask("op", self._sc_ref(), name=name, args=[link.encode(a) for a in args])

    def _sc_plain(self) -> Any:
        """The built-in content, or None when the class derives from no built-in type."""
        if self._sc_desc.get("plain") not in _PLAIN_TYPES:
            return None
        value = self._sc_op("plain")
        expected = _PLAIN_TYPES[str(self._sc_desc.get("plain"))]
        return value if isinstance(value, expected) else None

    def _sc_same_process(self, other: object) -> bool:
        return (isinstance(other, RemoteObject) and other._sc_link is self._sc_link
                and other._sc_epoch == self._sc_epoch)

    def __getattr__(self, name: str) -> object:
        __tracebackhide__ = True
        if name.startswith(("__", "_sc_", *_PROBES)):
            raise AttributeError(name)
        return self._sc_link.ask("get", self._sc_ref(), name=name)

    def __setattr__(self, name: str, value: object) -> None:
        __tracebackhide__ = True
        if name.startswith("_sc_"):
            raise AttributeError(name)
        self._sc_link.ask("set", self._sc_ref(), name=name, value=self._sc_link.encode(value))

    def __delattr__(self, name: str) -> None:
        __tracebackhide__ = True
        self._sc_link.ask("del", self._sc_ref(), name=name)

    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        return self._sc_link.call(self._sc_ref(), args, kwargs)

    def __repr__(self) -> str:
        try:
            text = self._sc_op("repr")
        except BoundaryError as exc:
            return f"<{self._sc_desc.get('type', '?')} of the candidate: {exc}>"
        return str(_exact(text, str, "repr()"))[:MAX_TEXT_CHARS * 4]

    def __str__(self) -> str:
        return str(_exact(self._sc_op("str"), str, "str()"))

    def __format__(self, spec: str) -> str:
        return str(_exact(self._sc_op("format", spec), str, "format()"))

    def __bool__(self) -> bool:
        return bool(_exact(self._sc_op("bool"), bool, "truth value"))

    def __len__(self) -> int:
        return int(_exact(self._sc_op("len"), int, "len()"))

    def __hash__(self) -> int:
        plain = self._sc_plain()  # consistent with == by value
        if plain is not None:
            return hash(plain)
        return int(_exact(self._sc_op("hash"), int, "hash()"))

    def __int__(self) -> int:
        return int(_exact(self._sc_op("int"), int, "int()"))

    def __index__(self) -> int:
        return int(_exact(self._sc_op("index"), int, "index"))

    def __float__(self) -> float:
        return float(_exact(self._sc_op("float"), float, "float()"))

    def __iter__(self) -> object:
        if self._sc_desc.get("iterator") is True:
            return self
        return self._sc_op("iter")

    def __next__(self) -> object:
        __tracebackhide__ = True
        return self._sc_op("next")

    def __reversed__(self) -> object:
        return self._sc_op("reversed")

    def __contains__(self, item: object) -> bool:
        plain = self._sc_plain()
        if plain is not None and not isinstance(item, RemoteObject):
            return item in plain
        return bool(_exact(self._sc_op("contains", item), bool, "`in`"))

    def __getitem__(self, key: object) -> object:
        __tracebackhide__ = True
        return self._sc_op("getitem", key)

    def __setitem__(self, key: object, value: object) -> None:
        __tracebackhide__ = True
        self._sc_op("setitem", key, value)

    def __delitem__(self, key: object) -> None:
        __tracebackhide__ = True
        self._sc_op("delitem", key)

    def __enter__(self) -> object:
        return self._sc_op("enter")

    def __exit__(self, *exc: object) -> None:
        self._sc_op("exit")

    def __dir__(self) -> list[str]:
        names = self._sc_op("dir")
        return [str(n) for n in names] if isinstance(names, list) else []

    # Any: the candidate's own == may answer anything (a numpy array, say).
    def __eq__(self, other: object) -> Any:
        if self._sc_same_process(other):
            return self._sc_op("eq", other)
        return _by_value(self, other, lambda a, b: a == b)

    def __ne__(self, other: object) -> Any:
        if self._sc_same_process(other):
            return self._sc_op("ne", other)
        same = _by_value(self, other, lambda a, b: a == b)
        return same if same is NotImplemented else not same

    def __lt__(self, other: object) -> object:
        return self._sc_order("lt", other, lambda a, b: a < b)

    def __le__(self, other: object) -> object:
        return self._sc_order("le", other, lambda a, b: a <= b)

    def __gt__(self, other: object) -> object:
        return self._sc_order("gt", other, lambda a, b: a > b)

    def __ge__(self, other: object) -> object:
        return self._sc_order("ge", other, lambda a, b: a >= b)

    def _sc_order(self, name: str, other: object, compare: Callable[[Any, Any], object]
                  ) -> object:
        if self._sc_same_process(other):
            return self._sc_op(name, other)
        return _by_value(self, other, compare)

    def __del__(self) -> None:
        try:
            link = self._sc_link
            if self._sc_epoch == link.epoch:
                link.releases.append(self._sc_id)
        except Exception:
            return


def _by_value(remote: RemoteObject, other: object, compare: Callable[[Any, Any], object]
              ) -> object:
    """`remote == other` for plain `other`: by the built-in content of the candidate's object,
    rebuilt here, compared here. Never by the candidate's own `__eq__`."""
    if isinstance(other, RemoteObject):
        return NotImplemented
    plain = remote._sc_plain()
    if plain is None:
        return NotImplemented
    return compare(plain, other)


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul,
    "truediv": operator.truediv, "floordiv": operator.floordiv, "mod": operator.mod,
    "pow": operator.pow, "matmul": operator.matmul, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift,
    "rshift": operator.rshift}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "neg": operator.neg, "pos": operator.pos, "abs": abs, "invert": operator.invert}


def _binary(name: str, reflected: bool) -> Callable[[RemoteObject, object], object]:
    """Arithmetic with one of the candidate's objects. With plain data on the other side it
    is never the candidate's to compute: `abs(expected - result)` (pytest.approx,
    assertAlmostEqual, numpy's allclose) would hand it the expected value and let it answer
    0. An object whose class derives from a built-in type is computed here from its plain
    content; two of the candidate's objects are computed by the candidate."""
    apply = _BINARY[name]

    def operate(self: RemoteObject, other: object) -> object:
        __tracebackhide__ = True
        if self._sc_same_process(other):
            return self._sc_op(("r" if reflected else "") + name, other)
        plain = self._sc_plain()
        if plain is None:
            raise NotPlainData(
                f"arithmetic ({name}) between the candidate's {self._sc_desc.get('type', '?')} "
                f"object and a {type(other).__name__} is not made: it would let the candidate "
                "choose the result of a comparison (pytest.approx, abs(a - b) < eps). The "
                "candidate should return plain data (a number, a list); tests of its own "
                "operators need `isolation: in-process`")
        return apply(other, plain) if reflected else apply(plain, other)

    operate.__name__ = f"__{'r' if reflected else ''}{name}__"
    return operate


def _unary(name: str) -> Callable[[RemoteObject], object]:
    apply = _UNARY[name]

    def operate(self: RemoteObject) -> object:
        __tracebackhide__ = True
        plain = self._sc_plain()
        return apply(plain) if plain is not None else self._sc_op(name)

    operate.__name__ = f"__{name}__"
    return operate


for _name in _BINARY:
    setattr(RemoteObject, f"__{_name}__", _binary(_name, reflected=False))
    setattr(RemoteObject, f"__r{_name}__", _binary(_name, reflected=True))
for _name in _UNARY:
    setattr(RemoteObject, f"__{_name}__", _unary(_name))


class RemoteClass(type):
    """One of the candidate's classes: calling it makes an instance in the candidate's
    process; its attributes (class attributes, static and class methods) are read there.
    Its own bookkeeping is named _scc_* so that instances never see it as theirs."""

    _scc_link: Link
    _scc_id: int | None
    _scc_epoch: int
    _scc_member: str
    _scc_type: str

    def _scc_ref(cls) -> dict:
        if cls._scc_member:
            return {"m": cls._scc_member}
        if cls._scc_epoch != cls._scc_link.epoch or cls._scc_id is None:
            raise CandidateCrashed("this class belonged to a candidate process that has ended")
        return {"h": cls._scc_id}

    def __call__(cls, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        return cls._scc_link.call(cls._scc_ref(), args, kwargs)

    def __getattr__(cls, name: str) -> object:
        __tracebackhide__ = True
        if name.startswith(("__", "_sc", *_PROBES)):
            raise AttributeError(name)
        return cls._scc_link.ask("get", cls._scc_ref(), name=name)

    def __setattr__(cls, name: str, value: object) -> None:
        """`monkeypatch.setattr(mod.Client, "fetch", fake)`: the candidate's class gets it
        (a function of the tests' becomes its method, called back with the instance)."""
        __tracebackhide__ = True
        if name.startswith("_scc_") or name.startswith("__"):
            type.__setattr__(cls, name, value)
            return
        cls._scc_link.ask("set", cls._scc_ref(), name=name, value=cls._scc_link.encode(value))
        if isinstance(value, ClassAttribute) or (
                callable(value) and not isinstance(value, RemoteObject)):
            # A test's function reads back as the test set it; the original put back is
            # the candidate's again.
            type.__setattr__(cls, name, value)
        elif name in cls.__dict__:
            reading = ClassAttribute(name)
            reading.owner = cls
            type.__setattr__(cls, name, reading)

    def __delattr__(cls, name: str) -> None:
        __tracebackhide__ = True
        cls._scc_link.ask("del", cls._scc_ref(), name=name)

    def __repr__(cls) -> str:
        return f"<class {cls._scc_type!r} of the candidate>"


class ClassAttribute:
    """One of a candidate class's own attributes, read from the candidate's process (through
    the class or an instance) each time."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.owner: RemoteClass | None = None

    def __set_name__(self, owner: RemoteClass, name: str) -> None:
        self.owner = owner

    def __get__(self, instance: object, owner: type | None = None) -> object:
        __tracebackhide__ = True
        if isinstance(instance, RemoteObject):
            return instance._sc_link.ask("get", instance._sc_ref(), name=self.name)
        cls = owner if isinstance(owner, RemoteClass) else self.owner
        assert cls is not None
        return cls._scc_link.ask("get", cls._scc_ref(), name=self.name)


class RemoteFunction:
    """A function of the candidate's module, called in its process by name (so a test that
    replaced it with monkeypatch and then put it back calls the original again)."""

    def __init__(self, link: Link, name: str, doc: object = None) -> None:
        self._sc_link = link
        self._sc_member = name
        self.__name__ = self.__qualname__ = name
        self.__module__ = link.name
        # Its own docstring (plain text), not this class's.
        self.__doc__ = doc[:MAX_DOC_CHARS] if isinstance(doc, str) else None

    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        return self._sc_link.call({"m": self._sc_member}, args, kwargs)

    def __repr__(self) -> str:
        # pytest's assertion rewrite shows "where 3 = below_zero([1, -4])".
        return self._sc_member

    def __getattr__(self, name: str) -> object:
        __tracebackhide__ = True
        if name.startswith(("__", "_sc_", *_PROBES)):
            raise AttributeError(name)
        return self._sc_link.ask("get", {"m": self._sc_member}, name=name)


class RemoteModule(types.ModuleType):
    """What `import <candidate>` gives the tests."""

    def __getattr__(self, name: str) -> object:
        __tracebackhide__ = True
        link: Link = self.__dict__["_sc_link"]
        if name == "__all__":
            return _star_names(link, sys._getframe(1).f_globals)
        if name.startswith("__") or name.startswith("_sc_"):
            raise AttributeError(name)
        return link.ask("get", None, name=name)

    def __setattr__(self, name: str, value: object) -> None:
        __tracebackhide__ = True
        if name.startswith("__") or name.startswith("_sc_"):
            types.ModuleType.__setattr__(self, name, value)
            return
        link: Link = self.__dict__["_sc_link"]
        link.ask("set", None, name=name, value=link.encode(value))
        # A function put in (monkeypatch) is what the tests read back; data is always read
        # from the candidate's process.
        if callable(value):
            types.ModuleType.__setattr__(self, name, value)
        else:
            self.__dict__.pop(name, None)

    def __delattr__(self, name: str) -> None:
        __tracebackhide__ = True
        link: Link = self.__dict__["_sc_link"]
        link.ask("del", None, name=name)
        self.__dict__.pop(name, None)

    def __dir__(self) -> list[str]:
        link: Link = self.__dict__["_sc_link"]
        names = (link.namespace or {}).get("names", {})
        return sorted(str(name) for name in names)


def _star_names(link: Link, importer: dict) -> list[str]:
    """What `from candidate import *` brings: its __all__ (or its public names), but never
    a name of Python's builtins or one the importing test has bound already. A module is
    otherwise free to make `all`, `abs`, `isinstance`, `math` or `pytest` in the test mean
    its own answers."""
    names = (link.namespace or {}).get("names", {})
    listed = link.ask("get", None, name="__all__") if "__all__" in names else list(names)
    if not isinstance(listed, list | tuple):
        raise ProtocolBroken("the candidate's __all__ is not a list of names")
    return sorted({str(n) for n in listed if isinstance(n, str) and n.isidentifier()
                   and not n.startswith("_") and n not in importer
                   and not hasattr(builtins, n) and not _read_by_pytest(n)})


def _read_by_pytest(name: str) -> bool:
    """Names pytest reads from a test module: plugins to load (pytest_plugins), hooks,
    marks, setup and teardown, and whatever it would collect as a test."""
    lowered = name.lower()
    return (lowered.startswith(("pytest", "test", "setup", "teardown"))
            or name in ("setUpModule", "tearDownModule", "collect_ignore",
                        "collect_ignore_glob", "disabled"))


def fill_module(module: RemoteModule, link: Link) -> None:
    """The module's functions, classes and exception classes as stand-ins; its data is read
    from the candidate's process at each access."""
    link._connect()
    if link.import_failure is not None:
        raise link.rebuild(link.import_failure)
    names = (link.namespace or {}).get("names", {})
    for raw, described in names.items():
        name = _identifier(raw)
        if not name or not isinstance(described, dict):
            continue
        kind = described.get("kind")
        if kind == "function":
            types.ModuleType.__setattr__(module, name,
                                         RemoteFunction(link, name, described.get("doc")))
        elif kind == "class" and name in link.class_by_name:
            types.ModuleType.__setattr__(module, name, link.class_by_name[name])
        elif kind == "exception":
            made = link._exception_class(described.get("class"))
            if made is not None:
                types.ModuleType.__setattr__(module, name, made)


class CandidateFinder:
    """`import <candidate>` in the tests' process: the stand-in module, never the file. A
    meta path finder and its loader (the protocols, not importlib.abc's classes, whose
    import pulls in importlib.resources: ~20 ms under gVisor)."""

    def __init__(self, link: Link) -> None:
        self.link = link

    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> _frozen_importlib.ModuleSpec | None:
        if fullname != self.link.name:
            return None
        # The finder is its own loader (the protocol, not importlib.abc's class: see above).
        return _frozen_importlib.ModuleSpec(fullname, self,  # type: ignore[arg-type]
                                            origin=self.link.path)

    def create_module(self, spec: _frozen_importlib.ModuleSpec) -> types.ModuleType:
        module = RemoteModule(spec.name)
        types.ModuleType.__setattr__(module, "_sc_link", self.link)
        types.ModuleType.__setattr__(module, "__file__", self.link.path)
        self.link.module = module
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        __tracebackhide__ = True
        assert isinstance(module, RemoteModule)
        fill_module(module, self.link)
