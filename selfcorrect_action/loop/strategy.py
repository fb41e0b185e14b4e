"""Reflect's decision, as pure functions: which failure category gets which repair strategy,
when to restart from the best attempt, when to escalate to the strong model, when to stop.

docs/loop.md's table: environment, syntax and runtime failures are patched (same approach, fix
the mistake); resource, external and semantic failures are rethought (a different approach);
a contract miss is patched once, then rethought. Two attempts without progress, or the same
code twice, escalate to the strong model; after escalating, they stop the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.llm.models import Tier
from selfcorrect_action.loop.sampling import deterministic_repeat
from selfcorrect_action.loop.state import Attempt, NextStep, Status, Strategy
from selfcorrect_action.taxonomy import Category

DEFAULT_STRATEGY: dict[Category, Strategy] = {
    Category.ENVIRONMENT: Strategy.PATCH,
    Category.SYNTAX: Strategy.PATCH,
    Category.RUNTIME: Strategy.PATCH,
    Category.RESOURCE: Strategy.RETHINK,
    Category.EXTERNAL: Strategy.RETHINK,
    Category.CONTRACT: Strategy.PATCH,
    Category.SEMANTIC: Strategy.RETHINK,
}
STALL_LIMIT = 2


@dataclass(frozen=True)
class RetryBudget:
    patch_attempts: int
    rethink_attempts: int


@dataclass(frozen=True)
class Decision:
    """Either the next step, or the status the run ends with and why."""

    next_step: NextStep | None
    status: Status = Status.RUNNING
    reason: str = ""


def strategy_for(category: Category, attempts: list[Attempt]) -> Strategy:
    """The category's default; a contract miss right after a patch for a contract miss is
    rethought, since patching the same approach did not meet the contract."""
    chosen = DEFAULT_STRATEGY[category]
    if category is Category.CONTRACT and len(attempts) >= 2:
        previous, latest = attempts[-2], attempts[-1]
        if latest.strategy is Strategy.PATCH and _category_or_none(previous) is Category.CONTRACT:
            return Strategy.RETHINK
    return chosen


def stalls(attempts: list[Attempt], *, since: int = 0) -> int:
    """Consecutive latest attempts (since the last escalation, and since attempt `since`
    when a resume gave the run more budget) that did not beat the best progress before
    them. A cycle (same code again) always counts."""
    window = _since_escalation(attempts)
    if since > 1:
        window = [attempt for attempt in window if attempt.index >= since] or window
    count = 0
    for i in range(len(window) - 1, 0, -1):
        attempt = window[i]
        best_before = max(a.progress.key() for a in window[:i])
        if attempt.cycle_of is None and attempt.progress.key() > best_before:
            break
        count += 1
    return count


def next_step_after(attempts: list[Attempt], budget: RetryBudget, used: RetryBudget, *,
                    since: int = 0) -> Decision:
    """What follows the last (failed) attempt. `since`: the attempt a resume that gave more
    budget continued from, where the stall window starts again (0: none)."""
    latest = attempts[-1]
    category = _category(latest)
    escalated = any(a.tier == "strong" for a in attempts)
    # A repeat asked for at temperature 0 is the sampling's: the next attempt is warmer
    # (loop/sampling.py), so it is not yet a reason to escalate or stop.
    repeated = latest.cycle_of is not None and not deterministic_repeat(latest)
    stuck = repeated or stalls(attempts, since=since) >= STALL_LIMIT
    if stuck and escalated:
        why = (f"attempt {latest.index} repeated attempt {latest.cycle_of}'s code"
               if repeated else
               f"{STALL_LIMIT} attempts in a row made no progress")
        return Decision(None, Status.STOPPED, f"{why}, even with the strong model")
    strategy = _affordable(strategy_for(category, attempts), budget, used)
    if strategy is None:
        return Decision(
            None, Status.EXHAUSTED,
            f"retry budget used up: {used.patch_attempts}/{budget.patch_attempts} patches, "
            f"{used.rethink_attempts}/{budget.rethink_attempts} rethinks",
        )
    tier: Tier = "strong" if escalated or stuck else "cheap"
    base = _base_attempt(attempts, strategy)
    reason = f"{category.value} failure: {strategy.value}"
    if stuck:
        reason += " with the strong model (" + (
            "same code as before" if repeated else "no progress") + ")"
    if base is not None and base != latest.index:
        reason += f", restarting from attempt {base} (the best so far)"
    return Decision(NextStep(strategy=strategy, tier=tier, base_attempt=base, reason=reason))


def _affordable(wanted: Strategy, budget: RetryBudget, used: RetryBudget) -> Strategy | None:
    """The wanted strategy if its budget has room, else the other one, else None."""
    left = {
        Strategy.PATCH: budget.patch_attempts - used.patch_attempts,
        Strategy.RETHINK: budget.rethink_attempts - used.rethink_attempts,
    }
    other = Strategy.RETHINK if wanted is Strategy.PATCH else Strategy.PATCH
    for strategy in (wanted, other):
        if left[strategy] > 0:
            return strategy
    return None


def _base_attempt(attempts: list[Attempt], strategy: Strategy) -> int | None:
    """A patch repairs code: the latest attempt's, unless it regressed from the best one, in
    which case the repair restarts from the best. A rethink starts afresh from the task."""
    if strategy is Strategy.RETHINK:
        return None
    ran = [a for a in attempts if a.cycle_of is None]
    if not ran:
        return None
    latest = ran[-1]
    best = max(ran, key=lambda a: (a.progress.key(), -a.index))
    return best.index if best.progress.key() > latest.progress.key() else latest.index


def _since_escalation(attempts: list[Attempt]) -> list[Attempt]:
    for i, attempt in enumerate(attempts):
        if attempt.tier == "strong":
            # Keep the attempt before the first strong one as the baseline to beat.
            return attempts[max(0, i - 1):]
    return attempts


def _category(attempt: Attempt) -> Category:
    """The failed attempt's category. Every attempt reaching reflect has been judged (a cycle
    carries its original's verdict): one without a verdict or category is our bug."""
    category = _category_or_none(attempt)
    if category is None:
        raise AssertionError(f"attempt {attempt.index} reached reflect without a failure category")
    return category


def _category_or_none(attempt: Attempt) -> Category | None:
    return attempt.verdict.category if attempt.verdict else None
