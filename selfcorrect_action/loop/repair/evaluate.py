"""EVALUATE (kind repair): the test command's report against the baseline. The attempt
passes when every target test ran and passed and no test that passed in both baseline runs
fails or vanished (flaky ones aside); a regression is a contract failure naming the test.
A run that cannot be judged (no report, one its exit status contradicts, a time-out), or
one that changed the repository's own files, fails too."""

from __future__ import annotations

from collections.abc import Callable

from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.repair.context import record, repository
from selfcorrect_action.loop.state import Attempt, Progress, RunState, with_last_attempt
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.test_run import TestRun, read_run
from selfcorrect_action.repair.verdict import (
    RepairJudgement,
    category,
    evidence,
    in_files,
    judge_outcomes,
)
from selfcorrect_action.taxonomy import Category, Check, Layer, TestOutcome, Verdict
from selfcorrect_action.templating import shorten

MAX_KEPT_OUTCOMES = 200


def evaluate_repair(state: RunState, deps: Deps) -> RunState:
    attempt = state.last
    if attempt is None or attempt.verdict is not None or attempt.execution is None:
        return state
    repair = record(state)
    baseline = repair.baseline
    if baseline is None:
        raise AssertionError("a repair attempt was evaluated before its baseline")
    run = read_run(attempt.execution, set(repository(deps).files))
    changed = sorted(set(run.changed) - set(baseline.changed))
    if not run.reported:
        verdict = _run_problem(run)
        updated = evolve(attempt, {"verdict": verdict, "progress": Progress()})
    elif changed:
        verdict = _failed(Category.CONTRACT, "the test run changed files of the repository "
                          f"({', '.join(changed[:5])}): what the tests judge must stay as "
                          "placed", "repository unchanged")
        updated = evolve(attempt, {"verdict": verdict, "progress": Progress(layer=1)})
    else:
        judged = judge_outcomes(baseline, repair.targets, run.outcomes)
        updated = _judged(attempt, run, judged, in_files(repair.allowed))
    said = updated.verdict
    assert said is not None
    deps.on_event("evaluate", f"attempt {attempt.index}: " + (
        "passed: the target tests pass and nothing that passed before fails" if said.passed
        else f"{said.category} failure: {shorten(said.evidence, 160)}"))
    return with_last_attempt(state, updated)


def _judged(attempt: Attempt, run: TestRun, judged: RepairJudgement,
            inside: Callable[[str], bool]) -> Attempt:
    checks = [
        Check(name="target tests", passed=not judged.failing_targets,
              detail="every target test passed" if not judged.failing_targets else
              "still failing: " + ", ".join(judged.failing_targets[:5])),
        Check(name="no regressions", passed=not judged.regressions,
              detail="nothing that passed at baseline fails" if not judged.regressions else
              "; ".join(r.describe() for r in judged.regressions[:5])[:600]),
    ]
    if judged.unknown_failures:
        checks.append(Check(name="only known tests fail", passed=False,
                            detail="never reported at baseline: "
                            + ", ".join(judged.unknown_failures[:5])[:600]))
    if judged.passed:
        verdict = Verdict(passed=True, checks=checks)
    else:
        verdict = Verdict(passed=False, failed_layer="contract",
                          category=category(judged, inside),
                          evidence=evidence(judged)[:1200], checks=checks)
    layer = 3 if judged.passed else 2 if not judged.failing_targets else 1
    return evolve(attempt, {
        "verdict": verdict, "tests": _kept(run.outcomes),
        "regressions": [r.test_id for r in judged.regressions],
        "progress": Progress(layer=layer, tests_passed=judged.passing,
                             checks_passed=sum(check.passed for check in checks))})


def _kept(outcomes: list[TestOutcome]) -> list[TestOutcome]:
    """The failing outcomes (with their detail) for the report and the next packet; the
    passing ones are counted, not kept: the baseline holds their ids."""
    return [o for o in outcomes if o.outcome in ("failed", "error")][:MAX_KEPT_OUTCOMES]


def _run_problem(run: TestRun) -> Verdict:
    category = run.category or Category.CONTRACT
    return _failed(category, run.problem, "test command reported",
                   layer="execution" if category is Category.RESOURCE else "contract")


def _failed(category: Category, text: str, check: str, *, layer: Layer = "contract"
            ) -> Verdict:
    return Verdict(passed=False, failed_layer=layer, category=category,
                   evidence=text[:1200], checks=[Check(name=check, passed=False,
                                                       detail=text[:600])])
