"""The test command's run as data (the request) and what its result says (the report
checked against the exit status, the files it changed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.repair.test_run import (
    PYTEST_ADDOPTS,
    REPORT_PATH,
    python_path,
    read_run,
    request_for,
)
from selfcorrect_action.sandbox.models import ArtifactRecord, ExecutionResult, StreamCapture
from selfcorrect_action.taxonomy import Category
from tests.fakes.junit_report import suite_xml

JUNIT = suite_xml([
    ("passed", '<testcase classname="tests.test_core" name="test_ok" file="tests/test_core.py" '
     'line="1" />'),
    ("failed", '<testcase classname="tests.test_core" name="test_bug" '
     'file="tests/test_core.py" line="4"><failure message="assert 5 == 4">tests/test_core.py:5: '
     'in test_bug\n    assert add(2, 2) == 4\nE   assert 5 == 4</failure></testcase>')])


def result_with(tmp_path: Path, *, exit_code: int | None = 1, junit: str | None = JUNIT,
                changed: tuple[str, ...] = (), **extra: object) -> ExecutionResult:
    artifacts = []
    if junit is not None:
        report = tmp_path / "junit.xml"
        report.write_text(junit)
        artifacts.append(ArtifactRecord(path=REPORT_PATH, size=len(junit), host_path=report))
    artifacts += [ArtifactRecord(path=name, size=1, host_path=tmp_path / "x") for name in changed]
    return ExecutionResult(exit_code=exit_code, artifacts=artifacts, **extra)  # type: ignore[arg-type]


def test_the_request_carries_the_repository_the_argv_and_our_report_without_network() -> None:
    files = {"src/pkg/core.py": b"x" * 3_000_000, "tests/test_core.py": b"def test(): pass\n"}
    contract = ExecutionContract(timeout_s=300, memory_mb=1024)

    request = request_for(files, ["python", "-m", "pytest", "-q"], contract, runtime="runsc")

    assert request.argv == ["python", "-m", "pytest", "-q"]
    assert {f.path: f.data for f in request.files} == files
    assert request.network == "none" and request.limits.memory_mb == 1024
    assert request.limits.work_mb == 3 + 64 and request.timeout_s == 300
    assert request.runtime == "runsc" and request.artifact_paths == [REPORT_PATH]
    assert request.env == {"PYTEST_ADDOPTS": PYTEST_ADDOPTS, "PYTHONPATH": "/work/src:/work"}
    assert "--junitxml=/work/.selfcorrect/repair-junit.xml" in PYTEST_ADDOPTS
    assert "-p no:cacheprovider" in PYTEST_ADDOPTS
    assert "-p _selfcorrect_collected" in PYTEST_ADDOPTS


def test_a_src_layout_puts_src_first_on_the_path() -> None:
    assert python_path(["pkg/core.py", "tests/test_core.py"]) == "/work"
    assert python_path(["src/pkg/core.py"]) == "/work/src:/work"
    assert python_path(["src/README.md"]) == "/work"


def test_a_report_that_agrees_with_the_exit_status_gives_the_outcomes(tmp_path: Path) -> None:
    run = read_run(result_with(tmp_path), placed={"tests/test_core.py"})
    assert run.reported and run.problem == "" and run.changed == []
    assert [(o.test_id, o.outcome) for o in run.outcomes] == [
        ("tests/test_core.py::test_ok", "passed"), ("tests/test_core.py::test_bug", "failed")]
    assert "assert 5 == 4" in run.outcomes[1].detail


def test_exit_zero_with_a_failure_in_the_report_is_tampering(tmp_path: Path) -> None:
    run = read_run(result_with(tmp_path, exit_code=0), placed=set())
    assert not run.reported and run.category is Category.CONTRACT
    assert "exit status 0 disagrees with its report (1 passed, 1 failed" in run.problem


def test_pytest_exit_statuses_that_are_no_verdict_are_problems(tmp_path: Path) -> None:
    for code, said in ((2, "interrupted"), (3, "internal error"), (4, "usage error"),
                       (5, "collected no tests")):
        run = read_run(result_with(tmp_path, exit_code=code), placed=set())
        assert said in run.problem and f"exit status {code}" in run.problem


FIXTURES = Path(__file__).parents[2] / "fixtures" / "junit"


@pytest.mark.parametrize("version", ["pytest8", "pytest9"])
@pytest.mark.parametrize(("case", "said"), [
    ("maxfail", "stopping after 1 failures"), ("exit_middle", "Exit: done"),
    ("xdist_exit", "test_a.py::test_b")])
def test_a_suite_that_stopped_early_cannot_be_judged(tmp_path: Path, case: str, said: str,
                                                     version: str) -> None:
    """A repository's own pytest (8 or 9), -x or a pytest.exit in its suite, xdist's merged
    report: tests that never ran cannot show that nothing broke (issue 34)."""
    junit = (FIXTURES / f"{case}.{version}.xml").read_text()
    code = 3 if case == "xdist_exit" else (1 if case == "maxfail" else 0)
    run = read_run(result_with(tmp_path, exit_code=code, junit=junit), placed=set())
    assert not run.reported and run.category is Category.CONTRACT
    if code != 3:
        assert "did not run every test it collected" in run.problem and said in run.problem
        assert "-x, --maxfail, pytest.exit" in run.problem


def test_a_report_without_our_plugin_s_record_cannot_be_judged(tmp_path: Path) -> None:
    junit = JUNIT.replace("selfcorrect.", "other.")
    run = read_run(result_with(tmp_path, junit=junit), placed=set())
    assert "no record of what pytest collected" in run.problem


def test_no_report_means_the_command_is_not_pytest(tmp_path: Path) -> None:
    run = read_run(result_with(tmp_path, exit_code=0, junit=None,
                               stdout=StreamCapture(text="all good\n")), placed=set())
    assert run.problem == ("the test command wrote no pytest report (exit status 0): all good; "
                           "test_command must run pytest")


def test_a_run_that_timed_out_is_a_resource_problem(tmp_path: Path) -> None:
    run = read_run(result_with(tmp_path, exit_code=None, timed_out=True, signal=9), set())
    assert run.category is Category.RESOURCE and run.problem.startswith(
        "the test command did not finish: timed out")


def test_an_unreadable_report_is_a_problem(tmp_path: Path) -> None:
    run = read_run(result_with(tmp_path, junit="<html>"), placed=set())
    assert "the test report is unreadable" in run.problem


def test_files_of_the_repository_the_run_changed_are_named(tmp_path: Path) -> None:
    run = read_run(result_with(tmp_path, changed=("tests/test_core.py", "new.txt")),
                   placed={"tests/test_core.py", "src/x.py"})
    assert run.changed == ["tests/test_core.py"]
