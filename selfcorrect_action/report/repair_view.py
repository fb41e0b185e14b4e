"""A repair run as the reports show it (kind repair): the repository and how its suite ran,
the baseline with its flaky tests named, the targets, and each attempt's change, review and
regressions. Pure, over the redacted state; the templates only lay it out."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.loop.state import Attempt, RunState, Status
from selfcorrect_action.repair.records import IN_PROCESS, RepairRecord
from selfcorrect_action.report import text
from selfcorrect_action.report.layers import LayerRow
from selfcorrect_action.taxonomy import Check, Verdict

DIFF_LINES = 400
MAX_LISTED = 20
SHARED_PROCESS = (
    "The repository's own tests imported the rewritten code into pytest's process, as the "
    "repository runs them (no plain-data boundary fits a whole test suite): each rewrite was "
    "scanned for tampering before it ran, and tests, conftest.py and configuration could not "
    "be rewritten, but nothing stood between the rewritten code and the tests while they ran.")


@dataclass(frozen=True)
class ChangeView:
    """An attempt's files against the repository's."""

    files: list[str]
    text: str
    stat: str  # "+1 -1 lines"
    more: str


@dataclass(frozen=True)
class RepairView:
    test_command: str
    globs: list[str]
    allowed: list[str]
    allowed_more: int
    repository: str
    image: str  # the derived image's tag, "" for the plain sandbox image
    isolation: str
    baseline: str  # "6 passed, 2 failed, 0 skipped, 0 flaky", or why there is none
    flaky: list[str]
    targets: list[str]
    targets_from: str  # "named in failing_tests", "failing in both baseline runs"
    change: ChangeView | None  # the passing attempt's, else the best one's
    change_from: str  # "attempt 3"
    regressions: list[str]  # of the attempt the change is from


def repair_view(state: RunState) -> RepairView | None:
    repair = state.repair
    if repair is None:
        return None
    shown = _shown_attempt(state)
    return RepairView(
        test_command=" ".join(state.spec.test_command),
        globs=list(state.spec.files),
        allowed=repair.allowed[:MAX_LISTED],
        allowed_more=max(0, len(repair.allowed) - MAX_LISTED),
        repository=_repository(repair),
        image=repair.image,
        isolation=SHARED_PROCESS if repair.isolation == IN_PROCESS else repair.isolation,
        baseline=baseline_words(repair),
        flaky=list(repair.baseline.flaky[:MAX_LISTED]) if repair.baseline else [],
        targets=list(repair.targets[:MAX_LISTED]),
        targets_from=("named in failing_tests" if state.spec.failing_tests
                      else "failing in both baseline runs"),
        change=change_view(shown) if shown is not None and shown.files else None,
        change_from=f"attempt {shown.index}" if shown is not None else "",
        regressions=list(shown.regressions[:MAX_LISTED]) if shown is not None else [],
    )


def baseline_words(repair: RepairRecord) -> str:
    baseline = repair.baseline
    if baseline is None:
        return "not taken: the run ended before the baseline"
    return (f"{len(baseline.passing)} passed, {len(baseline.failing)} failed, "
            f"{len(baseline.skipped)} skipped, {len(baseline.flaky)} flaky (two runs of the "
            "unchanged repository)")


def _repository(repair: RepairRecord) -> str:
    listed = ("git's list of files (tracked, and untracked ones git does not ignore)"
              if repair.listed_by == "git" else "a walk of the folder (no git)")
    out = (f"; {text.plural(len(repair.left_out), 'symbolic link or missing file')} left out"
           if repair.left_out else "")
    return (f"{text.plural(repair.repository_files, 'file')}, "
            f"{text.number(repair.repository_bytes)} bytes, from {listed}{out}")


def _shown_attempt(state: RunState) -> Attempt | None:
    if state.status is Status.PASSED:
        return state.last
    best = state.best()
    return best if best is not None and best.execution is not None else None


def change_view(attempt: Attempt) -> ChangeView:
    shown, more = text.head_lines(attempt.diff, DIFF_LINES)
    lines = attempt.diff.splitlines()
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return ChangeView(list(attempt.files), shown, f"+{added} -{removed} lines",
                      f"{text.number(more)} more diff lines, in run.json" if more else "")


def repair_cautions(state: RunState) -> list[str]:
    repair = state.repair
    if repair is None:
        return []
    found = [SHARED_PROCESS]
    if repair.baseline is not None and repair.baseline.flaky:
        flaky = repair.baseline.flaky
        named = ", ".join(flaky[:5]) + (f" and {len(flaky) - 5} more" if len(flaky) > 5 else "")
        found.append(f"{text.plural(len(flaky), 'flaky test')} (the result differed between "
                     f"the two baseline runs) left out of the regression check: {named}.")
    return found


def repair_layer_rows(state: RunState, attempt: Attempt) -> list[LayerRow]:
    """The answer's checks, the review, the test command, the targets, the regressions."""
    verdict = attempt.verdict
    if attempt.cycle_of is not None:
        return [LayerRow("answer", "not reached",
                         f"same change as attempt {attempt.cycle_of}: not run again")]
    tampering = _check(verdict, "tampering")
    refused = (verdict is not None and attempt.execution is None and attempt.review is None
               and tampering is None and not verdict.passed and verdict.category != "semantic")
    if refused and verdict is not None:
        return [LayerRow("answer", "failed", _cut(verdict.evidence)),
                LayerRow("review", "not reached", ""), *_not_reached()]
    rows = [LayerRow("answer", "passed", f"rewrote {', '.join(attempt.files)}"),
            _review_row(state, attempt)]
    if tampering is not None:
        return [*rows, LayerRow("test command", "failed", _cut(tampering.detail)),
                *_not_reached()[1:]]
    if attempt.execution is None or verdict is None:
        return [*rows, *_not_reached()]
    unjudged = _check(verdict, "test command reported") or _check(verdict, "repository unchanged")
    if unjudged is not None:
        return [*rows, LayerRow("test command", "failed", _cut(unjudged.detail)),
                *_not_reached()[1:]]
    rows.append(LayerRow("test command", "passed", "ran and reported"))
    for name in ("target tests", "no regressions"):
        check = _check(verdict, name)
        rows.append(LayerRow(name, "not reached", "") if check is None else
                    LayerRow(name, "passed" if check.passed else "failed", _cut(check.detail)))
    return rows


