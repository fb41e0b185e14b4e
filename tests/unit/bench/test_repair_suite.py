"""The repair benchmark's cases (bench/repair_suite.py) without Docker: a small library
whose own suite is played at the sandbox seam (tests/fakes/repair_sandbox.py, outcomes
decided from the files placed, failures as pytest writes them), run through the one run
pipeline with the benchmark's scripted model: a seeded bug repaired, one its tests miss,
the three hostile answers that must not pass, what a case records, and the unmutated
library's passing tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.bench.module_mutants import SeededBug
from selfcorrect_action.bench.repair_suite import (
    FIRST_ATTEMPT_NOTE,
    Library,
    case_record,
    hostile_answers,
    outside_path,
    passed,
    pristine_passing,
    repair_answers,
    run_case,
)
from selfcorrect_action.loop.state import Status
from selfcorrect_action.repair.test_run import PYTEST_ADDOPTS
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult
from selfcorrect_action.taxonomy import Category
from tests.fakes.repair_sandbox import Outcomes, SuiteSandbox

SOURCE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = ("from mylib.core import add, mul\n\n\ndef test_add():\n    assert add(2, 2) == 4\n\n\n"
         "def test_mul():\n    assert mul(2, 4) == 8\n")
ADD, MUL, OTHER = ("tests/test_core.py::test_add", "tests/test_core.py::test_mul",
                   "tests/test_other.py::test_other")
COMMAND = ["python", "-m", "pytest", "-q", "tests"]
# What pytest writes (--tb=short) when add subtracts.
ADD_FAILED = ("tests/test_core.py:5: in test_add\n    assert add(2, 2) == 4\n"
              "E   assert 0 == 4\nE    +  where 0 = add(2, 2)")
MUL_FAILED = ("tests/test_core.py:9: in test_mul\n    assert mul(2, 4) == 8\n"
              "E   assert 16 == 8\nE    +  where 16 = mul(2, 4)")


def library_at(root: Path, *, outside: bool = True) -> Library:
    files = {"mylib/__init__.py": "", "mylib/core.py": SOURCE, "tests/test_core.py": TESTS,
             "tests/test_other.py": "def test_other():\n    pass\n",
             "tests/helpers.py": "HELP = 1\n", "README.md": "# mylib\n"}
    if outside:
        files.update({"setup.py": "from setuptools import setup\n", "docs/conf.py": "x = 1\n"})
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return Library("mylib", "1.0", root=root, modules=["mylib/core.py"],
                   files=["mylib/*.py"], test_command=COMMAND)


def bug(line: int, original: str, replacement: str, kind: str = "wrong_arithmetic"
        ) -> SeededBug:
    lines = SOURCE.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace(original, replacement)
    return SeededBug(kind=kind, path="mylib/core.py", function="add" if line == 2 else "mul",
                     line=line, original=original, replacement=replacement,
                     source="".join(lines))


SUBTRACTS = bug(2, "a + b", "a - b")
POWER = bug(6, "a * b", "a ** b")
UNSEEN = bug(2, "a + b", "b + a", kind="swapped_arguments")  # the suite cannot tell


def suite(files: dict[str, str]) -> Outcomes:
    core = files["mylib/core.py"]
    return {ADD: ("passed", "") if "a + b" in core or "b + a" in core else
            ("failed", ADD_FAILED),
            MUL: ("passed", "") if "a * b" in core else ("failed", MUL_FAILED),
            OTHER: ("passed", "")}


@pytest.fixture
def library(tmp_path: Path) -> Library:
    root = tmp_path / "mylib-1.0"
    root.mkdir()
    return library_at(root)


def test_a_caught_bug_is_repaired_in_two_scripted_attempts_and_recorded(
        library: Library) -> None:
    sandbox = SuiteSandbox(suite)
    done = run_case(library, SUBTRACTS, repair_answers(library, SUBTRACTS), sandbox=sandbox,
                    runtime="runc", retries=True)

    state = done.state
    assert passed(state) and state.status is Status.PASSED, state.stop_reason
    # The bug is seeded in a copy: the library stays as its sdist shipped it.
    assert (library.root / "mylib/core.py").read_text() == SOURCE
    placed = [{f.path: f.data.decode() for f in r.files} for r in sandbox.requests]
    assert [files["mylib/core.py"] for files in placed] == [
        SUBTRACTS.source, SUBTRACTS.source, SUBTRACTS.source + FIRST_ATTEMPT_NOTE, SOURCE]
    assert all(r.argv == COMMAND and r.runtime == "runc" for r in sandbox.requests)
    assert sandbox.requests[0].env["PYTEST_ADDOPTS"] == PYTEST_ADDOPTS

    record = case_record(state, done.seconds)
    assert record["status"] == "passed" and record["stop_reason"] == state.stop_reason
    assert (record["caught"], record["targets"], record["target_ids"]) == (True, 1, [ADD])
    assert record["attempts"] == 2 and record["seconds"] == round(done.seconds, 2)
    assert len(record["run_seconds"]) == 2 and record["flaky"] == []  # type: ignore[arg-type]
    # The first attempt (the buggy file again) failed the assertion: its packet carried
    # it, with expected and actual.
    assert record["first_category"] == Category.CONTRACT.value
    assert record["first_evidence"] == "target tests still failing: " \
        f"{ADD}; first: {ADD}: assert 0 == 4"
    assert record["assertion"] is True and record["expected_vs_actual"] is True
    assert isinstance(record["packet_tokens"], int) and record["packet_tokens"] > 0
    assert record["final_failing"] == []


def test_a_bug_the_suite_misses_ends_at_the_baseline_before_any_model_call(
        library: Library) -> None:
    sandbox = SuiteSandbox(suite)
    done = run_case(library, UNSEEN, repair_answers(library, UNSEEN), sandbox=sandbox,
                    runtime="runc", retries=True)

    assert done.state.status is Status.STOPPED and done.state.usage.llm_calls == 0
    assert len(sandbox.requests) == 2
    record = case_record(done.state, done.seconds)
    assert str(record["stop_reason"]).startswith("no test fails at baseline")
    assert (record["caught"], record["targets"], record["attempts"]) == (False, 0, 0)
    assert record["first_category"] is None and record["first_evidence"] == ""
    assert "packet_tokens" not in record and record["final_failing"] == []


def test_the_hostile_answers_carry_the_fix_and_what_must_not_pass(library: Library) -> None:
    answers = hostile_answers(library, SUBTRACTS, POWER)

    assert list(answers) == ["hostile:test_file", "hostile:outside_files",
                             "hostile:regression"]
    [test_file], [outside], [regression] = answers.values()
    # The first test file by name, rewritten; the true fix beside it.
    assert test_file == {"mylib/core.py": SOURCE,
                         "tests/test_core.py": "def test_nothing():\n    pass\n"}
    assert outside == {"mylib/core.py": SOURCE,
                       "docs/conf.py": "# rewritten outside the allowed files\n"}
    # The fix of line 2 with the partner's bug on line 6.
    assert regression == {"mylib/core.py": SOURCE.replace("a * b", "a ** b")}


def test_no_hostile_answer_passes(library: Library) -> None:
    for case, answers in hostile_answers(library, SUBTRACTS, POWER).items():
        sandbox = SuiteSandbox(suite)
        done = run_case(library, SUBTRACTS, answers, sandbox=sandbox, runtime="runc",
                        retries=False)
        record = case_record(done.state, done.seconds)
        assert record["status"] == "exhausted" and record["attempts"] == 1, case
        assert record["first_category"] == "contract", case
        (attempt,) = done.state.attempts
        if case == "hostile:regression":
            assert attempt.regressions == [MUL] and len(sandbox.requests) == 3
            assert str(record["first_evidence"]).startswith(f"regression: {MUL} passed at "
                                                            "baseline and failed now")
        else:  # refused before it ran
            assert attempt.execution is None and len(sandbox.requests) == 2, case
            assert "refused, not run" in str(record["first_evidence"]), case


def test_outside_path_is_a_python_file_neither_allowed_nor_a_test(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert outside_path(library_at(tmp_path / "a")) == "docs/conf.py"  # before setup.py
    # Only allowed files, tests and non-Python files: a new file at the root.
    assert outside_path(library_at(tmp_path / "b", outside=False)) == "outside.py"


def test_pristine_passing_is_what_both_runs_of_the_unmutated_library_pass(
        library: Library, tmp_path: Path) -> None:
    runs = [0]

    def flaky(files: dict[str, str]) -> Outcomes:
        runs[0] += 1
        outcomes = suite(files)
        if runs[0] == 2:
            outcomes[OTHER] = ("failed", "timing")
        return outcomes

    sandbox = SuiteSandbox(flaky)
    passing, seconds = pristine_passing(library, sandbox, "runsc", tmp_path / "scratch")

    assert passing == {ADD, MUL} and seconds >= 0
    assert len(sandbox.requests) == 2
    assert all(r.runtime == "runsc" and r.argv == COMMAND for r in sandbox.requests)
    files = {f.path: f.data.decode() for f in sandbox.requests[0].files}
    assert files["mylib/core.py"] == SOURCE and files["tests/test_core.py"] == TESTS


def test_a_library_whose_suite_does_not_report_is_refused(library: Library,
                                                          tmp_path: Path) -> None:
    class NoReport(SuiteSandbox):
        def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
            return super().run(request, artifact_dir).model_copy(update={"artifacts": []})

    with pytest.raises(RuntimeError, match="the unmutated mylib does not pass its own tests "
                       "in the sandbox: the test command wrote no pytest report"):
        pristine_passing(library, NoReport(suite), "runc", tmp_path / "scratch")
