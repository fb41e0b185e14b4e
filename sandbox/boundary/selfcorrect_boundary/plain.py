"""Frozen tests that need nothing of pytest's, run without pytest: its import and session cost
about 100 ms of CPU per test run in the sandbox image, more than the rest of the tests' side
together, and most frozen tests are module-level functions with plain asserts.

The host decides from the tests' source which ones qualify (selfcorrect_action/evaluation/
plain_tests.py: no pytest, unittest or logging, no fixtures, marks, classes of tests, set-up
functions or star imports) and then adds PLAIN_FLAG to the launcher's arguments. Here, in a
child forked from the tests' process (sandbox/boundary/run_tests.py), each test file is
imported as pytest imports it (its folder first on sys.path, its base name as the module's),
what pytest would collect is found the way pytest finds it (the module's names in definition
order), and each test is called with what pytest gives a test that uses no fixture: output
captured at the descriptor level (pytest's encoding and error handler), stdin that refuses
reads, the warnings filters pytest sets around each test, PYTEST_CURRENT_TEST.

Only a pass is this runner's to report. A failure, an error, or anything it finds that pytest
would treat in a way of its own (a name pytest collects that is not a plain function, a test
that returns a value, nothing to collect) ends the child, and the tests' process runs pytest
over the same files as it always did, with a fresh candidate process (pytest's report, its
assertion messages, is what repairs are made from). When the plain run had seen a test fail
and pytest's run then passes, the run fails all the same (record_first_failure): a candidate
whose second run passes where its first failed has not been shown to work.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

PLAIN_FLAG = "--selfcorrect-plain"
PASSED, FAILED, UNFIT = "passed", "failed", "unfit"
# Names pytest reads from a test module or collects on its own terms (set-up and tear-down
# functions, nose's too, marks, plugins): a module holding one is pytest's to run.
PYTEST_NAMES = frozenset({
    "pytestmark", "pytest_plugins", "__test__", "setup_module", "teardown_module",
    "setUpModule", "tearDownModule", "setup", "teardown", "setup_function",
    "teardown_function", "collect_ignore", "collect_ignore_glob", "__getattr__"})
# Modules a helper of the tests may import (an input file the tests import): the tests then
# depend on pytest's way of running them (a skip, a TestCase), so pytest decides. `logging`
# only when the run did not pass: pytest's handlers on the root logger change what a
# helper's basicConfig does.
PYTEST_MODULES = frozenset({"pytest", "_pytest", "unittest", "doctest", "hypothesis", "pluggy"})
IF_FAILED_MODULES = PYTEST_MODULES | {"logging"}
_STDIN_REFUSAL = "pytest: reading from stdin while output is captured!  Consider using `-s`."
MAX_MESSAGE_CHARS = 2000


class Unfit(Exception):
    """Something in the tests that only pytest runs as pytest does."""


class Options:
    """What the plain run needs from the launcher's pytest arguments: the rootdir (test ids
    are relative to it), the junit report's path, the test files."""

    def __init__(self, rootdir: str, junit: str, files: list[str]) -> None:
        self.rootdir, self.junit, self.files = rootdir, junit, files


def preload() -> None:
    """Import what a plain run imports only when it runs (kept lazy for the tests' own
    start), for a parent that forks many runs (a batch's zygote)."""
    import datetime  # noqa: F401
    import importlib  # noqa: F401
    import json  # noqa: F401
    import types  # noqa: F401
    import warnings  # noqa: F401
    import xml.etree.ElementTree  # noqa: F401


def parse(args: list[str]) -> Options | None:
    """The options of selfcorrect's own launcher arguments (evaluation/junit.py's
    boundary_pytest_argv); None for any argument list of another shape."""
    if "--" not in args:
        return None
    split = args.index("--")
    rootdir = junit = None
    for arg in args[:split]:
        if arg.startswith("--rootdir="):
            rootdir = arg.split("=", 1)[1]
        elif arg.startswith("--junitxml="):
            junit = arg.split("=", 1)[1]
    files = args[split + 1:]
    if rootdir is None or junit is None or not files:
        return None
    return Options(rootdir, junit, files)


# -- the tests' process -----------------------------------------------------------------


