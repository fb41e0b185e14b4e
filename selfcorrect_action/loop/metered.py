"""An LLM wrapper that enforces the token and cost budget before every call and records
each call's usage, so a step returns exactly what it spent."""

from __future__ import annotations

from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.errors import LLMRequestError
from selfcorrect_action.llm.models import ChatRequest, ChatResponse, ModelTiers
from selfcorrect_action.loop.budget import (
    BudgetExhausted,
    LimitsFn,
    PriceFn,
    PromptTooLong,
    TokenBudget,
    add_call,
    allowed_completion,
    estimate_prompt_tokens,
    fit_to_model,
    no_limits,
)
from selfcorrect_action.loop.state import LLMCall, Usage
from selfcorrect_action.records import evolve

DEFAULT_MAX_TOKENS = {"plan": 2000, "generate": 6000, "repair": 6000, "judge": 1200,
                      "review": 1200}


class MeteredLLM:
    def __init__(
        self, inner: LLM, *, usage: Usage, budget: TokenBudget, tiers: ModelTiers,
        price: PriceFn, ledger: list[LLMCall] | None = None,
        limits: LimitsFn = no_limits,
    ) -> None:
        self._inner = inner
        self._budget = budget
        self._tiers = tiers
        self._price = price
        self._limits = limits
        self.usage = usage
        self.calls: list[LLMCall] = []
        self._ledger = ledger if ledger is not None else []

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Raises BudgetExhausted (before any spending) if even a short answer would not fit."""
        model = self._tiers.for_tier(request.tier) if request.tier else str(request.model)
        prompt_tokens = estimate_prompt_tokens(request.messages)
        try:
            wanted = fit_to_model(request.max_tokens or DEFAULT_MAX_TOKENS[request.purpose],
                                  model=model, prompt_tokens=prompt_tokens,
                                  limits=self._limits)
        except PromptTooLong as exc:
            raise LLMRequestError(str(exc), hint="use a model with a larger context window, "
                                  "or shorten the task and its input files") from exc
        max_tokens = allowed_completion(
            self.usage, self._budget, model=model, prompt_tokens=prompt_tokens,
            wanted=wanted, price=self._price,
        )
        response = self._inner.complete(evolve(request, {"max_tokens": max_tokens}))
        call = LLMCall(
            purpose=request.purpose, model=response.model,
            prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
            cost_usd=response.cost_usd, cost_known=response.cost_known,
            latency_ms=response.latency_ms, replayed=response.replayed,
            resumed=response.resumed,
        )
        self.calls.append(call)
        self._ledger.append(call)
        self.usage = add_call(self.usage, call)
        if self.usage.tokens > self._budget.tokens:
            # The server sent more than max_tokens allowed (or its prompt count was beyond
            # our estimate): what was spent counts, and the run stops here.
            raise BudgetExhausted(
                f"token budget: the {request.purpose} call used {call.prompt_tokens:,} + "
                f"{call.completion_tokens:,} tokens, and {self.usage.tokens:,} of "
                f"{self._budget.tokens:,} are now used (the server may ignore max_tokens)"
            )
        return response
