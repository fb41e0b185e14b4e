"""Frozen tests that need nothing of pytest's (evaluation/plain_tests.py) are judged without
pytest when they all pass, by pytest otherwise (sandbox/boundary/selfcorrect_boundary/
plain.py). In real containers, under both runtimes: every case below is judged with the
launcher's plain flag and without it, and the verdicts, categories and outcomes must be
equal; a pass must have come from the plain run, anything else from pytest's, with pytest's
messages. A candidate that fails its first run and passes a second one fails."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from selfcorrect_action.bench.executors import preloads
from selfcorrect_action.choices import Runtime
from selfcorrect_action.evaluation import spec_tests
from selfcorrect_action.evaluation.junit import (
    PYTEST_JUNIT_PATH,
    boundary_pytest_argv,
    pytest_argv,
)
from selfcorrect_action.evaluation.plain_tests import plain_runnable
from selfcorrect_action.evaluation.spec_tests import judge_test_run
from selfcorrect_action.sandbox.batch import BatchSandbox
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.docker_engine import DockerEngine
from selfcorrect_action.sandbox.models import (
    PLAIN_TESTS_FLAG,
    Boundary,
    ExecutionRequest,
    ExecutionResult,
    InputFile,
    Limits,
)

PLAIN_SAYS = "(plain runner: these tests use nothing of pytest's)"

TESTS = """
    import os
    import sys

    from solution import add

    CASES = [(1, 2, 3), (2, 2, 4)]


    def check(function):
        for a, b, expected in CASES:
            assert function(a, b) == expected


    def test_cases():
        check(add)


    def test_environment():
        print("to the captured output")
        try:
            sys.stdin.read()
        except OSError as exc:
            assert "reading from stdin" in str(exc)
        else:
            raise AssertionError("stdin was readable")
        assert os.environ["PYTEST_CURRENT_TEST"].endswith("::test_environment (call)")


    def test_negative():
        assert add(-1, -2) == -3
"""
# Bound by assignment, so the host's reading lets it through: only the imported module
# shows that pytest would treat it as a test with a fixture (and fail it for lack of one).
TESTS_WITH_AN_ARGUMENT = """
    from solution import add


    def _check(expected):
        assert add(1, 2) == expected


    test_check = _check


    def test_plain():
        assert add(1, 2) == 3
