"""Which failure category an uncaught exception belongs to, and a one-line reason why.

Ordered rules, first match wins; anything unmatched is a bug in the candidate's own code
(runtime). The rules look at the exception's type as printed (qualified names kept), its
message, and where it was raised (a FileNotFoundError inside subprocess.py is a missing program,
not a missing data file).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from selfcorrect_action.evaluation.tracebacks import Traceback, last_frame_in
from selfcorrect_action.sandbox.models import WORK_DIR
from selfcorrect_action.taxonomy import Category

Outcome = tuple[Category, str]

_SYNTAX = frozenset({"SyntaxError", "IndentationError", "TabError"})
_NO_MODULE = re.compile(r"No module named '([^']+)'")
_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")
# CalledProcessError: "Command 'convert a.png b.jpg' ..." or "Command '['convert', 'a.png']' ..."
_COMMAND = re.compile(r"Command '\[?'?([^' \]]+)")
_QUOTED_PATH = re.compile(r"\[Errno -?\d+\] [^:]*: '([^']*)'")

_RESOURCE_MESSAGES: tuple[tuple[str, str], ...] = (
    ("[Errno 28]", "the disk or work dir is full (No space left on device)"),
    ("[Errno 122]", "the disk quota is exhausted"),
    ("[Errno 27]", "a file grew past the file-size limit"),
    ("[Errno 24]", "the open-file limit was reached (Too many open files)"),
    ("[Errno 12]", "the memory limit was reached (Cannot allocate memory)"),
    ("[Errno 11]", "the process/thread limit was reached (Resource temporarily unavailable)"),
    ("can't start new thread", "the process/thread limit was reached"),
)

_NETWORK_TYPES = frozenset(
    {
        "socket.gaierror",
        "socket.herror",
        "socket.timeout",
        "ConnectionError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "ConnectionAbortedError",
        "urllib.error.URLError",
        "urllib.error.HTTPError",
        "ssl.SSLError",
        "ssl.SSLCertVerificationError",
    }
)
_NETWORK_MODULES = ("requests.exceptions.", "urllib3.exceptions.", "http.client.", "httpx.")
# Raised by those libraries for a malformed URL or body: the code is wrong, not the network.
_NOT_NETWORK = frozenset(
    {
        "MissingSchema",
        "InvalidSchema",
        "InvalidURL",
        "URLRequired",
        "InvalidHeader",
        "JSONDecodeError",
        "InvalidJSONError",
        "LocationParseError",
        "UnsupportedProtocol",
    }
)
_NETWORK_MESSAGES: tuple[tuple[str, str], ...] = (
    ("Temporary failure in name resolution", "DNS lookup failed"),
    ("Name or service not known", "DNS lookup failed"),
    ("No address associated with hostname", "DNS lookup failed"),
    ("Failed to resolve", "DNS lookup failed"),
    ("getaddrinfo failed", "DNS lookup failed"),
    ("Network is unreachable", "the network is unreachable"),
    ("[Errno 101]", "the network is unreachable"),
    ("No route to host", "no route to the host"),
    ("Connection refused", "the connection was refused"),
    ("Max retries exceeded", "the host could not be reached"),
)
# A FileNotFoundError on a line that writes means a missing output directory: the script's bug.
_WRITES = re.compile(
    r"savefig|\.to_(?:csv|json|excel|parquet|html)\(|write_(?:text|bytes)\(|\.save\(|"
    r"mkstemp|open\(.*['\"][wax]b?\+?['\"]"
)


def classify_exception(tb: Traceback, *, script_name: str) -> Outcome:
    for rule in _RULES:
        outcome = rule(tb, script_name)
        if outcome is not None:
            return outcome
    return Category.RUNTIME, _runtime_reason(tb)


def _syntax(tb: Traceback, script_name: str) -> Outcome | None:
    if tb.exc_name not in _SYNTAX:
        return None
    return Category.SYNTAX, "the file does not compile"


def _missing_module(tb: Traceback, script_name: str) -> Outcome | None:
    if tb.exc_name not in {"ModuleNotFoundError", "ImportError"}:
        return None
    if found := _NO_MODULE.search(tb.message):
        top = found.group(1).split(".")[0]
        return Category.ENVIRONMENT, (
            f"module {top!r} is not installed in the sandbox image: use the standard library "
            "or a package the image has"
        )
    if found := _CANNOT_IMPORT.search(tb.message):
        name, module = found.groups()
        return Category.ENVIRONMENT, (
            f"the {module!r} installed in the image has no {name!r}: use what that version offers"
        )
    return Category.ENVIRONMENT, "an import failed: a library or shared object is missing"


def _missing_executable(tb: Traceback, script_name: str) -> Outcome | None:
    if "returned non-zero exit status 127" in tb.message:
        found = _COMMAND.search(tb.message)
        program = repr(found.group(1)) if found else "the command"
        return Category.ENVIRONMENT, (
            f"{program} was not found (status 127): it is not installed in the sandbox image"
        )
    from_subprocess = any(frame.file.endswith("subprocess.py") for frame in tb.frames)
    if not from_subprocess or tb.exc_name not in {"FileNotFoundError", "PermissionError"}:
        return None
    program = _quoted_path(tb.message) or "the program"
    return Category.ENVIRONMENT, (
        f"executable {program!r} is not installed in the sandbox image: do the work in Python"
    )


def _read_only(tb: Traceback, script_name: str) -> Outcome | None:
    target = _quoted_path(tb.message) or ""
    writable = any(PurePosixPath(target).is_relative_to(root) for root in (WORK_DIR, "/tmp"))
    outside = target.startswith("/") and not writable
    if "[Errno 30]" in tb.message or (tb.exc_name == "PermissionError" and outside):
        return Category.ENVIRONMENT, (
            "only the work dir and /tmp are writable in the sandbox: write files to the "
            "current directory"
        )
    return None


def _resource(tb: Traceback, script_name: str) -> Outcome | None:
    if tb.exc_name.endswith("MemoryError"):  # numpy raises _ArrayMemoryError
        return Category.RESOURCE, "the script ran out of memory: process the data in smaller pieces"
    for needle, reason in _RESOURCE_MESSAGES:
        if needle in tb.message:
            return Category.RESOURCE, reason
    return None


def _network(tb: Traceback, script_name: str) -> Outcome | None:
    by_type = tb.exc_type in _NETWORK_TYPES or _network_timeout(tb) or (
        tb.exc_type.startswith(_NETWORK_MODULES) and tb.exc_name not in _NOT_NETWORK
    )
    what = next((reason for needle, reason in _NETWORK_MESSAGES if needle in tb.message), None)
    if by_type or what:
        return Category.EXTERNAL, (
            f"a network resource could not be reached ({what or tb.exc_name}): the sandbox has "
            "no network unless the contract asks for it; use data available offline"
        )
    return None


def _network_timeout(tb: Traceback) -> bool:
    """TimeoutError is socket.timeout since Python 3.10, but also what concurrent.futures
    and asyncio raise when the script's own wait runs out: only a timeout raised in
    networking code is the network's."""
    if tb.exc_type != "TimeoutError":
        return False
    # socket says "timed out" or "[Errno 110] Connection timed out"; the futures and
    # asyncio timeouts carry no message.
    said = "timed out" in tb.message.lower() or "errno" in tb.message.lower()
    return said or any(_NETWORK_FILE.search(frame.file) for frame in tb.frames[-3:])


_NETWORK_FILE = re.compile(r"/(socket|ssl|urllib3?/|http/|requests/|httpx/|aiohttp/)")


def _missing_file(tb: Traceback, script_name: str) -> Outcome | None:
    if tb.exc_name != "FileNotFoundError":
        return None
    name = _quoted_path(tb.message) or "a file"
    frame = last_frame_in(tb, script_name)
    if frame is not None and frame.source and _WRITES.search(frame.source):
        return Category.RUNTIME, (
            f"the directory for the output {name!r} does not exist: create it before writing"
        )
    return Category.EXTERNAL, f"missing input data: {name!r} does not exist in the work dir"


_RULES: tuple[Callable[[Traceback, str], Outcome | None], ...] = (
    _syntax,
    _missing_module,
    _missing_executable,
    _read_only,
    _resource,
    _network,
    _missing_file,
)


def _runtime_reason(tb: Traceback) -> str:
    if tb.exc_name == "AssertionError":
        return "an assertion in the script failed"
    if tb.exc_name == "RecursionError":
        return "unbounded recursion in the script"
    return "an uncaught exception in the script"


def _quoted_path(message: str) -> str | None:
    found = _QUOTED_PATH.search(message)
    return found.group(1) if found else None
