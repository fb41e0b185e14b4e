"""`selfcorrect check --judge` (issue 36, item 2): a stale spec's committed script, once its
re-verification passes, shown to the judge (layer 3, loop/judge.py, through the loop's own
evaluate step) with the spec's prompt as it is now. verified/ sits below the run path, so
the model it asks through is handed in (`JudgeModels`: runs/check_judge.py opens it from
the run settings, as `selfcorrect run` opens its own); this module holds that seam and
what the check says of the judge's answer and its cost. Pure."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from selfcorrect_action.records import evolve
from selfcorrect_action.redact import redact
from selfcorrect_action.verified.results import CheckResult, JudgeResult

if TYPE_CHECKING:  # the loop's imports cost a check that runs nothing (checker.py)
    from selfcorrect_action.llm.models import ModelTiers
    from selfcorrect_action.loop.deps import Deps
    from selfcorrect_action.loop.state import RunState
    from selfcorrect_action.spec import LoadedSpec


@dataclass(frozen=True)
class JudgeModel:
    """What one stale spec's judge is asked through: the tiers a run of that spec resolves
    (the judge's among them), and the re-verification's deps given the model client, its
    prices and limits (the re-verification's own deps hold a model that must not be called)."""

    models: ModelTiers
    with_model: Callable[[Deps], Deps]


class JudgeModels(Protocol):
    def prepare(self, stale: Sequence[LoadedSpec]) -> None:
        """Before anything is re-verified or spent: refuse what cannot be asked (no model
        configured, a model name nothing routes, a replay made for other tasks) with a
        UsageError, as `selfcorrect run` refuses it."""

    def model_for(self, loaded: LoadedSpec) -> JudgeModel:
        """The model `loaded`'s judge is asked through, opened now."""


@dataclass(frozen=True)
class JudgeTotal:
    specs: int
    calls: int
    tokens: int
    cost_usd: float | None  # None: a model without a known price was asked


def announcement(stale: Sequence[str], *, no_engine: bool = False) -> str:
    """What --judge says before it spends anything."""
    if no_engine:
        return "--judge: no Docker engine, so nothing is re-verified and no model asked"
    if not stale:
        return "--judge: no stale spec, no model asked"
    return (f"--judge asks a model: {len(stale)} stale spec{'' if len(stale) == 1 else 's'} "
            f"({', '.join(stale)}), each once its re-verification passes; tokens are spent")


def said_of(judged: JudgeResult) -> str:
    """The judge's verdict and cost, as a progress line and the summary table say them."""
    cost = f"${judged.cost_usd:.4f}" if judged.cost_usd is not None else "cost unknown"
    return f"the judge: {judged.verdict or 'no answer'}, {judged.tokens:,} tokens, {cost}"


def judge_result(done: RunState, *, secrets: Sequence[str]) -> JudgeResult | None:
    """What the judge said of the re-verified attempt, and its cost; None when it was not
    asked (the sandbox's layers failed first)."""
    attempt = done.last
    if attempt is None:
        return None
    usage = done.usage
    answered = JudgeResult(
        verdict=None, reasoning="", model=done.models.judge, calls=usage.llm_calls,
        tokens=usage.tokens, cost_usd=round(usage.cost_usd, 6) if usage.cost_known else None)
    if attempt.judge is not None:
        judged = attempt.judge
        reasoning = judged.reasoning + (f" (unmet: {'; '.join(judged.unmet_criteria)})"
                                        if judged.unmet_criteria else "")
        return evolve(answered, {"verdict": "pass" if judged.passed else "fail",
                                 "reasoning": redact(reasoning, secrets=secrets)})
    from selfcorrect_action.loop.state import Status  # loaded by the re-verification

    if done.status is Status.EXHAUSTED:  # the budget stopped the judge's call
        return evolve(answered, {"reasoning": redact(done.stop_reason, secrets=secrets)})
    return None


def total(results: Iterable[CheckResult]) -> JudgeTotal | None:
    """What every judge of the check cost together; None when none was asked."""
    asked = [result.judge for result in results if result.judge is not None]
    if not asked:
        return None
    costs = [judge.cost_usd for judge in asked]
    return JudgeTotal(specs=len(asked), calls=sum(judge.calls for judge in asked),
                      tokens=sum(judge.tokens for judge in asked),
                      cost_usd=None if None in costs else round(
                          sum(cost for cost in costs if cost is not None), 6))


def total_said(spent: JudgeTotal | None) -> str:
    """The check's one line of what the judge cost in all."""
    if spent is None:
        return "--judge: no model asked, 0 tokens"
    cost = f"${spent.cost_usd:.4f}" if spent.cost_usd is not None else "cost unknown"
    return (f"--judge: the judge asked of {spent.specs} spec{'' if spent.specs == 1 else 's'}"
            f", {spent.calls} call{'' if spent.calls == 1 else 's'}, {spent.tokens:,} "
            f"tokens, {cost}")
