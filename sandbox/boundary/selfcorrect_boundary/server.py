"""The candidate's side: its module, imported in an interpreter of its own, answering the
tests' requests over one socket.

This process is the candidate's: everything here can be read and rewritten by its code, so
nothing here is trusted by the other side. It only has to work for honest candidates. What
the tests' process receives is checked there (client.py, codec.py).

Requests (one JSON frame each; a reply frame for each):
  load                       import the module (already done when started eagerly)
  call  fn [args] {kwargs}   call a module attribute or an object held here
  get / set / del  of name   attribute access on the module or on an object held here
  op    name of [args]       a special method (len, ==, iteration, indexing, arithmetic...)
A request may carry what changed in the tests' environment variables and working folder
(followed here first) and handles the tests no longer hold. Every reply carries what the
candidate printed during the request and the warnings it raised; a call's reply also
carries the new value of every mutable argument it changed, and which argument it returned
if it returned one. While a request runs the candidate may call back into the tests'
process (a function the tests passed in, input(), sys.stdin): a `callback` frame, answered
before the reply (and the tests' side may send requests of its own meanwhile).
"""

from __future__ import annotations

import _frozen_importlib
import _frozen_importlib_external
import _operator as operator
import _socket
import builtins
import io
import os
import sys
import types
import warnings

from selfcorrect_boundary import BoundaryError, NotPlainData, ProtocolBroken, codec

# typing.TYPE_CHECKING without importing typing at run time (mypy reads the name itself).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from logging import LogRecord
    from typing import Any

MAX_CAPTURE_CHARS = 256 * 1024
MAX_TEXT_CHARS = 2000
MAX_FRAMES = 8
MAX_WARNINGS = 20
MAX_LOGS = 200
MAX_ATTRS = 20
MAX_HANDLES = 200_000
MAX_CLASS_ATTRS = 500
# Built-in types whose subclasses the tests may compare by value: the tests' side asks for
# the plain content (as the built-in type) and compares it there.
PLAIN_BASES = (bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set,
               frozenset)


def _reflected(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    return lambda obj, other: op(other, obj)


SPECIAL: dict[str, Callable[..., Any]] = {
    "len": len, "bool": bool, "iter": iter, "next": next, "reversed": reversed,
    "contains": lambda obj, item: item in obj, "getitem": operator.getitem,
    "setitem": operator.setitem, "delitem": operator.delitem, "str": str, "repr": repr,
    "format": format, "hash": hash, "int": int, "float": float, "complex": complex,
    "index": operator.index, "eq": operator.eq, "ne": operator.ne, "lt": operator.lt,
    "le": operator.le, "gt": operator.gt, "ge": operator.ge, "neg": operator.neg,
    "pos": operator.pos, "abs": abs, "invert": operator.invert,
    "enter": lambda obj: obj.__enter__(), "exit": lambda obj: obj.__exit__(None, None, None),
    "dir": lambda obj: sorted(name for name in dir(obj) if not name.startswith("__")),
}
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
              "or", "xor", "lshift", "rshift"):
    _function = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    SPECIAL[_name] = _function
    SPECIAL["r" + _name] = _reflected(_function)


class Callback:
    """A function of the tests' process, called from the candidate's code."""

    def __init__(self, server: Server, key: object) -> None:
        self._server, self._key = server, key

    def __call__(self, *args: object, **kwargs: object) -> object:
        return self._server.call_back(self._key, args, kwargs)

    def __get__(self, instance: object, owner: object = None) -> object:
        # Set on a class (monkeypatch of a method), it is a method: called with the instance.
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<function of the tests' process #{self._key}>"


class TestsStdin(io.TextIOBase):
    """sys.stdin for the candidate: reads go to the tests' sys.stdin (which a test may have
    replaced with its own text), as they would if both ran in one process."""

    def __init__(self, server: Server) -> None:
        self._server = server

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> str:
        return _text(self._server.call_back("stdin.read", (-1 if size is None else size,), {}))

    # A text stream's readline gives str, as TextIOBase's own does; typeshed's TextIOBase
    # also derives from an IOBase whose readline gives bytes, which this cannot match.
    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        return _text(self._server.call_back("stdin.readline",
                                            (-1 if size is None else size,), {}))


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("the tests' stdin gave something that is not text")
    return value


