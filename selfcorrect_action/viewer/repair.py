"""What a repair run's page shows beyond the view-model's account (report/repair_view.py,
the one AUDIT.md is rendered from): each attempt's rewritten files in full, the tests that
failed at baseline with why, and the run's own junit report kept off the list of files the
test command wrote (issue 38: the page showed "code (0 lines)" for every attempt, and
`.selfcorrect/repair-junit.xml` as a file the run made). Pure, over the redacted state."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from selfcorrect_action.loop.state import Attempt, RunState, Status
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.test_run import REPORT_PATH
from selfcorrect_action.report import text
from selfcorrect_action.report.view import title

MAX_FILES = 20
FILE_CHARS = 40_000
MAX_ROWS = 20
MESSAGE_CHARS = 300


@dataclass(frozen=True)
class FileView:
    """One file as an attempt rewrote it, whole."""

    path: str
    text: str
    size: str  # "12 lines"
    more: str  # "" or what was left out


@dataclass(frozen=True)
class BaselineRow:
    test_id: str
    outcome: str  # at baseline: "failed", "error", or "passed" for a target named by hand
    message: str
    target: bool


@dataclass(frozen=True)
class RepairPage:
    baseline_rows: list[BaselineRow]
    rows_more: int  # failing tests left out of the table
    files: dict[int, list[FileView]]  # per attempt shown in full
    files_more: dict[int, int]


def repair_page(state: RunState, in_full: Collection[int]) -> RepairPage | None:
    repair = state.repair
    if repair is None:
        return None
    rows = baseline_rows(state)
    attempts = [a for a in state.attempts if a.index in in_full]
    return RepairPage(rows[:MAX_ROWS], max(0, len(rows) - MAX_ROWS),
                      {a.index: file_views(a) for a in attempts},
                      {a.index: max(0, len(a.files) - MAX_FILES) for a in attempts})


def baseline_rows(state: RunState) -> list[BaselineRow]:
    """The tests that failed at baseline (targets first), and any target that did not."""
    repair = state.repair
    if repair is None or repair.baseline is None:
        return []
    targets = set(repair.targets)
    failed = [BaselineRow(o.test_id, o.outcome, _message(o.message), o.test_id in targets)
              for o in repair.baseline.failing_outcomes]
    named = {row.test_id for row in failed}
    others = [BaselineRow(test_id, _outcome_of(state, test_id), "", True)
              for test_id in repair.targets if test_id not in named]
    return sorted([*failed, *others], key=lambda row: not row.target)


def file_views(attempt: Attempt) -> list[FileView]:
    views = []
    for path, content in list(attempt.files.items())[:MAX_FILES]:
        lines = text.plural(len(content.splitlines()), "line")
        more = (f"{text.number(len(content) - FILE_CHARS)} more characters, in run.json"
                if len(content) > FILE_CHARS else "")
        views.append(FileView(path, content[:FILE_CHARS], lines, more))
    return views


def without_own_report(state: RunState) -> RunState:
    """The state with the repair's junit report (the run's own file, read for the verdict)
    off each attempt's list of files the test command wrote."""
    if state.spec.kind != "repair":
        return state
    attempts = [_without_report(attempt) for attempt in state.attempts]
    return evolve(state, {"attempts": attempts})


def _without_report(attempt: Attempt) -> Attempt:
    result = attempt.execution
    if result is None or not any(r.path == REPORT_PATH for r in result.artifacts):
        return attempt
    kept = [record for record in result.artifacts if record.path != REPORT_PATH]
    return evolve(attempt, {"execution": evolve(result, {"artifacts": kept})})


def what_changed(state: RunState) -> str:
    """For the site's index: the files a passed repair changed, else what it was asked to
    repair; for a script run, the script."""
    if state.spec.kind != "repair":
        return title(state)
    passing = state.last if state.status is Status.PASSED else None
    if passing is not None and passing.files:
        return "changed " + ", ".join(sorted(passing.files))
    return title(state) + ": no change passed"


def _outcome_of(state: RunState, test_id: str) -> str:
    baseline = state.repair.baseline if state.repair else None
    if baseline is None:
        return "not run"
    for outcome, tests in (("passed", baseline.passing), ("skipped", baseline.skipped),
                           ("flaky", baseline.flaky)):
        if test_id in tests:
            return outcome
    return "not found"


def _message(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= MESSAGE_CHARS else flat[: MESSAGE_CHARS - 1] + "…"
