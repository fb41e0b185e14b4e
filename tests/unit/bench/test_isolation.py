"""The candidate behind a process boundary (evaluation/isolated_candidate.py), with pytest
run for real here, as the sandbox runs it: honest verdicts, and no cheat passes. The
control (tests that import the candidate into pytest) shows which cheats the boundary stops."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from selfcorrect_action.bench.cheats import cheats
from selfcorrect_action.bench.problems import Problem
from selfcorrect_action.bench.scoring import frozen_tests, harness_file
from selfcorrect_action.evaluation import isolated_candidate as iso
from selfcorrect_action.evaluation import spec_tests
from selfcorrect_action.evaluation.junit import PYTEST_JUNIT_PATH, pytest_argv
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionResult, StreamCapture

PROBLEM = Problem(
    task_id="HumanEval/900",
    prompt='from typing import List\n\n\ndef add(a: int, b: int) -> int:\n    """Add."""\n',
    canonical_solution="    return a + b\n",
    test="\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate(2, 3) == 5\n"
         "    assert candidate(-1, 1) == 0\n",
    entry_point="add",
)


def judged(work: Path, module_source: str, *, isolated: bool = True,
           problem: Problem = PROBLEM) -> spec_tests.TestsVerdict:
    (work / problem.file_name).write_text(module_source)
    (work / iso.SANDBOX_NAME).write_bytes(harness_file().data)
    for name, text in frozen_tests(problem, isolated=isolated).items():
        (work / name).write_text(text)
    argv = [sys.executable, *pytest_argv([problem.test_file_name], work_dir=str(work))[1:]]
    env = {"PATH": os.defpath, "HOME": str(work), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    junit = work / PYTEST_JUNIT_PATH
    artifacts = [ArtifactRecord(path=PYTEST_JUNIT_PATH, size=junit.stat().st_size,
                                host_path=junit)] if junit.exists() else []
    result = ExecutionResult(exit_code=done.returncode, artifacts=artifacts,
                             stdout=StreamCapture(text=done.stdout),
                             stderr=StreamCapture(text=done.stderr))
    return spec_tests.judge_test_run(result, candidate=problem.file_name)


def test_a_correct_candidate_passes(tmp_path: Path) -> None:
    assert judged(tmp_path, PROBLEM.canonical_source).passed


def test_a_wrong_answer_fails_with_expected_and_actual(tmp_path: Path) -> None:
    verdict = judged(tmp_path, PROBLEM.module_source("    return a - b\n"))
    assert not verdict.passed and verdict.category is not None
    assert verdict.category.value == "contract"
    assert "assert -1 == 5" in verdict.evidence


def test_an_exception_in_the_candidate_reads_as_raised_there(tmp_path: Path) -> None:
    verdict = judged(tmp_path, PROBLEM.module_source("    return a + b.missing\n"))
    assert verdict.category is not None and verdict.category.value == "runtime"
    failing = next(o for o in verdict.outcomes if o.outcome == "failed")
    assert failing.message.startswith("AttributeError")
    assert "humaneval_900.py:6: in add" in failing.detail


def test_an_import_error_keeps_its_category(tmp_path: Path) -> None:
    verdict = judged(tmp_path, "import seaborn_not_installed\n" + PROBLEM.canonical_source)
    assert verdict.category is not None and verdict.category.value == "environment"


@pytest.mark.parametrize("cheat", cheats(PROBLEM), ids=lambda c: c.name)
def test_no_cheat_passes_the_isolated_tests(tmp_path: Path, cheat: object) -> None:
    assert not judged(tmp_path, cheat.source).passed  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["always_equal", "monkeypatch_pytest", "pytest_hook"])
def test_the_control_shows_what_tests_importing_the_candidate_let_through(
        tmp_path: Path, name: str) -> None:
    """Why the boundary is there: in pytest's own process these cheats pass."""
    cheat = next(c for c in cheats(PROBLEM) if c.name == name)
    assert judged(tmp_path, cheat.source, isolated=False).passed


def test_the_tests_process_is_hardened_before_the_candidate_starts(tmp_path: Path) -> None:
    probe = Problem(task_id="HumanEval/901", prompt=PROBLEM.prompt,
                    canonical_solution=PROBLEM.canonical_solution, entry_point="add",
                    test=textwrap.dedent("""
                        import ctypes, os, sys

                        def check(candidate):
                            assert candidate(1, 1) == 2
                            assert ctypes.CDLL(None).prctl(3, 0, 0, 0, 0) == 0  # not dumpable
                            here = os.path.realpath(os.getcwd())
                            assert not any(os.path.realpath(p or ".") == here for p in sys.path)
                            assert "humaneval_901" not in sys.modules
                    """))
    assert judged(tmp_path, probe.canonical_source, problem=probe).passed


@pytest.mark.parametrize("value", [
    None, True, 0, -3, 2**200, 1.5, float("inf"), -0.0, 1 + 2j, "é\udc80", b"\x00\xff",
    [1, [2, (3,)]], (1, "a"), {1: [2], "k": {3}}, frozenset({1, 2}), set(), {},
])
def test_plain_values_cross_unchanged(value: object) -> None:
    crossed = iso.decode(iso.encode(value))
    assert type(crossed) is type(value) and repr(crossed) == repr(value)


def test_objects_that_are_not_plain_data_do_not_cross() -> None:
    class AlwaysEqual:
        def __eq__(self, other: object) -> bool:
            return True
    with pytest.raises(iso.Unsendable, match="not plain data"):
        iso.encode([AlwaysEqual()])

    class Liar(int):
        def __eq__(self, other: object) -> bool:
            return True
    assert type(iso.decode(iso.encode(Liar(3)))) is int  # its value crosses, not its __eq__


@pytest.mark.parametrize("junk", [1.5, {"z": 1}, {"f": 1}, {"t": 3}, {"a": 1, "b": 2},
                                  {"d": [[1]]}, {"b": "!!"}])
def test_the_tests_side_refuses_anything_but_tagged_plain_data(junk: object) -> None:
    with pytest.raises(iso.CandidateError):
        iso.decode(junk)


def test_exceptions_come_back_as_their_builtin_kind() -> None:
    process = iso.CandidateProcess("/nowhere/candidate.py")
    value_error = process._exception({"name": "ValueError", "base": "ValueError",
                                      "args": ["no pair"]})
    assert type(value_error) is ValueError and str(value_error) == "no pair"
    own = process._exception({"name": "MissingKey", "base": "KeyError", "args": ["k"]})
    assert isinstance(own, KeyError) and type(own).__name__ == "MissingKey"
    exiting = process._exception({"name": "SystemExit", "base": "SystemExit", "args": [0]})
    assert isinstance(exiting, iso.CandidateError)
