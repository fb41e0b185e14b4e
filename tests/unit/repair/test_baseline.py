"""The baseline (two runs of the unchanged repository), flaky tests, and the targets."""

from __future__ import annotations

from selfcorrect_action.repair.baseline import (
    already_passing,
    baseline_of,
    results,
    selects,
    targets_of,
)
from selfcorrect_action.taxonomy import TestOutcome


def run(**outcomes: str) -> list[TestOutcome]:
    """`a="passed"` is the test `t.py::a` with that outcome."""
    return [TestOutcome.model_validate({"test_id": f"t.py::{name}", "outcome": outcome,
                                        "message": f"{name} says"})
            for name, outcome in outcomes.items()]


def test_steady_results_sort_into_passing_failing_and_skipped() -> None:
    first = run(a="passed", b="failed", c="error", d="skipped")
    baseline = baseline_of(first, first)
    assert baseline.passing == ["t.py::a"]
    assert baseline.failing == ["t.py::b", "t.py::c"]
    assert baseline.skipped == ["t.py::d"] and baseline.flaky == []
    assert [o.test_id for o in baseline.failing_outcomes] == ["t.py::b", "t.py::c"]


def test_a_result_that_flips_or_a_test_only_one_run_reported_is_flaky() -> None:
    baseline = baseline_of(run(a="passed", b="failed", c="passed", only_first="passed"),
                           run(a="failed", b="failed", c="passed", only_second="failed"))
    assert baseline.flaky == ["t.py::a", "t.py::only_first", "t.py::only_second"]
    assert baseline.passing == ["t.py::c"] and baseline.failing == ["t.py::b"]


def test_failed_and_error_are_one_result_so_that_flip_is_not_flaky() -> None:
    assert baseline_of(run(a="failed"), run(a="error")).failing == ["t.py::a"]


def test_a_duplicated_id_counts_at_its_worst() -> None:
    twice = [*run(a="passed"), *run(a="failed")]
    assert results(twice) == {"t.py::a": "fail"}


def test_an_entry_selects_itself_and_what_lies_under_it() -> None:
    test = "tests/test_x.py::TestParse::test_empty[1-2]"
    for pattern in ("tests", "tests/", "tests/test_x.py", "tests/test_x.py::TestParse",
                    "tests/test_x.py::TestParse::test_empty", test):
        assert selects(pattern, test), pattern
    for pattern in ("tests/test_x", "tests/test_x.py::TestPar",
                    "tests/test_x.py::TestParse::test_empty[1", "test"):
        assert not selects(pattern, test), pattern


def test_without_failing_tests_the_targets_are_what_failed_both_times() -> None:
    baseline = baseline_of(run(a="passed", b="failed", c="failed"),
                           run(a="passed", b="failed", c="passed"))
    targets = targets_of(baseline, [])
    assert targets.ids == ["t.py::b"] and targets.unmatched == [] and not targets.nothing_fails


def test_nothing_failing_and_no_failing_tests_means_nothing_to_aim_at() -> None:
    baseline = baseline_of(run(a="passed", b="failed"), run(a="passed", b="passed"))
    assert targets_of(baseline, []).nothing_fails  # b is flaky, not a target


def test_failing_tests_select_at_baseline_and_unmatched_ones_are_reported() -> None:
    baseline = baseline_of(run(a="passed", b="failed"), run(a="passed", b="failed"))
    targets = targets_of(baseline, ["t.py::b", "t.py", "t.py::nope"])
    assert targets.ids == ["t.py::a", "t.py::b"]
    assert targets.unmatched == ["t.py::nope"]


def test_targets_that_all_pass_at_baseline_leave_nothing_to_repair() -> None:
    baseline = baseline_of(run(a="passed", b="failed"), run(a="passed", b="failed"))
    assert already_passing(baseline, ["t.py::a"])
    assert not already_passing(baseline, ["t.py::a", "t.py::b"])
    assert not already_passing(baseline, [])
