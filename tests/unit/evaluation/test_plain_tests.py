"""Which frozen tests may be judged without pytest (evaluation/plain_tests.py): only those
where nothing would make pytest do more than import the file and call its test functions.
Each refusal here names something pytest would run its own way."""

from __future__ import annotations

import textwrap

import pytest

from selfcorrect_action.evaluation.junit import boundary_pytest_argv
from selfcorrect_action.evaluation.plain_tests import plain_runnable
from selfcorrect_action.sandbox.models import PLAIN_TESTS_FLAG

PLAIN = """
    import math
    from collections import Counter as C

    from solution import add, mean

    CASES = [(1, 2, 3)]


    def helper(a, b):
        return add(a, b)


    class Point:
        x = 1


    def test_add():
        for a, b, expected in CASES:
            assert helper(a, b) == expected


    def test_mean():
        def inner(values):
            yield from values
        assert math.isclose(mean(list(inner([1, 2]))), 1.5)
        assert C("aa")["a"] == 2
"""


def _tests(body: str, name: str = "test_solution.py") -> dict[str, str]:
    return {name: textwrap.dedent(body)}


def test_functions_with_plain_asserts_qualify() -> None:
    assert plain_runnable(_tests(PLAIN)) is None
    assert plain_runnable({**_tests(PLAIN), **_tests(PLAIN, "test_more.py")}) is None


@pytest.mark.parametrize(("body", "reason"), [
    ("import pytest\ndef test_a():\n    pass\n", "imports pytest"),
    ("from pytest import raises\ndef test_a():\n    pass\n", "imports from pytest"),
    ("import _pytest.python\ndef test_a():\n    pass\n", "imports _pytest.python"),
    ("import unittest\ndef test_a():\n    pass\n", "imports unittest"),
    ("from unittest import mock\ndef test_a():\n    pass\n", "imports from unittest"),
    ("import logging\ndef test_a():\n    pass\n", "imports logging"),
    ("def test_a():\n    import doctest\n", "imports doctest"),
    ("from hypothesis import given\ndef test_a():\n    pass\n", "imports from hypothesis"),
    ("from solution import *\ndef test_a():\n    pass\n", "star import"),
    ("def test_a(tmp_path):\n    pass\n", "takes arguments"),
    ("def test_a(*args):\n    pass\n", "takes arguments"),
    ("def test_a(x=1):\n    pass\n", "takes arguments"),
    ("def test_a(*, x):\n    pass\n", "takes arguments"),
    ("import functools\n@functools.lru_cache\ndef test_a():\n    pass\n", "is decorated"),
    ("def test_a():\n    yield 1\n", "is a generator"),
    ("async def test_a():\n    pass\n", "is a coroutine"),
    ("class TestThing:\n    def test_a(self):\n        pass\n", "TestThing"),
    ("Test = object\ndef test_a():\n    pass\n", "defines Test"),
    ("def setup_module():\n    pass\ndef test_a():\n    pass\n", "defines setup_module"),
    ("def setup():\n    pass\ndef test_a():\n    pass\n", "defines setup,"),
    ("def teardown_function(f):\n    pass\ndef test_a():\n    pass\n", "teardown_function"),
    ("pytestmark = []\ndef test_a():\n    pass\n", "defines pytestmark"),
    ("pytest_plugins = ['x']\ndef test_a():\n    pass\n", "defines pytest_plugins"),
    ("def pytest_generate_tests(m):\n    pass\ndef test_a():\n    pass\n",
     "defines pytest_generate_tests"),
    ("__test__ = True\ndef test_a():\n    pass\n", "defines __test__"),
    ("def __getattr__(name):\n    pass\ndef test_a():\n    pass\n", "defines __getattr__"),
    ("globals()['test_b'] = lambda: None\ndef test_a():\n    pass\n", "calls globals()"),
    ("exec('def test_b(): pass')\ndef test_a():\n    pass\n", "calls exec()"),
    ("def helper():\n    pass\n", "defines no test function"),
    ("def test_a(:\n", "does not parse"),
    ("@dataclass\nclass Point:\n    x: int\ndef test_a():\n    pass\n", "is decorated"),
])
def test_anything_pytest_runs_its_own_way_is_refused(body: str, reason: str) -> None:
    problem = plain_runnable(_tests(body))
    assert problem is not None and problem.startswith("test_solution.py: "), problem
    assert reason in problem, problem


@pytest.mark.parametrize(("name", "reason"), [
    ("tests/test_solution.py", "not a top-level test module"),
    ("test-solution.py", "not a top-level test module"),
    ("test_solution.txt", "not a top-level test module"),
    ("__init__.py", "package"),
    ("calendar.py", "standard module calendar"),
    ("datetime.py", "standard module datetime"),
])
def test_only_top_level_modules_qualify(name: str, reason: str) -> None:
    problem = plain_runnable({name: "def test_a():\n    pass\n"})
    assert problem is not None and reason in problem, problem


def test_no_tests_at_all_do_not_qualify() -> None:
    assert plain_runnable({}) == "there are no test files"


def test_the_launcher_s_flag_comes_first_and_only_when_asked() -> None:
    argv = boundary_pytest_argv(["test_solution.py"], plain=True)
    assert argv[4:6] == ["/opt/selfcorrect/boundary/run_tests.py", PLAIN_TESTS_FLAG]
    assert argv[:4] + argv[5:] + [] == [*argv[:4], *argv[5:]]
    assert PLAIN_TESTS_FLAG not in boundary_pytest_argv(["test_solution.py"])
    assert boundary_pytest_argv(["t.py"], plain=True)[6:] == boundary_pytest_argv(["t.py"])[5:]