def _not_reached() -> list[LayerRow]:
    return [LayerRow(name, "not reached", "")
            for name in ("test command", "target tests", "no regressions")]


def _review_row(state: RunState, attempt: Attempt) -> LayerRow:
    if not state.spec.review:
        return LayerRow("review", "not applicable", "review: false in the spec")
    review = attempt.review
    if review is None:
        return LayerRow("review", "not reached", "")
    return LayerRow("review", "passed" if review.approved else "failed", _cut(review.reasons))


def _check(verdict: Verdict | None, name: str) -> Check | None:
    if verdict is None:
        return None
    return next((check for check in verdict.checks if check.name == name), None)


def _cut(detail: str) -> str:
    detail = " ".join(detail.split())
    return detail if len(detail) <= 300 else detail[:299] + "…"


def repair_progress(attempt: Attempt) -> str:
    """How far a repair attempt got, in words."""
    if attempt.execution is None:
        return "did not run"
    reached = ("its tests did not report", "its tests ran", "the target tests pass",
               "passed: targets pass, no regressions")[min(attempt.progress.layer, 3)]
    if attempt.progress.layer == 2 and attempt.regressions:
        reached += f" ({text.plural(len(attempt.regressions), 'regression')})"
    if attempt.progress.tests_passed:
        reached += f", {text.plural(attempt.progress.tests_passed, 'test')} passed"
    return reached
