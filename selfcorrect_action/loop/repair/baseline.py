"""BASELINE (kind repair, before any model call): the test command twice on the unchanged
repository. What passes both times must still pass after the repair; what fails both times
is the target when the spec names none; what flips is flaky and named in the report."""

from __future__ import annotations

from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.repair.context import record, repository, test_request
from selfcorrect_action.loop.state import RunState, Status, end_run
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.baseline import already_passing, baseline_of, targets_of
from selfcorrect_action.repair.records import Baseline
from selfcorrect_action.repair.test_run import TestRun, read_run
from selfcorrect_action.sandbox.models import ExecutionResult
from selfcorrect_action.templating import shorten

RUNS = 2
FIX_HINT = ("the unchanged repository's tests must run and report: check test_command (it "
            "must run pytest), requirements, and contract.timeout_s / memory_mb")


def take_baseline(state: RunState, deps: Deps) -> RunState:
    repair = record(state)
    if repair.baseline is not None:
        return state
    results: list[ExecutionResult] = []
    runs: list[TestRun] = []
    placed = set(repository(deps).files)
    for number in range(1, RUNS + 1):
        deps.check_cancelled()
        deps.on_event("baseline", f"running {' '.join(state.spec.test_command)} on the "
                      f"unchanged repository ({number} of {RUNS})")
        result = deps.sandbox.run(test_request(state, deps, {}),
                                  deps.work_root / f"baseline-{number}")
        run = read_run(result, placed)
        if not run.reported:
            return bad_spec(state, f"baseline run {number}: {run.problem}", FIX_HINT)
        results.append(result)
        runs.append(run)
    baseline = evolve(baseline_of(runs[0].outcomes, runs[1].outcomes, results), {
        "changed": sorted({path for run in runs for path in run.changed})})
    return _with_targets(state, deps, baseline)


def _with_targets(state: RunState, deps: Deps, baseline: Baseline) -> RunState:
    targets = targets_of(baseline, state.spec.failing_tests)
    repair = evolve(record(state), {"baseline": baseline, "targets": targets.ids,
                                    "image": deps.image})
    state = evolve(state, {"repair": repair})
    deps.on_event("baseline", describe(baseline, targets.ids))
    if targets.unmatched:
        ran = len(baseline.passing) + len(baseline.failing) + len(baseline.skipped)
        return bad_spec(
            state, f"failing_tests: {', '.join(targets.unmatched)} named no test among the "
            f"{ran:,} the test command ran at baseline",
            "write node ids as pytest prints them (pytest --collect-only -q), from the "
            "repository root")
    if targets.nothing_fails:
        return end_run(state, Status.STOPPED, "no test fails at baseline (" + _counts(baseline)
                       + "): nothing to repair; name the tests that must pass in failing_tests")
    if already_passing(baseline, targets.ids):
        return end_run(state, Status.STOPPED, "every target test already passes at baseline: "
                       "nothing to repair")
    return state


def bad_spec(state: RunState, message: str, hint: str) -> RunState:
    """The run ends before any model call because the spec (its command, its tests, its
    limits) must change: an error with the exit code of bad usage, the state kept."""
    ended = end_run(state, Status.ERROR, str(UsageError(message, hint=hint)))
    return evolve(ended, {"error_exit_code": UsageError.exit_code})


def describe(baseline: Baseline, targets: list[str]) -> str:
    flaky = f"; flaky (results differed between the two runs): {', '.join(baseline.flaky)}" \
        if baseline.flaky else ""
    return shorten(f"baseline: {_counts(baseline)}; {len(targets)} target test(s): "
                   f"{', '.join(targets)}{flaky}", 400)


def _counts(baseline: Baseline) -> str:
    return (f"{len(baseline.passing)} passed, {len(baseline.failing)} failed, "
            f"{len(baseline.skipped)} skipped, {len(baseline.flaky)} flaky")