class _BytesOf(io.RawIOBase):
    """sys.stdout.buffer of a Capture: bytes written there are its text."""

    def __init__(self, capture: Capture) -> None:
        self._capture = capture

    def writable(self) -> bool:
        return True

    # Any: whatever the candidate's code writes there (bytes-like, for bytes() and len()).
    def write(self, data: Any) -> int:
        self._capture.write(bytes(data).decode("utf-8", "replace"))
        return len(data)


class Capture(io.TextIOBase):
    """What the candidate prints during one request, bounded."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0
        self.buffer = _BytesOf(self)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = MAX_CAPTURE_CHARS - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(len(text), room)
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self) -> str:
        kept = "".join(self.parts)
        return kept + (f"\n[... {self.dropped:,} characters not kept ...]\n"
                       if self.dropped else "")


class Server(codec.Peer):
    def __init__(self, sock: _socket.socket, path: str, name: str) -> None:
        self.sock = sock
        self.path = path
        self.name = name
        self.module: types.ModuleType | None = None
        self.failure: dict | None = None
        self.objects: dict[int, object] = {}
        self.ids: dict[int, int] = {}  # id(object) -> handle, so one object is one handle
        self.next_id = 1
        self.buffer = b""
        # Module attributes as they were before the tests replaced them (monkeypatch): a
        # test that holds the original function still calls the original.
        self.originals: dict[str, object] = {}
        # The same for a class's own attributes, kept raw (a staticmethod stays one).
        self.class_originals: dict[tuple[int, str], object] = {}

    # -- the module ---------------------------------------------------------------------

    def load(self) -> None:
        if self.module is not None or self.failure is not None:
            return
        out, err = Capture(), Capture()
        self._out, self._err = out, err
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            # importlib.util's functions, from the import system's own modules (always
            # loaded): importing importlib.util costs ~25 ms under gVisor.
            spec = _frozen_importlib_external.spec_from_file_location(self.name, self.path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {self.path}")
            module = _frozen_importlib.module_from_spec(spec)
            sys.modules[self.name] = module
            spec.loader.exec_module(module)
            self.module = module
        except BaseException as exc:  # whatever the candidate raises at import, reported
            self.failure = self.describe(exc)
        finally:
            sys.stdout, sys.stderr = saved
        self.load_output = (out.text(), err.text())

    def namespace(self) -> dict:
        module = self.module
        assert module is not None
        names: dict[str, object] = {}
        for name, value in list(vars(module).items()):
            if name.startswith("__") and name != "__all__":
                continue
            names[name] = self._describe_member(value)
        return {"module": self.name, "names": names}

    def _describe_member(self, value: object) -> object:
        if isinstance(value, type) and issubclass(value, BaseException):
            return {"kind": "exception", "class": self.exception_class(value)}
        if isinstance(value, type):
            return {"kind": "class", "handle": self.export(value, 0)}
        if isinstance(value, types.ModuleType):
            return {"kind": "module"}
        if callable(value):
            doc = getattr(value, "__doc__", None)
            return {"kind": "function", "doc": doc[:10_000] if isinstance(doc, str) else None}
        return {"kind": "value"}

    def exception_class(self, kind: type) -> dict:
        builtin = next(k for k in kind.__mro__ if k.__module__ == "builtins")
        own = [base.__qualname__ for base in kind.__bases__
               if base.__module__ == self.name and issubclass(base, BaseException)]
        return {"name": kind.__qualname__[:100], "module": str(kind.__module__)[:100],
                "builtin": builtin.__name__, "bases": own}

    # -- handles (the codec's peer) -----------------------------------------------------

    def owns(self, value: object) -> bool:
        # An instance of one of the module's classes is the candidate's object, even when
        # its class derives from int or list: it crosses as a handle, and the tests compare
        # its built-in content, not what its own __eq__ says.
        return type(value).__module__ == self.name

    def export(self, value: object, depth: int) -> dict:
        handle = self.ids.get(id(value))
        if handle is None:
            if len(self.objects) >= MAX_HANDLES:
                raise NotPlainData(f"the candidate made more than {MAX_HANDLES:,} objects "
                                   "the tests hold at once")
            handle = self.next_id
            self.next_id += 1
            self.objects[handle] = value
            self.ids[id(value)] = handle
        kind = value if isinstance(value, type) else type(value)
        plain = next((base.__name__ for base in PLAIN_BASES
                      if isinstance(value, base)), None)
        described: dict[str, object] = {
            "id": handle, "type": codec.type_name(value),
            "class": self._class_handle(kind) if not isinstance(value, type) else None,
            "is_class": isinstance(value, type), "callable": callable(value),
            "iterator": hasattr(kind, "__next__"), "plain": plain,
        }
        if isinstance(value, type) and value.__module__ == self.name:
            described["name"] = value.__qualname__[:100]
            described["bases"] = [self._class_handle(base) for base in value.__bases__
                                  if base.__module__ == self.name]
            described["attrs"] = [name for name in list(vars(value))[:MAX_CLASS_ATTRS]
                                  if isinstance(name, str) and not name.startswith("__")]
        return {"h": described}

    def _class_handle(self, kind: type) -> int | None:
        if kind.__module__ != self.name:
            return None
        return self.export(kind, 0)["h"]["id"]

    def resolve(self, tag: str, body: object) -> object:
        if tag == "h" and isinstance(body, dict) and type(body.get("id")) is int:
            try:
                return self.objects[body["id"]]
            except KeyError:
                raise ProtocolBroken("an object this process no longer holds") from None
        if tag == "cb" and type(body) is int:
            return Callback(self, body)
        if tag == "mm" and type(body) is str:
            return self.member(body)
        if tag == "cattr" and isinstance(body, list) and len(body) == 2:
            owner = self.target(body[0])
            return self.class_originals.get((id(owner), str(body[1])),
                                            vars(owner).get(str(body[1])))
        raise ProtocolBroken(f"unexpected {tag!r}")

    # -- the exchange -------------------------------------------------------------------

    def serve(self) -> None:
        while True:
            message = self.receive()
            if message is None:
                return
            self.send(self.answer(message))

    def answer(self, message: object) -> dict:
        if not isinstance(message, dict):
            return {"raised": self.describe(ProtocolBroken("a request that is not an object"))}
        _follow(message)
        for handle in message.get("release", []) or []:
            value = self.objects.pop(handle, None)
            if value is not None:
                self.ids.pop(id(value), None)
        op = message.get("op")
        if op == "load":
            self.load()
            out, err = self.load_output
            if self.failure is not None:
                return {"raised": self.failure, "out": out, "err": err}
            return {"ok": self.namespace(), "out": out, "err": err}
        if self.module is None:
            return {"raised": self.failure or self.describe(
                ProtocolBroken("the module was not loaded"))}
        return self.run(message)

    def run(self, message: dict) -> dict:
        out, err = Capture(), Capture()
        saved = sys.stdout, sys.stderr
        reply: dict[str, object]
        logs = _LogCapture.start()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sys.stdout, sys.stderr = out, err
            try:
                reply = self.perform(message)
            except (StopIteration, StopAsyncIteration) as exc:
                # Only next() may end an iteration: from a call it would end the test's own
                # loop (map, all, zip) early, as PEP 479 says for generators.
                if message.get("op") == "op" and message.get("name") == "next":
                    reply = {"raised": self.describe(exc)}
                else:
                    changed = RuntimeError(f"the candidate raised {type(exc).__name__} "
                                           "outside an iteration")
                    changed.__cause__ = exc
                    reply = {"raised": self.describe(changed)}
            except BaseException as exc:  # the candidate's exception, reported
                reply = {"raised": self.describe(exc)}
            finally:
                sys.stdout, sys.stderr = saved
                if logs is not None:
                    logs.stop()
        reply["out"], reply["err"] = out.text(), err.text()
        if caught:
            reply["warnings"] = [self.warning(item) for item in caught[:MAX_WARNINGS]]
        if logs is not None and logs.records:
            reply["logs"] = [[str(r.name)[:100], int(r.levelno), _message(r)[:MAX_TEXT_CHARS],
                              r.lineno if r.pathname == self.path else 0]
                             for r in logs.records[:MAX_LOGS]]
        return reply

    def perform(self, message: dict) -> dict:
        op = message.get("op")
        target = self.target(message.get("of"))
        if op == "call":
            args = codec.decode(message.get("args", []), self)
            kwargs = codec.decode(message.get("kwargs", {"d": []}), self)
            if not isinstance(args, list) or not isinstance(kwargs, dict):
                raise ProtocolBroken("a call's arguments")
            result = target(*args, **kwargs)
            reply: dict[str, object] = {"ok": codec.encode(result, self)}
            back = self.changed(message, args, kwargs)
            if back:
                reply["back"] = back
            same = _which(result, args, kwargs)
            if same is not None:
                reply["same"] = same
            return reply
        name = str(message.get("name", ""))
        if op == "get":
            return {"ok": codec.encode(getattr(target, name), self)}
        if op in ("set", "del") and target is self.module and name not in self.originals:
            self.originals[name] = getattr(target, name, None)
        kept = (id(target), name)
        if op in ("set", "del") and isinstance(target, type) and name in vars(target):
            self.class_originals.setdefault(kept, vars(target)[name])
        if op == "set":
            value = codec.decode(message.get("value"), self)
            setattr(target, name, value)
            if target is self.module and value is self.originals.get(name):
                del self.originals[name]  # put back: the tests' patch is undone
            if value is self.class_originals.get(kept):
                del self.class_originals[kept]
            return {"ok": None}
        if op == "del":
            delattr(target, name)
            return {"ok": None}
        if op == "op":
            if name == "plain":
                return {"ok": codec.encode(self.plain(target), self)}
            special = SPECIAL.get(name)
            if special is None:
                raise ProtocolBroken(f"no operation {name[:40]!r}")
            args = codec.decode(message.get("args", []), self)
            if not isinstance(args, list):
                raise ProtocolBroken("an operation's arguments")
            return {"ok": codec.encode(special(target, *args), self)}
        raise ProtocolBroken(f"no request {str(op)[:40]!r}")

    def target(self, ref: object) -> Any:
        if ref is None:
            return self.module
        if isinstance(ref, dict) and "m" in ref:
            return self.member(str(ref["m"]))
        if isinstance(ref, dict) and type(ref.get("h")) is int:
            return self.resolve("h", {"id": ref["h"]})
        raise ProtocolBroken("a request's target")

    def member(self, name: str) -> Any:
        if name in self.originals:
            return self.originals[name]
        return getattr(self.module, name)

    def plain(self, value: object) -> object:
        """The built-in content of an object whose class derives from a built-in type."""
        base: Any  # each built-in type's own methods, whatever the subclass overrides
        for base in PLAIN_BASES:
            if isinstance(value, base):
                if base in (dict,):
                    return dict(dict.items(value))
                if base in (list, tuple, set, frozenset):
                    return base(base.__iter__(value))
                return base(value)
        raise NotPlainData(f"a {codec.type_name(value)} object has no plain content")

    def changed(self, message: dict, args: list, kwargs: dict) -> dict:
        """The mutable arguments the call changed, as their new values."""
        back: dict[str, object] = {}
        sent = message.get("args", [])
        for position, value in enumerate(args):
            if codec.mutable(value) and position < len(sent):
                now = codec.encode(value, self)
                if now != sent[position]:
                    back[str(position)] = now
        sent_kwargs = {pair[0]: pair[1] for pair in message.get("kwargs", {"d": []})["d"]
                       if isinstance(pair, list) and len(pair) == 2}
        for key, value in kwargs.items():
            if codec.mutable(value) and key in sent_kwargs:
                now = codec.encode(value, self)
                if now != sent_kwargs[key]:
                    back["=" + key] = now
        return back

    def call_back(self, key: object, args: tuple, kwargs: dict) -> object:
        """Run a function of the tests' process, with plain arguments, and its result."""
        self.send({"callback": [key, codec.encode(list(args), self),
                                codec.encode(kwargs, self)]})
        while True:
            reply = self.receive()
            if not isinstance(reply, dict):
                raise BoundaryError("the tests' process went away during a callback")
            if "op" not in reply:
                break
            # The tests' function used one of our objects before it answered.
            self.send(self.answer(reply))
        if "ok" in reply:
            return codec.decode(reply["ok"], self)
        raised = reply.get("raised")
        raise _rebuilt(raised if isinstance(raised, dict) else {})

    # -- reports ------------------------------------------------------------------------

    def describe(self, exc: BaseException, depth: int = 0) -> dict:
        kind = type(exc)
        builtin = next(k for k in kind.__mro__ if k.__module__ == "builtins")
        raw_args = list(exc.args)
        if isinstance(exc, OSError) and exc.filename is not None and len(raw_args) == 2:
            raw_args.append(exc.filename)  # OSError(errno, strerror, filename) names it
        try:
            args = codec.encode(raw_args, _PLAIN_ONLY)
        except BaseException:
            args = None
        try:
            text = str(exc)[:MAX_TEXT_CHARS]
        except BaseException:
            text = ""
        attrs = {}
        for key, value in list(getattr(exc, "__dict__", {}).items())[:MAX_ATTRS]:
            try:
                attrs[str(key)[:100]] = _plain_only(value, self)
            except BaseException:
                continue
        described = {"name": str(kind.__qualname__)[:100], "module": str(kind.__module__)[:100],
                     "builtin": builtin.__name__, "args": args, "text": text, "attrs": attrs,
                     "frames": self.frames(exc)}
        cause = exc.__cause__ or exc.__context__
        if cause is not None and depth < 1 and not isinstance(cause, BoundaryError):
            described["cause"] = self.describe(cause, depth + 1)
        return described

    def frames(self, exc: BaseException) -> list:
        found = []
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.path:
                found.append([tb.tb_lineno, tb.tb_frame.f_code.co_name[:100]])
            tb = tb.tb_next
        return found[-MAX_FRAMES:]

    def warning(self, item: warnings.WarningMessage) -> list:
        category = item.category
        builtin = next(k for k in category.__mro__ if k.__module__ == "builtins")
        line = item.lineno if item.filename == self.path else 0
        return [category.__qualname__[:100], str(category.__module__)[:100],
                builtin.__name__, str(item.message)[:MAX_TEXT_CHARS], line]

    # -- frames on the socket -----------------------------------------------------------

    def send(self, message: object) -> None:
        try:
            data = codec.dump_frame(message)
        except (TypeError, ValueError) as exc:
            data = codec.dump_frame({"raised": self.describe(NotPlainData(str(exc)[:500]))})
        self.sock.sendall(data)

    def receive(self) -> object:
        header = self._exactly(codec.HEADER_SIZE)
        if header is None:
            return None
        body = self._exactly(codec.frame_size(header))
        if body is None:
            return None
        return codec.load_frame_body(body)

    def _exactly(self, size: int) -> bytes | None:
        while len(self.buffer) < size:
            chunk = self.sock.recv(max(65536, size - len(self.buffer)))
            if not chunk:
                return None
            self.buffer += chunk
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data


