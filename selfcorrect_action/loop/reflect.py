"""REFLECT: pure. A passing attempt ends the run; a failing one gets a decision from
strategy.next_step_after (patch, rethink, escalate, or stop) and the repair packet the next
generation will read."""

from __future__ import annotations

from selfcorrect_action.loop.feedback import build_packet
from selfcorrect_action.loop.repair.packet import build_repair_packet
from selfcorrect_action.loop.state import RunState, Status, end_run, with_last_attempt
from selfcorrect_action.loop.strategy import RetryBudget, next_step_after
from selfcorrect_action.records import evolve


def reflect(state: RunState) -> RunState:
    attempt = state.last
    if state.status is not Status.RUNNING or attempt is None:
        return state
    if attempt.verdict is not None and attempt.verdict.passed:
        return end_run(state, Status.PASSED, f"attempt {attempt.index} passed every layer")
    budget = RetryBudget(state.budget.patch_attempts, state.budget.rethink_attempts)
    used = RetryBudget(state.usage.patch_attempts, state.usage.rethink_attempts)
    decision = next_step_after(state.attempts, budget, used, since=state.fresh_from)
    if decision.next_step is None:
        return end_run(state, decision.status, decision.reason)
    if state.spec.kind == "repair":
        packet = build_repair_packet(state, attempt, decision.next_step)
    else:
        packet = build_packet(state, attempt, decision.next_step,
                              max_attempts=state.max_attempts)
    updated = with_last_attempt(state, evolve(attempt, {"packet": packet}))
    return evolve(updated, {"next_step": decision.next_step})
