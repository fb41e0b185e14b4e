"""Frozen tests that end pytest's session early never let a wrong answer pass (issue 34).

`pytest.exit("done", returncode=0)` in a test, its fixture's setup or teardown, or at the
module's import ends the session with exit status 0 and a report without the tests after
it. Through `selfcorrect run` on a `kind: function` spec, the real loop and sandbox under
runc and runsc, each isolation: the wrong answer `a - b` fails, and the evidence names the
tests that did not run. The same tests without the early exit pass an honest answer, so the
checks are not blind.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from selfcorrect_action.choices import Runtime
from selfcorrect_action.cli import main
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.report.run_json import load_run_json
from tests.fakes.replays import fenced, write_replay

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("sandbox_image")]

PROMPT = "Write add(a, b): the sum of two numbers."
WRONG = "def add(a, b):\n    return a - b\n"
HONEST = "def add(a, b):\n    return a + b\n"
CHECK = "def test_1():\n    assert add(2, 3) == 5\n"

EARLY_EXITS = {
    # The reproduction: pytest writes a nameless <testcase> and tests="0".
    "in_the_first_test": '''
        import pytest
        from add import add

        def test_0():
            pytest.exit("done", returncode=0)

''',
    # A passing test first: the report holds one named, passing test and agrees with itself.
    "after_a_passing_test": '''
        import pytest
        from add import add

        def test_a():
            assert True

        def test_b():
            pytest.exit("done", returncode=0)

''',
    "in_a_fixture_setup": '''
        import pytest
        from add import add

        @pytest.fixture
        def done():
            pytest.exit("done", returncode=0)

        def test_a():
            assert True

        def test_b(done):
            pass

''',
    "in_a_fixture_teardown": '''
        import pytest
        from add import add

        @pytest.fixture
        def done():
            yield
            pytest.exit("done", returncode=0)

        def test_a(done):
            assert True

''',
}


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tests: str, code: str,
         runtime: Runtime, isolation: str) -> tuple[int, RunState]:
    work = tmp_path / "repo"
    work.mkdir()
    (work / "test_add.py").write_text(textwrap.dedent(tests).lstrip() + "\n" + CHECK)
    spec = work / "add.yml"
    spec.write_text(json.dumps({
        "prompt": PROMPT, "kind": "function", "output": "add.py", "tests": ["test_add.py"],
        "judge": False, "isolation": isolation,
        "budget": {"patch_attempts": 0, "rethink_attempts": 0},
        "contract": {"artifacts": [], "stdout_contains": [], "timeout_s": 30,
                     "memory_mb": 512, "success_criteria": ["the tests pass"]},
    }))
    replay = write_replay(tmp_path / "replay.jsonl", PROMPT, [("generate", fenced(code))])
    monkeypatch.chdir(work)
    out = tmp_path / "out"
    exit_code = main(["run", str(spec), "--replay", str(replay), "--out", str(out),
                      "--runtime", runtime])
    return exit_code, load_run_json((out / "run.json").read_text())


@pytest.mark.parametrize("isolation", ["process", "in-process"])
@pytest.mark.parametrize("where", list(EARLY_EXITS))
def test_an_early_exit_of_the_tests_never_passes_a_wrong_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime, where: str,
        isolation: str) -> None:
    exit_code, state = _run(tmp_path, monkeypatch, EARLY_EXITS[where], WRONG, runtime,
                            isolation)

    verdict = state.attempts[-1].verdict
    assert (exit_code, state.status.value) == (1, "exhausted"), state.stop_reason
    assert verdict is not None and not verdict.passed
    assert "did not all run" in verdict.evidence, verdict.evidence
    assert "test_add.py::test_1" in verdict.evidence and "Exit: done" in verdict.evidence


@pytest.mark.parametrize("isolation", ["process", "in-process"])
def test_the_same_tests_without_the_exit_pass_an_honest_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime,
        isolation: str) -> None:
    tests = EARLY_EXITS["in_a_fixture_teardown"].replace(
        'pytest.exit("done", returncode=0)', "pass")

    exit_code, state = _run(tmp_path, monkeypatch, tests, HONEST, runtime, isolation)

    assert (exit_code, state.status.value) == (0, "passed"), state.stop_reason


def test_a_candidate_that_exits_pytest_in_its_process_does_not_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runtime: Runtime) -> None:
    """In-process, the candidate's import runs inside pytest: its own pytest.exit is the
    forgery the boundary refuses under the default isolation."""
    cheat = 'import pytest\npytest.exit("done", returncode=0)\n' + WRONG
    exit_code, state = _run(tmp_path, monkeypatch, "from add import add\n", cheat,
                            runtime, "in-process")

    assert exit_code == 1 and state.status.value != "passed", state.stop_reason
