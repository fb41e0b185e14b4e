"""How warm each generation is asked to be, and when a repeated answer is a cycle. Pure.

A small model at temperature 0 answers the same prompt the same way: for the `small`
profile (issue 21) the first attempts are asked at 0 (its best guess), and each attempt
that fails the same way as the one before (or repeats its code) raises the temperature a
step, so the model leaves the rut instead of the loop calling it stuck. A repeated answer
that was asked for deterministically is not yet a cycle: the next, warmer attempt decides.
The standard profile leaves the temperature to the model (None), as before. An answer
that is not runnable Python at all is drawn again a step warmer, within the attempt
(`redraw_temperature`, loop/generate.py).
"""

from __future__ import annotations

from selfcorrect_action.loop.state import Attempt, RunState

STEP = 0.35
CEILING = 0.8
# At or below this a repeat is the sampling's doing, not yet the model's last word.
DETERMINISTIC = 0.3


def temperature_for(state: RunState) -> float | None:
    if state.profile != "small":
        return None
    return min(CEILING, round(STEP * repeats(state.attempts), 2))


def redraw_temperature(asked: float | None, draw: int) -> float:
    """The temperature of the `draw`th fresh answer to a generation that did not parse: the
    same answer again is what asking as before would get (temperature 0 is deterministic),
    so each draw is a step warmer than the one it replaces."""
    return min(CEILING, round((asked or 0.0) + STEP * draw, 2))


def repeats(attempts: list[Attempt]) -> int:
    """How many latest attempts in a row failed as the one before them did (same category)
    or repeated earlier code."""
    count = 0
    for previous, latest in zip(reversed(attempts[:-1]), reversed(attempts), strict=False):
        if latest.cycle_of is None and _category(latest) != _category(previous):
            break
        count += 1
    return count


def deterministic_repeat(attempt: Attempt) -> bool:
    """A cycle from a generation asked at (near) temperature 0: warm up before stopping."""
    return (attempt.cycle_of is not None and attempt.temperature is not None
            and attempt.temperature <= DETERMINISTIC)


def _category(attempt: Attempt) -> str | None:
    verdict = attempt.verdict
    return verdict.category.value if verdict is not None and verdict.category else None
