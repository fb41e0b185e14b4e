"""Small pieces every LLM-calling step shares: the metered client for this step, the system
message, and turning a budget refusal or a twice-malformed answer into the run's end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage
from selfcorrect_action.loop.budget import BudgetExhausted, TokenBudget
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.templating import render

T = TypeVar("T")


@dataclass(frozen=True)
class StepOutcome(Generic[T]):
    value: T
    failed: RunState | None = None  # set when the run ends here instead


def metered(state: RunState, deps: Deps) -> MeteredLLM:
    budget = TokenBudget(tokens=state.budget.tokens, cost_usd=state.budget.cost_usd)
    return MeteredLLM(deps.llm, usage=state.usage, budget=budget, tiers=state.models,
                      price=deps.price)


def system_message(state: RunState) -> ChatMessage:
    contract = state.contract
    return ChatMessage(role="system", content=render(
        "prompts/system.j2", network=contract.network, timeout_s=contract.timeout_s,
        memory_mb=contract.memory_mb, output_name=state.output_name,
    ))


def settle_llm_step(state: RunState, llm: MeteredLLM, call: Callable[[], T]) -> StepOutcome[T]:
    """Run `call`; a budget refusal ends the run as exhausted, a structured answer that was
    malformed twice ends it as stopped: the model, not the infrastructure, failed (exit 1,
    not the exit 3 that tells people to go fix their setup). Usage spent so far is kept
    either way."""
    try:
        return StepOutcome(call())
    except BudgetExhausted as exc:
        ended = state.model_copy(update={"status": Status.EXHAUSTED, "stop_reason": str(exc),
                                         "usage": llm.usage})
    except LLMStructuredOutputError as exc:
        ended = state.model_copy(update={
            "status": Status.STOPPED, "usage": llm.usage,
            "stop_reason": f"the model's structured answer was malformed twice: {exc.message}",
        })
    return StepOutcome(None, failed=ended)  # type: ignore[arg-type]
