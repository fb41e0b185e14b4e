"""Switching a run to the small profile when nothing said how big its model is (issue 38):
a model served under an alias (llama-cpp-python's `--model_alias local`) tells neither its
size nor its window, so `--profile auto` starts standard and lets the model's first answer
decide: one that is not runnable Python (no code, an echo, a SyntaxError) switches the run
to the small profile's handling (short prompts, the code's start given, temperature 0
first, fresh draws of an unrunnable answer). Pure."""

from __future__ import annotations

from selfcorrect_action.loop.state import RunState
from selfcorrect_action.records import evolve

# Fresh answers a small model's unrunnable one gets within its attempt (loop/generate.py).
# Two: on HumanEval/0-12, 12 of SmolLM2-135M's 18 unrunnable first answers were rescued by a
# warmer draw: 9 by the first, 3 more by the second.
SMALL_REDRAWS = 2
OPEN_REASON = ("standard, as the model's size is unknown (neither the server nor its name "
               "says it): the first answer that is not runnable Python switches the run to "
               "the small profile")


def switched_to_small(state: RunState, attempt: int, problem: str) -> RunState:
    """The run in the small profile from attempt `attempt` on, saying why."""
    return evolve(state, {
        "profile": "small", "profile_open": False, "redraws": SMALL_REDRAWS,
        "profile_reason": f"small since attempt {attempt}: the model's size was unknown, and "
                          f"its answer was not runnable Python ({problem})"})
