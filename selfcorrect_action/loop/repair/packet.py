"""The repair packet of a failed repair attempt: the generic packet (loop/feedback.py,
bounded the same way), with the tests that matter first (the targets still failing, then
the regressions), the innermost frame inside a file the repair may rewrite, and the
reviewer's reasons when it rejected the change."""

from __future__ import annotations

from selfcorrect_action.evaluation.pytest_traceback import detail_frames
from selfcorrect_action.loop.feedback import build_packet, fit
from selfcorrect_action.loop.repair.context import record
from selfcorrect_action.loop.state import Attempt, NextStep, RepairPacket, RunState
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.baseline import selects
from selfcorrect_action.repair.verdict import allowed_file
from selfcorrect_action.taxonomy import TestOutcome

LOCATION_CHARS = 300
REVIEW_CHARS = 600


def build_repair_packet(state: RunState, attempt: Attempt, next_step: NextStep
                        ) -> RepairPacket:
    source = _evaluated(state, attempt)
    ordered = evolve(source, {"tests": _ordered(state, source)})
    shown = evolve(attempt, {"tests": ordered.tests}) if source is attempt else attempt
    packet = build_packet(_with(state, source, ordered), shown, next_step,
                          max_attempts=state.max_attempts)
    files = list(attempt.files) or (state.plan.files if state.plan else [])
    return fit(evolve(packet, {
        "location": _location(state, ordered.tests),
        "file_name": ", ".join(files),
        "judge_reasoning": _review(source),
    }))


def _evaluated(state: RunState, attempt: Attempt) -> Attempt:
    if attempt.cycle_of is None:
        return attempt
    return next(a for a in state.attempts if a.index == attempt.cycle_of)


def _with(state: RunState, source: Attempt, ordered: Attempt) -> RunState:
    attempts = [ordered if a.index == source.index else a for a in state.attempts]
    return evolve(state, {"attempts": attempts})


def _ordered(state: RunState, attempt: Attempt) -> list[TestOutcome]:
    """Targets first, then regressions, then the tests that failed at baseline too."""
    targets = record(state).targets
    regressions = set(attempt.regressions)

    def rank(outcome: TestOutcome) -> int:
        if any(selects(target, outcome.test_id) for target in targets):
            return 0
        return 1 if outcome.test_id in regressions else 2
    return sorted(attempt.tests, key=rank)


def _location(state: RunState, tests: list[TestOutcome]) -> str:
    """The innermost frame inside an allowed file of the first test that has one, named by
    its path in the repository (several allowed files may share a name: `__init__.py`)."""
    allowed = set(record(state).allowed)
    for test in tests:
        for frame in reversed(detail_frames(test.detail)):
            path = allowed_file(frame.file, allowed)
            if path is not None:
                where = f"{path}:{frame.line}" + (f" in {frame.function}"
                                                  if frame.function else "")
                return (f"{where}: {frame.source}" if frame.source else where)[
                    :LOCATION_CHARS]
    return ""


def _review(attempt: Attempt) -> str:
    review = attempt.review
    if review is None or review.approved:
        return ""
    return review.reasons[:REVIEW_CHARS]
