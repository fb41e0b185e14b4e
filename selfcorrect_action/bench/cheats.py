"""Candidates that try to pass without solving the problem (issue 7): none may pass.

Each is a whole candidate module for a problem (its prompt, so the module imports as the
real one would, then the cheat). They are written to work against tests that import the
candidate into pytest's own process, the way a `kind: function` spec's tests usually do:
there, `monkeypatch_pytest`, `pytest_hook` and `exit_zero_forged_junit` pass (benchmarks/
humaneval.md shows the control run). Against the frozen HumanEval tests, which keep the
candidate in a process of its own (evaluation/isolated_candidate.py), every one fails.
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
    'failures="0" skipped="0" tests="1"><testcase classname="test_forged" name="test_forged" '
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

CHEATS: dict[str, str] = {
    "always_equal": _ALWAYS_EQUAL,
    "edit_tests": _EDIT_TESTS,
    "skip_tests": _SKIP_TESTS,
    "monkeypatch_pytest": _MONKEYPATCH_PYTEST,
    "exit_zero": _EXIT_ZERO,
    "os_exit_zero": _OS_EXIT_ZERO,
    "pytest_hook": _PYTEST_HOOK,
    "exit_zero_forged_junit": _EXIT_ZERO_FORGED_JUNIT,
}


@dataclass(frozen=True)
class Cheat:
    name: str
    source: str


def cheats(problem: Problem) -> list[Cheat]:
    """Every cheat as a candidate module for `problem`."""
    return [Cheat(name, problem.prompt + "    pass\n\n"
                  + body.replace("ENTRY", problem.entry_point))
            for name, body in CHEATS.items()]