def run_forked(options: Options, after_each: Callable[[], object]) -> dict:
    """Run the tests in a child of this process, which stays as it was (nothing of the tests
    imported) for pytest to run them if they do not all pass plainly. The child's outcome:
    {"outcome": PASSED | FAILED | UNFIT, "test": id, "message": text}."""
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: it never returns
        os.close(read_end)
        code = 1
        try:
            outcome = run(options, after_each)
            _write_all(write_end, _encode(outcome))
            code = 0 if outcome["outcome"] == PASSED else 3
        except BaseException as exc:
            # Ours, not the tests': pytest decides.
            with contextlib.suppress(BaseException):
                _write_all(write_end, _encode({"outcome": UNFIT, "test": "",
                                               "message": f"plain runner: {exc!r}"}))
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    while True:
        try:
            chunk = os.read(read_end, 65536)
        except InterruptedError:
            continue
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    decoded = _decode(b"".join(chunks))
    if decoded is None or (decoded["outcome"] == PASSED) != (os.waitstatus_to_exitcode(status)
                                                             == 0):
        # The child died (a signal, a crash in C): what it saw is unknown, so not a pass.
        return {"outcome": FAILED, "test": "",
                "message": "the plain run's process ended without an outcome "
                           f"(status {os.waitstatus_to_exitcode(status)})"}
    return decoded


def _encode(outcome: dict) -> bytes:
    import json

    return json.dumps(outcome).encode("utf-8", "replace")


