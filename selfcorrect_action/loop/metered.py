"""An LLM wrapper that enforces the token and cost budget before every call and records
each call's usage, so a step returns exactly what it spent."""

from __future__ import annotations

from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.errors import LLMContextWindowError
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
from selfcorrect_action.loop.windows import ContextWindows
from selfcorrect_action.records import evolve


def _too_long(exc: LLMContextWindowError, prompt_tokens: int) -> PromptTooLong:
    return PromptTooLong(f"{exc.message}; the prompt was about {prompt_tokens:,} tokens",
                         window=exc.window, prompt_tokens=prompt_tokens)


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
        max_tokens = self._max_tokens(request, model, prompt_tokens)
        try:
            response = self._inner.complete(evolve(request, {"max_tokens": max_tokens}))
        except LLMContextWindowError as exc:
            # The server's window is smaller than the run knew (a local server's --n_ctx):
            # learned, and the call made once more sized to it when the prompt still fits.
            if not self._learned(model, exc, prompt_tokens):
                raise _too_long(exc, prompt_tokens) from exc
            max_tokens = self._max_tokens(request, model, prompt_tokens)
            try:
                response = self._inner.complete(evolve(request, {"max_tokens": max_tokens}))
            except LLMContextWindowError as again:
                self._learned(model, again, prompt_tokens)
                raise _too_long(again, prompt_tokens) from again
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

    def _learned(self, model: str, exc: LLMContextWindowError, prompt_tokens: int) -> bool:
        """Whether the refusal taught the window. It is kept in the units of our own
        estimate: a server that counted more tokens in the prompt than we estimated has
        its window scaled down by as much, so the next prompt is sized right."""
        if exc.window is None or not isinstance(self._limits, ContextWindows):
            return False
        counted = exc.prompt_tokens
        scale = prompt_tokens / counted if counted and counted > prompt_tokens else 1.0
        self._limits.learn(model, int(exc.window * scale))
        return True

    def _max_tokens(self, request: ChatRequest, model: str, prompt_tokens: int) -> int:
        """What the answer may take: within the model's window (PromptTooLong when the
        prompt leaves no room) and the budget (BudgetExhausted)."""
        wanted = fit_to_model(request.max_tokens or DEFAULT_MAX_TOKENS[request.purpose],
                              model=model, prompt_tokens=prompt_tokens, limits=self._limits)
        return allowed_completion(self.usage, self._budget, model=model,
                                  prompt_tokens=prompt_tokens, wanted=wanted, price=self._price)
