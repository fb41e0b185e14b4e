"""Attempts whose code was given rather than generated: the committed script a regeneration
starts from (issue 36), the script a re-verification judges. The seam a resumed run or a
benchmark can start from given code through as well.

A given attempt is an attempt like any other (it counts against the budget, its failure is
classified and repaired, patch first), except that no model wrote it: the loop executes it
where it would have generated one. A resumed run's last attempt is executed again through
the same seam (loop/resume.py). Pure."""

from __future__ import annotations

from selfcorrect_action.loop.generate import code_sha
from selfcorrect_action.loop.state import Attempt, RunState, Strategy
from selfcorrect_action.records import evolve

GIVEN_MODEL = "(the committed script)"


def given_attempt(code: str, *, index: int = 1, model: str = GIVEN_MODEL) -> Attempt:
    """An attempt whose code was given rather than generated."""
    return Attempt(index=index, strategy=Strategy.INITIAL, tier="cheap", model=model,
                   code=code, code_sha=code_sha(code))


def starting_from(state: RunState, code: str, *, model: str = GIVEN_MODEL) -> RunState:
    """`state`, a run's first, with `code` as its first attempt. Refused on a run that has
    attempts already (a resumed one): the given code would not be its first."""
    if state.attempts:
        raise ValueError("a run starts from given code only before its first attempt")
    return evolve(state, {"attempts": [given_attempt(code, model=model)]})


def awaits_execution(state: RunState) -> bool:
    """Whether the run's last attempt holds code not yet run: given code, or a resumed
    run's attempt made ready to be executed again (loop/resume.py). The next attempt step
    is then its execution (after its review, for a repair), not a new generation. Between
    steps, any attempt that went through execute has a result or a verdict."""
    if not state.attempts:
        return False
    last = state.attempts[-1]
    return (last.execution is None and last.verdict is None and last.cycle_of is None
            and bool(last.code or last.files))