def _decode(data: bytes) -> dict | None:
    import json

    try:
        value = json.loads(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    if not (isinstance(value, dict) and value.get("outcome") in (PASSED, FAILED, UNFIT)):
        return None
    return {"outcome": value["outcome"], "test": str(value.get("test", "")),
            "message": str(value.get("message", ""))[:MAX_MESSAGE_CHARS]}


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
    os.close(fd)


# -- the child ----------------------------------------------------------------------------


class _Test:
    def __init__(self, classname: str, path: str, rel: str, name: str, function: object,
                 line: int) -> None:
        self.classname, self.path, self.rel, self.name = classname, path, rel, name
        self.function, self.line = function, line

    @property
    def nodeid(self) -> str:
        return f"{self.rel}::{self.name}"


def run(options: Options, after_each: Callable[[], object]) -> dict:
    """Import, collect and run every test with output captured; write pytest's junit report
    when all pass. Runs in the child: it changes this process for good."""
    import warnings

    started = time.time()
    loaded = set(sys.modules)
    capture = _Capture()
    tests: list[_Test] = []
    try:
        with warnings.catch_warnings(record=True):
            _pytest_warning_filters(warnings)
            for path in options.files:
                tests.extend(_collect(path, options.rootdir))
        if not tests:
            raise Unfit("no tests collected (pytest reports that itself)")
        timings = []
        for test in tests:
            began = time.perf_counter()
            try:
                failure = _call(test, warnings)
            finally:
                after_each()  # pytest's teardown of every test (the boundary's plugin)
            timings.append(time.perf_counter() - began)
            if failure is not None:
                return _unless_pytest_s(loaded, IF_FAILED_MODULES, {
                    "outcome": FAILED, "test": test.nodeid, "message": failure[0],
                    "raised_by": failure[1]})
        unfit = _unless_pytest_s(loaded, PYTEST_MODULES, {"outcome": PASSED})
        if unfit["outcome"] == UNFIT:
            return unfit
    except Unfit as exc:
        return {"outcome": UNFIT, "test": "", "message": str(exc)}
    except BaseException as exc:  # an import that failed: pytest reports it
        return _unless_pytest_s(loaded, IF_FAILED_MODULES, {
            "outcome": FAILED, "test": "", "message": _describe(exc),
            "raised_by": _raised_by(exc)})
    finally:
        capture.stop()
    elapsed = time.time() - started
    _write_junit(options.junit, tests, timings, started, elapsed)
    os.write(1, (f"{'.' * len(tests)}\n{len(tests)} passed in {elapsed:.2f}s (plain runner: "
                 "these tests use nothing of pytest's)\n").encode())
    return {"outcome": PASSED, "test": "", "message": ""}


def _unless_pytest_s(loaded: set[str], modules: frozenset[str], outcome: dict) -> dict:
    """`outcome`, or UNFIT when the tests (a helper of theirs) imported one of `modules`
    since the run began, or failed with one of pytest's or unittest's exceptions (a skip,
    an xfail: a helper that had pytest imported already). Only the tests' own code imports
    or raises those here: the candidate's process never makes this one import anything,
    and an exception of pytest's or unittest's it raises reaches the tests as the
    boundary's CandidateRefused."""
    new = sorted({name.split(".")[0] for name in set(sys.modules) - loaded} & modules)
    if new:
        return {"outcome": UNFIT, "test": "",
                "message": f"the tests imported {new[0]}, which pytest runs its own way"}
    if outcome.pop("raised_by", "") in PYTEST_MODULES:
        return {"outcome": UNFIT, "test": "",
                "message": f"{outcome['test']} raised {outcome['message']}, one of pytest's "
                           "or unittest's outcomes"}
    return outcome


def _raised_by(exc: BaseException) -> str:
    """The top-level module of what `exc` is: pytest's outcomes (skip, fail, xfail) call
    themselves builtins', so they are recognised by class."""
    outcomes = sys.modules.get("_pytest.outcomes")
    if outcomes is not None and isinstance(exc, getattr(outcomes, "OutcomeException", ())):
        return "_pytest"
    case = sys.modules.get("unittest.case")
    if case is not None and isinstance(exc, getattr(case, "SkipTest", ())):
        return "unittest"
    return type(exc).__module__.split(".")[0]


def _collect(path: str, rootdir: str) -> list[_Test]:
    """Import `path` as pytest's default ("prepend") import mode does and find what pytest
    would collect from it, in its order."""
    import importlib
    import types

    folder, base = os.path.split(os.path.abspath(path))
    name = base[:-3] if base.endswith(".py") else ""
    if not name.isidentifier() or os.path.exists(os.path.join(folder, "__init__.py")):
        raise Unfit(f"{path} is not a top-level module (pytest names it itself)")
    if name in sys.modules or name in sys.stdlib_module_names:
        # pytest has imported many of the standard ones itself ("import file mismatch").
        raise Unfit(f"{name} is the name of a standard module")
    if sys.path[:1] != [folder]:
        sys.path.insert(0, folder)
    module = importlib.import_module(name)
    if os.path.realpath(getattr(module, "__file__", "") or "") != os.path.realpath(path):
        raise Unfit(f"importing {name} did not load {path}")
    rel = os.path.relpath(path, rootdir)
    found = []
    for attr, value in list(vars(module).items()):
        if attr in PYTEST_NAMES or attr.startswith("pytest"):
            raise Unfit(f"{rel} defines {attr}, which pytest reads")
        marked = _nose_test(value)
        if not (attr.startswith(("test", "Test")) or marked):
            continue
        if not (isinstance(value, types.FunctionType) and attr.startswith("test")
                and not marked and not _pytest_attributes(value)):
            raise Unfit(f"{rel}::{attr} is collected by pytest on its own terms")
        code = value.__code__
        if (code.co_argcount or code.co_kwonlyargcount or code.co_posonlyargcount
                or code.co_flags & (0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200)):
            # Arguments (fixtures), *args/**kwargs, generators, coroutines, async generators.
            raise Unfit(f"{rel}::{attr} takes arguments or is not a plain function")
        classname = (rel[:-3] if rel.endswith(".py") else rel).replace(os.sep, ".")
        found.append(_Test(classname, path, rel, attr, value, code.co_firstlineno - 1))
    return found


def _nose_test(value: object) -> bool:
    """pytest collects anything whose __test__ is True, whatever its name."""
    try:
        return getattr(value, "__test__", False) is True
    except Exception:
        return False


def _pytest_attributes(function: object) -> bool:
    """Marks, a fixture's marker, a wrapped function (whose signature pytest reads)."""
    held = getattr(function, "__dict__", {})
    return any(key in held for key in ("pytestmark", "_pytestfixturefunction", "__wrapped__",
                                       "__test__", "__signature__"))


def _call(test: _Test, warnings: object) -> tuple[str, str] | None:
    """Run one test as pytest runs a test without fixtures: why it failed and the top-level
    module of what it raised, or None. Raises Unfit when pytest would judge the outcome on
    its own terms."""
    os.environ["PYTEST_CURRENT_TEST"] = f"{test.nodeid} (call)"
    try:
        with warnings.catch_warnings(record=True):  # type: ignore[attr-defined]
            _pytest_warning_filters(warnings)
            returned = test.function()  # type: ignore[operator]
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise Unfit("a test was interrupted") from None
        return _describe(exc), _raised_by(exc)
    finally:
        os.environ.pop("PYTEST_CURRENT_TEST", None)
    if returned is not None:
        raise Unfit(f"{test.nodeid} returned a value (pytest warns about it)")
    return None


def _pytest_warning_filters(warnings: object) -> None:
    """What pytest's warnings plugin sets around collection and each test (no -W options)."""
    if not sys.warnoptions:
        warnings.filterwarnings("always", category=DeprecationWarning)  # type: ignore[attr-defined]
        warnings.filterwarnings("always", category=PendingDeprecationWarning)  # type: ignore[attr-defined]


def _describe(exc: BaseException) -> str:
    try:
        text = f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"
    except BaseException:
        text = f"{type(exc).__qualname__} (unprintable)"
    return text[:MAX_MESSAGE_CHARS]


class _Stdin:
    """What pytest (7.2, the image's) puts in sys.stdin while it captures output."""

    encoding = None

    def read(self, size: int | None = -1) -> str:
        raise OSError(_STDIN_REFUSAL)

    readline = read

    def __next__(self) -> str:
        raise OSError(_STDIN_REFUSAL)

    def readlines(self, hint: int | None = -1) -> list[str]:
        raise OSError(_STDIN_REFUSAL)

    def __iter__(self) -> _Stdin:
        return self

    def fileno(self) -> int:
        raise io.UnsupportedOperation("redirected stdin is pseudofile, has no fileno()")

    def isatty(self) -> bool:
        return False

    def close(self) -> None:
        pass

    @property
    def buffer(self) -> _Stdin:
        return self


class _Capture:
    """pytest's fd capture: descriptors 1 and 2 (and sys.stdout and sys.stderr, text with
    pytest's encoding and error handler) go to a file of ours, stdin reads nothing. What
    passing tests print is never shown, by pytest either."""

    def __init__(self) -> None:
        self.saved = {fd: os.dup(fd) for fd in (0, 1, 2)}
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        sys.stdin = _Stdin()
        sys.stdout = self._text(1)
        sys.stderr = self._text(2)

    @staticmethod
    def _text(fd: int) -> io.TextIOWrapper:
        raw = io.FileIO(fd, "wb", closefd=False)
        return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="",
                                write_through=True)

    def stop(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                continue
        for fd, saved in self.saved.items():
            os.dup2(saved, fd)
            os.close(saved)
        sys.stdin, sys.stdout, sys.stderr = self.streams


# -- the report ------------------------------------------------------------------------------


def _write_junit(path: str, tests: list[_Test], timings: list[float], started: float,
                 elapsed: float) -> None:
    """pytest's junit XML (xunit1, as the launcher asks for) of a run where all passed."""
    from datetime import datetime

    cases = "".join(
        f'<testcase classname="{_attr(test.classname)}" name="{_attr(test.name)}" '
        f'file="{_attr(test.rel)}" line="{test.line}" time="{spent:.3f}" />'
        for test, spent in zip(tests, timings, strict=True))
    stamp = datetime.fromtimestamp(started).isoformat()
    # What selfcorrect's pytest plugin records (sandbox/pytest_collected.py): every test
    # collected here ran to its end, or this report would not be written.
    record = ('<properties><property name="selfcorrect.collected" '
              f'value="{len(tests)}" /><property name="selfcorrect.not_run" value="0" />'
              '</properties>')
    text = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
            f'errors="0" failures="0" skipped="0" tests="{len(tests)}" time="{elapsed:.3f}" '
            f'timestamp="{stamp}" hostname="{_attr(os.uname().nodename)}">{record}{cases}'
            "</testsuite></testsuites>")
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _attr(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def after_pytest(code: int, args: list[str], first: dict | None) -> int:
    """pytest's exit status for the same tests (`args`, the launcher's pytest arguments) after
    the plain run; when the plain run had seen a failure (`first`) and pytest passed, the
    run fails all the same, the failure added to pytest's report (record_first_failure)."""
    if first is None or code != 0:
        return code
    options = parse(args)
    if options is not None:
        record_first_failure(options.junit, first)
    return 1


def record_first_failure(path: str, outcome: dict) -> None:
    """pytest's run passed after the plain run had seen a failure: add that failure to
    pytest's report as a test of its own, so that the run fails and says why."""
    from xml.etree import ElementTree

    tree = ElementTree.parse(path)
    suite = tree.getroot().find("testsuite")
    if suite is None:
        raise ValueError(f"{path} holds no testsuite")
    what = outcome["test"] or "importing the tests"
    message = (f"{what} failed when the tests first ran, without pytest "
               f"({outcome['message']}); run again under pytest, with a fresh process of the "
               "candidate, they passed. Either the candidate's result depends on what an "
               "earlier run left behind (not shown to work), or the tests behave differently "
               "outside pytest: then set `tests_runner: pytest` in the spec")
    case = ElementTree.SubElement(suite, "testcase", {
        "classname": "selfcorrect", "name": "first_run", "file": "", "line": "0",
        "time": "0.000"})
    ElementTree.SubElement(case, "failure", {"message": message[:MAX_MESSAGE_CHARS]}).text = (
        message)
    suite.set("failures", str(int(suite.get("failures", "0") or 0) + 1))
    suite.set("tests", str(int(suite.get("tests", "0") or 0) + 1))
    tree.write(path, encoding="utf-8", xml_declaration=True)
