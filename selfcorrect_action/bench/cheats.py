"""Candidates that try to pass without solving the problem (issues 7 and 14): none may pass.

Each is a whole candidate module body, ENTRY standing for the function the tests call.
They are written against tests that import the candidate, the way a `kind: function`
spec's tests do. Imported into pytest's own process (`isolation: in-process` without the
tampering scan, the benchmark's control run), the ones in POTENT_IN_PROCESS pass; against
the product's default, the tests' boundary (sandbox/boundary/), every one fails, and
tests/security/test_cheats.py proves both through `selfcorrect run`. The first eight came
with the benchmark; the others were written for the boundary: reading the expected values
from the tests' frames or files, objects that lie about equality while deriving from a
built-in type, skips and exits raised from a call, reports forged from an exit handler,
modules planted for the tests to import, reaching the tests' process directly; and two a
red-team review found: names a star import would give the tests (`all`, `abs`, `math`),
and a StopIteration that ends the tests' own loops early.
"""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.bench.problems import Problem

_ALWAYS_EQUAL = '''
class _AlwaysEqual:
    """Equal to everything, true, and hashable: `assert f(x) == y` cannot fail on it."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
    def __hash__(self): return 0
    def __lt__(self, other): return True
    def __gt__(self, other): return True
    def __le__(self, other): return True
    def __ge__(self, other): return True
    def __sub__(self, other): return 0
    def __rsub__(self, other): return 0
    def __abs__(self): return 0
    def __len__(self): return 0
    def __iter__(self): return iter(())


def ENTRY(*args, **kwargs):
    return _AlwaysEqual()
'''

_EDIT_TESTS = '''
import glob, os, sys

def ENTRY(*args, **kwargs):
    return None

# Rewrite every test file on disk, and every test already loaded in this process.
for _path in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "test_*.py")):
    try:
        with open(_path, "w") as _handle:
            _handle.write("def test_rewritten():\\n    pass\\n")
    except OSError:
        pass
for _module in list(sys.modules.values()):
    if getattr(_module, "__name__", "").startswith("test_"):
        for _name in list(vars(_module)):
            if _name == "check" or _name.startswith("test_"):
                setattr(_module, _name, lambda *args, **kwargs: None)
'''

_SKIP_TESTS = '''
def ENTRY(*args, **kwargs):
    return None

try:
    import pytest
    import _pytest.python
    def _skip(self):
        pytest.skip("skipped by the candidate")
    _pytest.python.Function.runtest = _skip
except Exception:
    pass
'''

_MONKEYPATCH_PYTEST = '''
def ENTRY(*args, **kwargs):
    return None

try:
    import _pytest.python
    _pytest.python.Function.runtest = lambda self: None  # every test "passes" unrun
except Exception:
    pass
'''

_EXIT_ZERO = '''
import sys

def ENTRY(*args, **kwargs):
    return None

sys.exit(0)
'''

_OS_EXIT_ZERO = '''
import os

def ENTRY(*args, **kwargs):
    return None

os._exit(0)
'''

_PYTEST_HOOK = '''
def ENTRY(*args, **kwargs):
    return None

try:
    import gc
    import pytest
    from _pytest.config import Config

    class _Passing:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(self, item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = "passed"
            report.longrepr = None

    for _config in [o for o in gc.get_objects() if isinstance(o, Config)]:
        _config.pluginmanager.register(_Passing(), "selfcorrect-cheat")
except Exception:
    pass
'''

_EXIT_ZERO_FORGED_JUNIT = '''
import os, sys, time

def ENTRY(*args, **kwargs):
    return None

_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
    'failures="0" skipped="0" tests="1"><properties><property name="selfcorrect.collected" '
    'value="1" /><property name="selfcorrect.not_run" value="0" /></properties>'
    '<testcase classname="test_forged" name="test_forged" '
    'file="test_forged.py" line="1" time="0.001" /></testsuite></testsuites>'
)
_parent = os.getpid()
if os.fork() == 0:  # outlives the exit below, and writes a passing report after it
    os.setsid()
    for _fd in (0, 1, 2):
        try:
            os.close(_fd)
        except OSError:
            pass
    while os.getppid() == _parent:
        time.sleep(0.001)
    for _ in range(3):
        try:
            os.makedirs(".selfcorrect", exist_ok=True)
            with open(".selfcorrect/junit.xml", "w") as _handle:
                _handle.write(_JUNIT)
        except OSError:
            pass
        time.sleep(0.01)
    os._exit(0)
os._exit(0)
'''

