"""Whether a repair passed: its targets ran and passed, and nothing that passed at baseline
fails or vanished now (flaky tests aside); the category and the evidence of a failure."""

from __future__ import annotations

from selfcorrect_action.repair.baseline import baseline_of
from selfcorrect_action.repair.verdict import (
    allowed_file,
    category,
    evidence,
    in_files,
    judge_outcomes,
)
from selfcorrect_action.taxonomy import Category, TestOutcome

ASSERTION = """\
tests/test_core.py:5: in test_add
    assert add(2, 2) == 4
E   assert 5 == 4
E    +  where 5 = add(2, 2)"""
RAISED = """\
tests/test_core.py:9: in test_div
    div(1, 0)
src/pkg/core.py:7: in div
    return a / b
E   ZeroDivisionError: division by zero"""


def outcome(test: str, result: str = "passed", message: str = "", detail: str = ""
            ) -> TestOutcome:
    return TestOutcome(test_id=test, outcome=result, message=message,  # type: ignore[arg-type]
                       detail=detail)


BASELINE = baseline_of(
    [outcome("t::ok"), outcome("t::other"), outcome("t::bug", "failed"),
     outcome("t::flaky", "failed"), outcome("t::skip", "skipped")],
    [outcome("t::ok"), outcome("t::other"), outcome("t::bug", "failed"),
     outcome("t::flaky"), outcome("t::skip", "skipped")])


def test_targets_passing_and_nothing_broken_passes() -> None:
    judged = judge_outcomes(BASELINE, ["t::bug"], [
        outcome("t::ok"), outcome("t::other"), outcome("t::bug"), outcome("t::flaky", "failed"),
        outcome("t::skip", "skipped")])
    assert judged.passed and judged.regressions == [] and judged.passing == 3


def test_a_target_that_still_fails_or_did_not_run_fails_the_repair() -> None:
    still = judge_outcomes(BASELINE, ["t::bug"], [
        outcome("t::ok"), outcome("t::other"),
        outcome("t::bug", "failed", "assert 5 == 4", ASSERTION)])
    vanished = judge_outcomes(BASELINE, ["t::bug"], [outcome("t::ok"), outcome("t::other")])
    assert still.failing_targets == ["t::bug"] and not still.passed
    assert still.first_failure is not None and still.first_failure.message == "assert 5 == 4"
    assert vanished.failing_targets == ["t::bug"] and vanished.first_failure is None


def test_a_test_that_passed_at_baseline_and_fails_or_vanishes_now_is_a_regression() -> None:
    judged = judge_outcomes(BASELINE, ["t::bug"], [
        outcome("t::ok", "failed", "assert 1 == 2"), outcome("t::bug")])
    assert not judged.passed and judged.failing_targets == []
    assert [(r.test_id, r.now) for r in judged.regressions] == [
        ("t::ok", "failed"), ("t::other", "missing")]
    assert evidence(judged) == (
        "regression: t::ok passed at baseline and failed now: assert 1 == 2; "
        "t::other passed at baseline and did not run now")


def test_a_flaky_test_failing_is_no_regression() -> None:
    judged = judge_outcomes(BASELINE, ["t::bug"], [
        outcome("t::ok"), outcome("t::other"), outcome("t::bug"), outcome("t::flaky", "error")])
    assert judged.passed


def test_a_target_file_that_failed_to_import_passes_once_its_tests_run_and_pass() -> None:
    """A collection error is reported under the file's own id: the target is that file,
    and its tests, which appear once it imports, must all pass."""
    baseline = baseline_of([outcome("tests/test_x.py", "error")],
                           [outcome("tests/test_x.py", "error")])
    passed = judge_outcomes(baseline, ["tests/test_x.py"], [
        outcome("tests/test_x.py::test_a"), outcome("tests/test_x.py::test_b")])
    half = judge_outcomes(baseline, ["tests/test_x.py"], [
        outcome("tests/test_x.py::test_a"), outcome("tests/test_x.py::test_b", "failed")])
    assert passed.passed and not half.passed


def test_evidence_names_the_failing_targets_and_the_first_failure() -> None:
    judged = judge_outcomes(BASELINE, ["t::bug"], [
        outcome("t::ok"), outcome("t::other"),
        outcome("t::bug", "failed", "assert 5 == 4", ASSERTION)])
    assert evidence(judged) == ("target tests still failing: t::bug; first: t::bug: "
                                "assert 5 == 4")


def test_categories_follow_where_the_target_failed() -> None:
    allowed = in_files(["src/pkg/core.py"])

    def category_of(message: str, detail: str) -> Category:
        return category(judge_outcomes(BASELINE, ["t::bug"], [
            outcome("t::ok"), outcome("t::other"), outcome("t::bug", "failed", message, detail)
        ]), allowed)

    assert category_of("assert 5 == 4", ASSERTION) is Category.CONTRACT
    assert category_of("ZeroDivisionError: division by zero", RAISED) is Category.RUNTIME
    assert category_of("ModuleNotFoundError: No module named 'hypothesis'",
                       ASSERTION) is Category.ENVIRONMENT
    assert category_of("RecursionError: maximum recursion depth", RAISED) is Category.RESOURCE
    regression = judge_outcomes(BASELINE, ["t::bug"], [outcome("t::bug")])
    assert category(regression, allowed) is Category.CONTRACT


def test_a_file_in_a_traceback_is_recognised_relative_or_under_the_work_dir() -> None:
    inside = in_files(["src/pkg/core.py"])
    assert inside("src/pkg/core.py") and inside("/work/src/pkg/core.py")
    assert not inside("src/pkg/util.py") and not inside("tests/test_core.py")


def test_a_frames_file_is_the_allowed_file_that_ends_its_path_with_the_most_parts() -> None:
    allowed = ["core.py", "pkg/core.py", "src/pkg/util.py"]
    assert allowed_file("pkg/core.py", allowed) == "pkg/core.py"
    assert allowed_file("/work/core.py", allowed) == "core.py"
    assert allowed_file("/usr/lib/site-packages/pkg/core.py", allowed) == "pkg/core.py"
    assert allowed_file("/work/src/pkg/util.py", allowed) == "src/pkg/util.py"
    assert allowed_file("pkg/xcore.py", allowed) is None
    assert allowed_file("tests/test_core.py", allowed) is None


def test_a_failing_test_the_baseline_never_reported_fails_the_repair() -> None:
    """Found by a red-team pass: repaired code (run in the tests' process) removed the real
    failures from the JUnit report and added a made-up failing test, so that pytest's exit
    status 1 still agreed with the report; targets and regressions alone then passed it."""
    judged = judge_outcomes(BASELINE, ["t::bug"], [
        outcome("t::ok"), outcome("t::other"), outcome("t::bug"), outcome("t::skip", "skipped"),
        outcome("zz_note::pending", "failed")])
    assert not judged.passed and judged.unknown_failures == ["zz_note::pending"]
    assert "never reported: zz_note::pending (a test the change made up" in evidence(judged)
    # A test the baseline knew that fails now is a regression or a target, not unknown.
    known = judge_outcomes(BASELINE, ["t::bug"], [
        outcome("t::ok"), outcome("t::other", "failed"), outcome("t::bug")])
    assert known.unknown_failures == [] and not known.passed
