"""The baseline and the targets of a repair, as pure functions of test outcomes.

The test command runs twice on the unchanged repository before any model is called. A test
passing both times must still pass after the repair (a regression otherwise); one failing
both times is a target when the spec names none; one whose result flips between the two
runs (or that only one run reported) is flaky, and is left out of both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from selfcorrect_action.repair.records import Baseline
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.taxonomy import TestOutcome

Result = Literal["pass", "fail", "skip"]
_RESULT: dict[str, Result] = {"passed": "pass", "failed": "fail", "error": "fail",
                              "skipped": "skip"}
_WORSE: dict[Result, int] = {"pass": 0, "skip": 1, "fail": 2}


def results(outcomes: Iterable[TestOutcome]) -> dict[str, Result]:
    """Each test id's result; a test reported twice (a duplicated id) counts at its worst."""
    found: dict[str, Result] = {}
    for outcome in outcomes:
        result = _RESULT[outcome.outcome]
        earlier = found.get(outcome.test_id)
        if earlier is None or _WORSE[result] > _WORSE[earlier]:
            found[outcome.test_id] = result
    return found


def baseline_of(first: list[TestOutcome], second: list[TestOutcome],
                runs: list[ExecutionResult] | None = None) -> Baseline:
    one, two = results(first), results(second)
    flaky = sorted(test for test in one.keys() | two.keys() if one.get(test) != two.get(test))
    steady = {test: result for test, result in two.items() if one.get(test) == result}
    failing = sorted(test for test, result in steady.items() if result == "fail")
    return Baseline(
        passing=sorted(test for test, result in steady.items() if result == "pass"),
        failing=failing,
        skipped=sorted(test for test, result in steady.items() if result == "skip"),
        flaky=flaky,
        failing_outcomes=[o for o in second if o.test_id in set(failing)],
        runs=runs or [],
    )


def selects(pattern: str, test_id: str) -> bool:
    """Whether a `failing_tests` entry names this test: itself, or a file, folder, class or
    parametrised function it belongs to (`tests/test_x.py` selects all of that file's)."""
    if test_id == pattern:
        return True
    return any(test_id.startswith(pattern.rstrip("/") + sep) for sep in ("::", "[", "/"))


@dataclass(frozen=True)
class Targets:
    """The test ids that must pass, or why there are none to aim at."""

    ids: list[str]
    unmatched: list[str]  # `failing_tests` entries that named no test the baseline ran
    nothing_fails: bool = False  # no entries given, and nothing failed both times


def targets_of(baseline: Baseline, failing_tests: list[str]) -> Targets:
    if not failing_tests:
        return Targets(list(baseline.failing), [], nothing_fails=not baseline.failing)
    known = [*baseline.passing, *baseline.failing, *baseline.skipped, *baseline.flaky]
    chosen: list[str] = []
    unmatched: list[str] = []
    for pattern in failing_tests:
        hits = [test for test in known if selects(pattern, test)]
        if not hits:
            unmatched.append(pattern)
        chosen += [test for test in hits if test not in chosen]
    return Targets(sorted(chosen), unmatched)


def already_passing(baseline: Baseline, targets: list[str]) -> bool:
    """Every target passed both baseline runs: there is nothing to repair."""
    passing = set(baseline.passing)
    return bool(targets) and all(test in passing for test in targets)