"""
CANDIDATES = {
    "right": "def add(a, b):\n    return a + b\n",
    "wrong": "def add(a, b):\n    return a - b\n",
    "crashes": "import os\n\ndef add(a, b):\n    os._exit(0)\n",
    "fails to import": "raise ImportError('no such thing')\n",
    # Passes a second run only: its first leaves a file behind in its own folder.
    "second run": textwrap.dedent("""
        import os

        MARK = os.path.join(os.environ["HOME"], "ran-before")

        def add(a, b):
            if os.path.exists(MARK):
                return a + b
            open(MARK, "w").close()
            return 0
    """),
}


@pytest.fixture
def box(docker_engine: DockerEngine, sandbox_image: str, runtime: Runtime
        ) -> Iterator[Sandbox]:
    with Sandbox(docker_engine, sandbox_image, pool_size=1, plain_tests=True) as sandbox:
        yield sandbox


def _boundary_request(candidate: str, tests: str, runtime: Runtime, *, plain: bool
                      ) -> ExecutionRequest:
    return ExecutionRequest(
        argv=boundary_pytest_argv(["test_solution.py"], plain=plain), runtime=runtime,
        timeout_s=60, warm_wait_s=60,
        files=[InputFile(path="solution.py", data=candidate.encode()),
               InputFile(path="test_solution.py", data=textwrap.dedent(tests).encode())],
        boundary=Boundary(candidate="solution.py", module="solution",
                          tests=["test_solution.py"]),
        artifact_paths=[PYTEST_JUNIT_PATH])


def _judged(result: ExecutionResult) -> tuple[bool, object, list[tuple[str, str, str]]]:
    verdict = judge_test_run(result, candidate="solution.py")
    return (verdict.passed, verdict.category,
            sorted((o.test_id, o.outcome, o.message) for o in verdict.outcomes))


def test_the_host_lets_through_only_tests_with_nothing_of_pytest_s() -> None:
    assert plain_runnable({"test_solution.py": textwrap.dedent(TESTS)}) is None
    assert plain_runnable({"test_solution.py": textwrap.dedent(TESTS_WITH_AN_ARGUMENT)}) is None


@pytest.mark.parametrize("candidate", ["right", "wrong", "crashes", "fails to import"])
def test_a_plain_run_judges_as_pytest_does(box: Sandbox, runtime: Runtime, tmp_path: Path,
                                           candidate: str) -> None:
    seen = {}
    for plain in (True, False):
        request = _boundary_request(CANDIDATES[candidate], TESTS, runtime, plain=plain)
        result = box.run(request, tmp_path / str(plain))
        seen[plain] = (_judged(result), result)
    assert seen[True][0] == seen[False][0]
    passed, _, outcomes = seen[True][0]
    plain_output = seen[True][1].stdout.text
    assert passed == (candidate == "right"), outcomes
    if passed:
        assert PLAIN_SAYS in plain_output and "passed" in seen[False][1].stdout.text
        assert len(outcomes) == 3
    else:
        # Judged by pytest: its report and its messages, from a fresh candidate process.
        assert PLAIN_SAYS not in plain_output and "short test summary" not in plain_output
        assert seen[True][1].stdout.text.replace(" in 0.", " in X.")[:200] == (
            seen[False][1].stdout.text.replace(" in 0.", " in X.")[:200])
    if candidate == "wrong":
        assert "assert -1 == 3" in plain_output, plain_output


def test_a_candidate_that_passes_only_when_run_again_fails(
        box: Sandbox, runtime: Runtime, tmp_path: Path) -> None:
    request = _boundary_request(CANDIDATES["second run"], TESTS, runtime, plain=True)
    verdict = judge_test_run(box.run(request, tmp_path / "plain"), candidate="solution.py")
    assert not verdict.passed
    first = [o for o in verdict.outcomes if o.outcome == "failed"]
    assert [o.test_id for o in first] == ["selfcorrect::first_run"], verdict.outcomes
    assert "test_solution.py::test_cases failed when the tests first ran" in first[0].message
    # pytest alone fails it too (its first run is its only one).
    alone = _boundary_request(CANDIDATES["second run"], TESTS, runtime, plain=False)
    assert not judge_test_run(box.run(alone, tmp_path / "pytest"),
                              candidate="solution.py").passed


def test_what_only_the_imported_module_shows_is_left_to_pytest(
        box: Sandbox, runtime: Runtime, tmp_path: Path) -> None:
    results = {plain: box.run(_boundary_request(CANDIDATES["right"], TESTS_WITH_AN_ARGUMENT,
                                                runtime, plain=plain), tmp_path / str(plain))
               for plain in (True, False)}
    assert _judged(results[True]) == _judged(results[False])
    passed, _, outcomes = _judged(results[True])
    assert not passed and ("test_solution.py::test_check", "error") in [o[:2] for o in outcomes]
    assert PLAIN_SAYS not in results[True].stdout.text
    assert "fixture 'expected' not found" in results[True].stdout.text


# A helper the tests import (an input file): it uses pytest, which the host's reading of the
# test file cannot see. Its skip must reach pytest, not fail the plain run (a red team found
# this failing an honest candidate).
HELPER = "import pytest\n\n\ndef not_here():\n    pytest.skip('not on this machine')\n"
TESTS_WITH_A_HELPER = """
    import helpers
    from solution import add


    def test_add():
        assert add(1, 2) == 3


    def test_elsewhere():
        helpers.not_here()
