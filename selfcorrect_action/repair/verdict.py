"""Whether a repair attempt passed, as a pure function of its test run and the baseline:
every target test ran and passed, and no test that passed in both baseline runs fails now
or is missing (a regression, named). Flaky tests are left out of the regression check.

A test missing from the report counts against the repair, never for it: rewritten code can
make a module fail to import, and its tests then vanish from the report instead of failing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from selfcorrect_action.evaluation.pytest_traceback import detail_frames
from selfcorrect_action.repair.baseline import results, selects
from selfcorrect_action.repair.records import Baseline
from selfcorrect_action.taxonomy import Category, TestOutcome

MAX_NAMED = 5


@dataclass(frozen=True)
class Regression:
    test_id: str
    now: str  # "failed", "error", "skipped" or "missing"
    message: str = ""

    def describe(self) -> str:
        said = "did not run" if self.now == "missing" else self.now
        return f"{self.test_id} passed at baseline and {said} now" + (
            f": {self.message}" if self.message else "")


@dataclass(frozen=True)
class RepairJudgement:
    failing_targets: list[str]  # targets that did not run, or did not pass
    regressions: list[Regression]
    first_failure: TestOutcome | None = None  # the first failing target's outcome, if any
    passing: int = 0
    checked: list[str] = field(default_factory=list)  # what was checked, for the report
    # Failing tests the baseline never reported: a report the repaired code (run in the
    # tests' own process) edited can keep pytest's exit status true with a made-up failure.
    unknown_failures: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failing_targets and not self.regressions and not self.unknown_failures


def judge_outcomes(baseline: Baseline, targets: list[str], outcomes: list[TestOutcome]
                   ) -> RepairJudgement:
    now = results(outcomes)
    by_id = {o.test_id: o for o in outcomes if o.outcome in ("failed", "error")}
    failing = [target for target in targets if not _target_passed(target, now)]
    flaky = set(baseline.flaky)
    regressions = [
        Regression(test, _word(now.get(test), by_id.get(test)),
                   by_id[test].message if test in by_id else "")
        for test in baseline.passing if test not in flaky and now.get(test) != "pass"]
    first = next((by_id[test] for target in failing for test in now
                  if selects(target, test) and test in by_id), None)
    known = {*baseline.passing, *baseline.failing, *baseline.skipped, *baseline.flaky}
    unknown = [test for test in by_id if test not in known]
    return RepairJudgement(failing, regressions, first,
                           passing=sum(result == "pass" for result in now.values()),
                           unknown_failures=unknown)


def _target_passed(target: str, now: Mapping[str, str]) -> bool:
    """At least one test the target selects ran, and every one of them passed."""
    selected = [result for test, result in now.items() if selects(target, test)]
    return bool(selected) and all(result == "pass" for result in selected)


def _word(result: str | None, outcome: TestOutcome | None) -> str:
    if result is None:
        return "missing"
    if outcome is not None:
        return outcome.outcome
    return {"skip": "skipped", "pass": "passed"}.get(result, "failed")


def evidence(judgement: RepairJudgement) -> str:
    """One paragraph for the verdict: the targets still failing, then the regressions."""
    parts: list[str] = []
    if judgement.failing_targets:
        names = ", ".join(judgement.failing_targets[:MAX_NAMED])
        more = len(judgement.failing_targets) - MAX_NAMED
        first = judgement.first_failure
        parts.append(f"target tests still failing: {names}" + (f" (+{more} more)" if more > 0
                                                                 else "")
                     + (f"; first: {first.test_id}: {first.message}" if first else ""))
    if judgement.regressions:
        named = "; ".join(r.describe() for r in judgement.regressions[:MAX_NAMED])
        more = len(judgement.regressions) - MAX_NAMED
        parts.append(f"regression: {named}" + (f" (+{more} more)" if more > 0 else ""))
    if judgement.unknown_failures:
        names = ", ".join(judgement.unknown_failures[:MAX_NAMED])
        more = len(judgement.unknown_failures) - MAX_NAMED
        parts.append(f"failing tests the unchanged repository never reported: {names}"
                     + (f" (+{more} more)" if more > 0 else "")
                     + " (a test the change made up, or a report it edited)")
    return " — ".join(parts)


def category(judgement: RepairJudgement, in_allowed: Callable[[str], bool]) -> Category:
    """The failure's category. A regression is a contract failure (the change broke what
    worked); a target that fails with an exception raised inside a rewritten file is the
    code's own runtime failure; one that fails an assertion is a contract miss."""
    first = judgement.first_failure
    if judgement.failing_targets and first is not None:
        message = first.message
        if message.startswith(("SyntaxError", "IndentationError", "TabError")):
            return Category.SYNTAX
        if message.startswith(("ModuleNotFoundError", "ImportError")) and not any(
                in_allowed(f.file) for f in detail_frames(first.detail)):
            return Category.ENVIRONMENT
        if message.startswith(("MemoryError", "RecursionError")):
            return Category.RESOURCE
        frames = detail_frames(first.detail)
        raised_inside = bool(frames) and in_allowed(frames[-1].file)
        if raised_inside and not message.startswith(("AssertionError", "assert ")):
            return Category.RUNTIME
    return Category.CONTRACT


def in_files(allowed: list[str]) -> Callable[[str], bool]:
    """Whether a traceback's file (relative, or absolute under the sandbox's /work) is one
    of the files the repair may rewrite."""
    wanted = set(allowed)

    def inside(file: str) -> bool:
        return allowed_file(file, wanted) is not None
    return inside


def allowed_file(file: str, allowed: Collection[str]) -> str | None:
    """The file of `allowed` a traceback's file is, or None: the same path (relative, or
    absolute under the sandbox's /work), else the allowed path that ends it with the most
    parts (`pkg/core.py` for `.../pkg/core.py` although `core.py` ends it too; never
    `core.py` for `pkg/xcore.py`)."""
    path = file.removeprefix("/work/")
    if path in allowed:
        return path
    parts = PurePosixPath(path).parts
    ending = [a for a in allowed
              if parts[-len(PurePosixPath(a).parts):] == PurePosixPath(a).parts]
    return max(ending, key=lambda a: len(PurePosixPath(a).parts), default=None)