class _LogCapture:
    """The log records the candidate makes during one request, to be logged again in the
    tests' process (caplog), at the level the tests' root logger has there. Only when the
    candidate's module uses logging: importing it here would cost every run."""

    level: int | None = None  # the tests' root level, as they last said

    def __init__(self, logging: types.ModuleType) -> None:
        self.logging = logging
        self.records: list = []
        root = logging.getLogger()
        self.root, self.saved = root, root.level
        keep = self.records

        # The logging module as found loaded (never imported here): a base at run time only.
        class Keep(logging.Handler):  # type: ignore[misc,name-defined]
            def emit(self, record: object) -> None:
                keep.append(record)

        self.handler = Keep()
        if _LogCapture.level is not None:
            root.setLevel(_LogCapture.level)
        root.addHandler(self.handler)

    @classmethod
    def start(cls) -> _LogCapture | None:
        logging = sys.modules.get("logging")
        return cls(logging) if logging is not None else None

    def stop(self) -> None:
        self.root.removeHandler(self.handler)
        self.root.setLevel(self.saved)


def _message(record: LogRecord) -> str:
    try:
        return str(record.getMessage())
    except Exception:
        return str(getattr(record, "msg", ""))


def _follow(message: dict) -> None:
    """The tests' environment variables and working folder, as they are now
    (monkeypatch.setenv, monkeypatch.chdir): the candidate sees what it would in one process.
    And the level of the tests' root logger (caplog.set_level)."""
    level = message.get("log_level")
    if type(level) is int:
        _LogCapture.level = level
    env = message.get("env")
    if isinstance(env, dict):
        for key, value in (env.get("set") or {}).items():
            os.environ[str(key)] = str(value)
        for key in env.get("unset") or []:
            os.environ.pop(str(key), None)
    cwd = message.get("cwd")
    if not isinstance(cwd, str):
        return
    try:
        os.chdir(cwd)
    except OSError:
        return  # a folder the candidate may not enter: it stays where it was


