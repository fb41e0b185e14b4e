"""What every LLM-calling step shares: the metered client for the step, the system message,
and turning a budget refusal or a twice-malformed answer into the run's end."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from selfcorrect_action.llm.errors import LLMStructuredOutputError
from selfcorrect_action.llm.models import ChatMessage
from selfcorrect_action.loop.budget import BudgetExhausted, TokenBudget
from selfcorrect_action.loop.deps import Deps
from selfcorrect_action.loop.metered import MeteredLLM
from selfcorrect_action.loop.state import RunState, Status, end_run
from selfcorrect_action.network_rules import network_words
from selfcorrect_action.templating import render

T = TypeVar("T")


@dataclass(frozen=True)
class RunEnded:
    """The call could not be made or answered usefully: the run ends with this state."""

    state: RunState


def metered(state: RunState, deps: Deps) -> MeteredLLM:
    budget = TokenBudget(tokens=state.budget.tokens, cost_usd=state.budget.cost_usd)
    return MeteredLLM(deps.llm, usage=state.usage, budget=budget, tiers=state.models,
                      price=deps.price, ledger=deps.ledger, limits=deps.limits)


Role = Literal["plan", "code", "judge"]


def system_message(state: RunState, role: Role) -> ChatMessage:
    """The system prompt written for this call's role: a planner answering in JSON, a coder
    answering with one Python file, or a judge. One shared prompt told the planner to
    answer with a Python file and its user message to answer with JSON (issue 9)."""
    contract = state.contract
    return ChatMessage(role="system", content=render(
        f"prompts/system/{role}.j2", **network_words(contract.network),
        timeout_s=contract.timeout_s,
        memory_mb=contract.memory_mb, output_name=state.output_name, kind=state.spec.kind,
    ))


def call_or_end(state: RunState, llm: MeteredLLM, call: Callable[[], T]) -> T | RunEnded:
    """Run `call`; a budget refusal ends the run as exhausted, a structured answer that was
    malformed twice ends it as stopped: the model, not the infrastructure, failed (exit 1,
    not the exit 3 that tells people to go fix their setup). Usage spent so far is kept
    either way."""
    try:
        return call()
    except BudgetExhausted as exc:
        return RunEnded(end_run(state, Status.EXHAUSTED, str(exc), usage=llm.usage))
    except LLMStructuredOutputError as exc:
        return RunEnded(end_run(
            state, Status.STOPPED,
            f"the model's structured answer was malformed twice: {exc.message}",
            usage=llm.usage))