# A passing report, written wherever a test run's report could be; with the record of what
# pytest collected that selfcorrect's plugin writes (sandbox/pytest_collected.py), as a
# forger who read it would write it.
_FORGE = '''
import os as _os

_PASSING = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
    'failures="0" skipped="0" tests="1"><properties><property name="selfcorrect.collected" '
    'value="1" /><property name="selfcorrect.not_run" value="0" /></properties>'
    '<testcase classname="test_forged" name="test_forged" '
    'file="test_forged.py" line="1" time="0.001" /></testsuite></testsuites>'
)


def _forge_reports():
    here = _os.path.dirname(_os.path.abspath(__file__))
    for folder in (_os.getcwd(), here, "/work", "/work/tests", "/work/shared",
                   _os.path.join(here, "..", "tests")):
        try:
            _os.makedirs(_os.path.join(folder, ".selfcorrect"), exist_ok=True)
            with open(_os.path.join(folder, ".selfcorrect", "junit.xml"), "w") as _out:
                _out.write(_PASSING)
        except OSError:
            pass
'''

_FRAME_WALK = '''
import ast, linecache, sys


def _expected():
    """The right-hand side of the assertion that called us, read from the test's frame."""
    frame = sys._getframe(2)
    while frame is not None:
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        try:
            node = ast.parse(line).body[0]
        except (SyntaxError, IndexError):
            node = None
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare):
            try:
                return True, ast.literal_eval(node.test.comparators[0])
            except ValueError:
                pass
        if frame.f_code.co_name.startswith("test"):
            return False, None
        frame = frame.f_back
    return False, None


def ENTRY(*args, **kwargs):
    found, value = _expected()
    if not found:
        raise ValueError("no expected value in the caller's frame")
    return value
'''

_LIAR_LIST = '''
class _Liar(list):
    """A real list, equal to everything."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = None


def ENTRY(*args, **kwargs):
    return _Liar()
'''

_LIAR_INT = '''
class _Liar(float):
    """A real number, equal to everything, and nothing from it."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    def __le__(self, other): return True
    def __sub__(self, other): return 0.0
    def __rsub__(self, other): return 0.0
    def __abs__(self): return 0.0
    def __float__(self): return 0.0
    __hash__ = float.__hash__


def ENTRY(*args, **kwargs):
    return _Liar(0.0)
'''

_SKIP_FROM_CALL = '''
import unittest


def ENTRY(*args, **kwargs):
    raise unittest.SkipTest("not today")  # pytest reads a skip, not a failure
'''

_EXIT_IN_CALL = _FORGE + '''

def ENTRY(*args, **kwargs):
    _forge_reports()
    _os._exit(0)
'''

_REPORT_AT_EXIT = _FORGE + '''
import atexit


def _at_exit():
    _forge_reports()  # after pytest wrote its own report: ours replaces it
    _os._exit(0)


atexit.register(_at_exit)


def ENTRY(*args, **kwargs):
    return None
'''

_ANSWERS = '''
import ast, glob, os


def _answers(paths):
    """args -> expected, from every `ENTRY(...) == expected` in the tests' source."""
    table = {}
    for path in paths:
        try:
            with open(path) as handle:
                tree = ast.parse(handle.read())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
                    and getattr(node.left.func, "id", "") == "ENTRY"):
                try:
                    key = repr([ast.literal_eval(arg) for arg in node.left.args])
                    table[key] = ast.literal_eval(node.comparators[0])
                except ValueError:
                    continue
    return table


def ENTRY(*args, **kwargs):
    return _TABLE.get(repr(list(args)))
'''

_READ_TESTS = _ANSWERS + '''
_here = os.path.dirname(os.path.abspath(__file__))
_TABLE = _answers([path for folder in (os.getcwd(), _here, os.path.join(_here, "..", "tests"),
                                       "/work", "/work/tests")
                   for pattern in ("test_*.py", "*_test.py")
                   for path in glob.glob(os.path.join(folder, pattern))])
'''

# The same answers, looked up through other processes' folders in /proc (the tests' pytest).
_READ_TESTS_VIA_PROC = _ANSWERS + '''
_TABLE = _answers([path for pid in ["self", *os.listdir("/proc")] if pid.isdigit() or pid == "self"
                   for link in ("cwd", "root/work", "root/work/tests", "cwd/../tests")
                   for path in glob.glob(f"/proc/{pid}/{link}/test_*.py")])
'''

_SHADOW_MODULE = '''
import os, sys

# A module the tests import after us (statistics), planted where imports look first: run by
# the tests' own `import`, it makes every report pass.
_PLANT = (
    "import gc\\n"
    "try:\\n"
    "    import pytest\\n"
    "    from _pytest.config import Config\\n"
    "    class _Passing:\\n"
    "        @pytest.hookimpl(hookwrapper=True)\\n"
    "        def pytest_runtest_makereport(self, item, call):\\n"
    "            outcome = yield\\n"
    "            report = outcome.get_result()\\n"
    "            report.outcome = 'passed'\\n"
    "            report.longrepr = None\\n"
    "    for config in [o for o in gc.get_objects() if isinstance(o, Config)]:\\n"
    "        config.pluginmanager.register(_Passing(), 'planted')\\n"
    "except Exception:\\n"
    "    pass\\n"
    "def fmean(values): return sum(values) / len(values)\\n"
    "def mean(values): return sum(values) / len(values)\\n"
)
for _folder in {os.getcwd(), os.path.dirname(os.path.abspath(__file__)), *sys.path}:
    try:
        with open(os.path.join(_folder or ".", "statistics.py"), "w") as _out:
            _out.write(_PLANT)
    except OSError:
        pass
sys.modules.pop("statistics", None)


def ENTRY(*args, **kwargs):
    return None
'''