def _which(result: object, args: list, kwargs: dict) -> str | None:
    """The argument (position, or =name) that the call returned itself, if any: the tests
    then get back their own object, as they would in one process."""
    if not codec.mutable(result):
        return None
    for position, value in enumerate(args):
        if value is result:
            return str(position)
    for key, value in kwargs.items():
        if value is result:
            return "=" + key
    return None


def _plain_only(value: object, server: Server) -> object:
    return codec.encode(value, _PLAIN_ONLY)


_PLAIN_ONLY = codec.Peer()  # exports nothing: an exception's attributes are data or dropped


def _rebuilt(raised: dict) -> BaseException:
    """An exception from a callback, as one of Python's own classes."""
    base = getattr(builtins, str(raised.get("builtin")), None)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = RuntimeError
    return base(str(raised.get("text", ""))[:MAX_TEXT_CHARS])


def main(argv: list[str]) -> int:
    fd = int(argv[1])
    sock = _socket.socket(fileno=fd)
    if argv[2:3] == ["--wait"]:
        # Started before the request: the runner's first message says what to serve.
        waiting = Server(sock, "", "")
        message = waiting.receive()
        setup = message.get("setup") if isinstance(message, dict) else None
        if not isinstance(setup, dict):
            return 0
        path, name, eager = str(setup["path"]), str(setup["module"]), setup["eager"] is True
        if isinstance(setup.get("env"), dict):  # this run's environment, not the pool's
            os.environ.clear()
            os.environ.update({str(k): str(v) for k, v in setup["env"].items()})
        with open(path, "wb") as out:
            out.write(str(setup["source"]).encode("latin-1"))
        buffered = waiting.buffer
    else:
        path, name, eager = argv[2], argv[3], argv[4] == "1"
        buffered = b""
    # The candidate's folder first, as it would be for `python3 candidate.py`; the
    # boundary's own folder is not for it to import from.
    ours = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[:] = [os.path.dirname(path)] + [entry for entry in sys.path
                                             if os.path.abspath(entry or ".") != ours]
    sys.argv = [path]
    server = Server(sock, path, name)
    server.buffer = buffered
    sys.stdin = TestsStdin(server)
    builtins.input = _input_of(server)
    if eager:
        server.load()
    try:
        server.serve()
    except (BrokenPipeError, ConnectionResetError):
        return 0  # the tests' process is gone: nothing left to answer
    finally:
        sock.close()
    return 0


def _input_of(server: Server) -> Callable[..., str]:
    def input(prompt: object = "") -> str:  # builtins.input, for the candidate
        return _text(server.call_back("input", (str(prompt),), {}))

    return input