"""


@pytest.fixture
def pytest_box(docker_engine: DockerEngine, sandbox_image: str, runtime: Runtime
               ) -> Iterator[Sandbox]:
    """Its tests' interpreters import pytest while they wait (the latest test run was
    pytest's): a helper's `import pytest` then loads nothing new."""
    with Sandbox(docker_engine, sandbox_image, pool_size=1, plain_tests=False) as sandbox:
        yield sandbox


@pytest.mark.parametrize("case", ["helper skips", "helper skips, pytest preloaded",
                                  "standard module's name"])
def test_what_the_host_cannot_see_is_judged_by_pytest(
        box: Sandbox, pytest_box: Sandbox, runtime: Runtime, tmp_path: Path, case: str
        ) -> None:
    if case == "helper skips, pytest preloaded":
        box = pytest_box
        box.warm(Limits(), runtime, boundary=True)
        box.settle()
    name = "calendar.py" if case == "standard module's name" else "test_solution.py"
    tests = TESTS if case == "standard module's name" else TESTS_WITH_A_HELPER
    results = {}
    for plain in (True, False):
        request = ExecutionRequest(
            argv=boundary_pytest_argv([name], plain=plain), runtime=runtime, timeout_s=60,
            files=[InputFile(path="solution.py", data=CANDIDATES["right"].encode()),
                   InputFile(path="helpers.py", data=HELPER.encode()),
                   InputFile(path=name, data=textwrap.dedent(tests).encode())],
            boundary=Boundary(candidate="solution.py", module="solution", tests=[name]),
            artifact_paths=[PYTEST_JUNIT_PATH])
        results[plain] = box.run(request, tmp_path / str(plain))
        box.settle()  # the next container's tests' interpreter has done its imports
    assert _judged(results[True]) == _judged(results[False])
    assert PLAIN_SAYS not in results[True].stdout.text
    assert results[True].preloaded == (["pytest"] if box is pytest_box else [])
    passed, _, outcomes = _judged(results[True])
    if case.startswith("helper skips"):
        assert passed and ("test_solution.py::test_elsewhere", "skipped") in [
            o[:2] for o in outcomes], outcomes
    else:  # pytest imported calendar itself: "import file mismatch"
        assert not passed, outcomes


def _batch_request(candidate: str, tests: str, *, plain: bool) -> ExecutionRequest:
    argv = pytest_argv(["test_solution.py"])
    if plain:
        argv = [*argv[:4], PLAIN_TESTS_FLAG, *argv[4:]]
    return ExecutionRequest(
        argv=argv, timeout_s=30, artifact_paths=[PYTEST_JUNIT_PATH],
        files=[InputFile(path="solution.py", data=candidate.encode()),
               InputFile(path="test_solution.py", data=textwrap.dedent(tests).encode())])


ZYGOTES = ["pytest preloaded", "pytest when needed", "nothing preloaded"]


def _batch_box(docker_engine: DockerEngine, sandbox_image: str, zygote: str) -> BatchSandbox:
    return BatchSandbox(docker_engine, sandbox_image,
                        preload_pytest=None if zygote == "nothing preloaded" else preloads(),
                        pytest_when_needed=zygote == "pytest when needed")


@pytest.mark.parametrize("zygote", ZYGOTES)
def test_batch_items_are_judged_plainly_as_pytest_judges_them(
        docker_engine: DockerEngine, sandbox_image: str, tmp_path: Path, zygote: str) -> None:
    names = ["right", "wrong", "second run"]
    seen: dict[bool, list[ExecutionResult]] = {}
    with _batch_box(docker_engine, sandbox_image, zygote) as batch:
        for plain in (True, False):
            requests = [_batch_request(CANDIDATES[name], TESTS, plain=plain) for name in names]
            seen[plain] = batch.run_batch(requests, [tmp_path / f"{plain}{i}"
                                                     for i in range(len(names))])
    verdicts = {plain: [judge_test_run(r, candidate="solution.py") for r in results]
                for plain, results in seen.items()}
    assert [v.passed for v in verdicts[True]] == [v.passed for v in verdicts[False]] == [
        True, False, False]
    right, wrong, _ = seen[True]
    assert PLAIN_SAYS in right.stdout.text, right.stdout.text
    assert "assert -1 == 3" in wrong.stdout.text, wrong.stdout.text
    assert _outcomes(verdicts[True][1]) == _outcomes(verdicts[False][1])
    assert "selfcorrect::first_run" in [o.test_id for o in verdicts[True][2].outcomes]


def _outcomes(verdict: spec_tests.TestsVerdict) -> list[tuple[str, str, str]]:
    return sorted((o.test_id, o.outcome, o.message) for o in verdict.outcomes)


# Which process ran pytest: the zygote's fork shows the zygote's command line, a cold start
# its own (`batch_pytest.py` after a plain run that failed).
TESTS_SHOWING_THE_PROCESS = """
    from solution import add


    def test_add():
        with open("/proc/self/cmdline", "rb") as handle:
            print("process:", handle.read().replace(b"\\0", b" ").decode())
        assert add(1, 2) == 4
"""


@pytest.mark.parametrize(("zygote", "expected"), [
    ("pytest preloaded", ["--zygote", "--zygote", "--zygote"]),
    # The first item that needs pytest starts it cold; the zygote then loads it.
    ("pytest when needed", ["batch_pytest.py", "--zygote", "--zygote"]),
    ("nothing preloaded", ["batch_pytest.py", "batch_pytest.py", "batch_pytest.py"]),
])
def test_a_batch_loads_pytest_when_an_item_first_needs_it(
        docker_engine: DockerEngine, sandbox_image: str, tmp_path: Path, zygote: str,
        expected: list[str]) -> None:
    requests = [_batch_request(CANDIDATES["right"], TESTS, plain=True),
                *(_batch_request(CANDIDATES["right"], TESTS_SHOWING_THE_PROCESS, plain=True)
                  for _ in range(3))]
    with _batch_box(docker_engine, sandbox_image, zygote) as batch:
        results = batch.run_batch(requests, [tmp_path / str(i) for i in range(len(requests))])
    assert PLAIN_SAYS in results[0].stdout.text, results[0].stdout.text
    assert judge_test_run(results[0], candidate="solution.py").passed
    processes = []
    for result in results[1:]:
        verdict = judge_test_run(result, candidate="solution.py")
        assert not verdict.passed and "assert 3 == 4" in result.stdout.text, result.stdout.text
        line = next(line for line in result.stdout.text.splitlines()
                    if line.startswith("process:"))
        processes.append(next(mark for mark in ("--zygote", "batch_pytest.py") if mark in line))
    assert processes == expected