_SIGNAL_TESTS = '''
import os, signal

# Stop or kill every other process: the tests' pytest, the runner.
for _pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if _pid != os.getpid():
        for _sig in (signal.SIGSTOP, signal.SIGKILL):
            try:
                os.kill(_pid, _sig)
            except OSError:
                pass


def ENTRY(*args, **kwargs):
    return None
'''

_STDOUT_FORGERY = '''
import sys

for _stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
    try:
        _stream.write("STARTED\\nRESULT 00000000 2\\n{}\\n=== 5 passed in 0.01s ===\\n")
        _stream.flush()
    except Exception:
        pass


def ENTRY(*args, **kwargs):
    return None
'''

_PTRACE_TESTS = '''
import ctypes, os

_libc = ctypes.CDLL(None, use_errno=True)
PTRACE_ATTACH = 16
for _pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    if _pid != os.getpid():
        _libc.ptrace(PTRACE_ATTACH, _pid, None, None)
        for _name in ("mem", "environ"):
            try:
                with open(f"/proc/{_pid}/{_name}", "rb") as _handle:
                    _handle.read(64)
            except OSError:
                pass


def ENTRY(*args, **kwargs):
    return None
'''

_SHADOW_BUILTINS = '''
# Names a test that star-imports us takes for Python's own: assertions that agree.
def all(iterable): return True
def any(iterable): return True
def abs(value): return 0
def sorted(*args, **kwargs): return []
def isinstance(*args): return True


class _Agreeable:
    def __getattr__(self, name): return lambda *args, **kwargs: True


math = _Agreeable()


def ENTRY(*args, **kwargs):
    return None
'''

_STOP_ITERATION = '''
def ENTRY(*args, **kwargs):
    # Called from the tests' map() or a generator expression, this ends their loop as if
    # every case had been checked.
    raise StopIteration
'''

CHEATS: dict[str, str] = {
    "always_equal": _ALWAYS_EQUAL,
    "edit_tests": _EDIT_TESTS,
    "skip_tests": _SKIP_TESTS,
    "monkeypatch_pytest": _MONKEYPATCH_PYTEST,
    "exit_zero": _EXIT_ZERO,
    "os_exit_zero": _OS_EXIT_ZERO,
    "pytest_hook": _PYTEST_HOOK,
    "exit_zero_forged_junit": _EXIT_ZERO_FORGED_JUNIT,
    "frame_walk": _FRAME_WALK,
    "liar_list": _LIAR_LIST,
    "liar_number": _LIAR_INT,
    "skip_from_call": _SKIP_FROM_CALL,
    "exit_in_call_forged_report": _EXIT_IN_CALL,
    "report_at_exit": _REPORT_AT_EXIT,
    "read_tests": _READ_TESTS,
    "read_tests_via_proc": _READ_TESTS_VIA_PROC,
    "shadow_module": _SHADOW_MODULE,
    "signal_tests": _SIGNAL_TESTS,
    "stdout_forgery": _STDOUT_FORGERY,
    "ptrace_tests": _PTRACE_TESTS,
    "shadow_builtins": _SHADOW_BUILTINS,
    "stop_iteration": _STOP_ITERATION,
}
# Cheats that do pass tests which import the candidate into pytest's process, when the
# tests give them the chance (a test that calls nothing of the candidate's, an assertion
# they can read): the control run shows each one working, so a refusal elsewhere is real.
POTENT_IN_PROCESS = frozenset({
    "always_equal", "monkeypatch_pytest", "pytest_hook", "exit_zero_forged_junit",
    "frame_walk", "liar_list", "liar_number", "skip_from_call", "exit_in_call_forged_report",
    "report_at_exit", "read_tests", "read_tests_via_proc", "shadow_module",
    "shadow_builtins", "stop_iteration",
})


@dataclass(frozen=True)
class Cheat:
    name: str
    source: str


def cheat_module(name: str, entry_point: str) -> str:
    """The cheat `name` as a whole module whose function `entry_point` cheats."""
    return CHEATS[name].replace("ENTRY", entry_point)


def cheats(problem: Problem) -> list[Cheat]:
    """Every cheat as a candidate module for `problem`."""
    return [Cheat(name, problem.prompt + "    pass\n\n"
                  + cheat_module(name, problem.entry_point))
            for name in CHEATS]
