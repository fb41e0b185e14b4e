"""Token and cost budgets, checked before every LLM call, never after the money is spent.

A call's worst case is its prompt plus its max_tokens, so every request carries a max_tokens
that fits what is left; the prompt is estimated on the safe side (3 characters a token,
where English text and code average closer to 4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from selfcorrect_action.llm.errors import LLMRequestError
from selfcorrect_action.llm.models import ChatMessage, ModelTiers
from selfcorrect_action.loop.state import LLMCall, Usage

CHARS_PER_TOKEN = 3
TOKENS_PER_MESSAGE = 8
# Below this, an answer would be cut off mid-file: not worth paying for.
MIN_COMPLETION_TOKENS = 256

PriceFn = Callable[[str, int, int], float | None]
# (model) -> (context window, longest answer), each None when unknown.
LimitsFn = Callable[[str], tuple[int | None, int | None]]


def no_limits(model: str) -> tuple[int | None, int | None]:
    return None, None


class PromptTooLong(LLMRequestError):
    """The prompt alone leaves no room for a useful answer in the model's context window
    (found before the call, or taught by the model's refusal): a step that can shorten its
    prompt catches it (loop/generate.py); for the others it ends the run as it always did."""

    def __init__(self, message: str, *, window: int | None = None,
                 prompt_tokens: int = 0) -> None:
        super().__init__(message, hint="use a model with a larger context window, or "
                         "shorten the task and its input files")
        self.window = window
        self.prompt_tokens = prompt_tokens


def fit_to_model(wanted: int, *, model: str, prompt_tokens: int, limits: LimitsFn) -> int:
    """`wanted` max_tokens, lowered to what the model can take where its limits are known."""
    window, longest = limits(model)
    allowed = min(wanted, longest) if longest else wanted
    if window:
        room = window - prompt_tokens
        if room < MIN_COMPLETION_TOKENS:
            raise PromptTooLong(
                f"the prompt (about {prompt_tokens:,} tokens) leaves no room for an answer in "
                f"{model}'s context window of {window:,} tokens", window=window,
                prompt_tokens=prompt_tokens)
        allowed = min(allowed, room)
    return allowed


@dataclass(frozen=True)
class TokenBudget:
    tokens: int
    cost_usd: float | None = None


class BudgetExhausted(Exception):
    """The next call could overrun the token budget or the cost cap."""


def estimate_tokens(text: str) -> int:
    """A conservative token count: one token per CHARS_PER_TOKEN characters, rounded up."""
    return -(-len(text) // CHARS_PER_TOKEN)


def estimate_prompt_tokens(messages: Sequence[ChatMessage]) -> int:
    text_tokens = estimate_tokens("".join(message.content for message in messages))
    return text_tokens + TOKENS_PER_MESSAGE * len(messages)


def allowed_completion(
    usage: Usage,
    budget: TokenBudget,
    *,
    model: str,
    prompt_tokens: int,
    wanted: int,
    price: PriceFn,
) -> int:
    """The max_tokens to send with the next call, or BudgetExhausted if even a useful
    minimum would not fit in the tokens or the cost cap left."""
    left = budget.tokens - usage.tokens - prompt_tokens
    allowed = min(wanted, left)
    if allowed < MIN_COMPLETION_TOKENS:
        raise BudgetExhausted(
            f"token budget: {usage.tokens:,} of {budget.tokens:,} used; the next call needs "
            f"about {prompt_tokens + MIN_COMPLETION_TOKENS:,} more"
        )
    if budget.cost_usd is not None:
        allowed = _fit_cost(usage, budget.cost_usd, model, prompt_tokens, allowed, price)
    return allowed


def _fit_cost(
    usage: Usage, cap: float, model: str, prompt_tokens: int, allowed: int, price: PriceFn
) -> int:
    worst = price(model, prompt_tokens, allowed)
    if worst is None:
        return allowed  # unpriced model (or a replay without prices): the token cap rules
    left = cap - usage.cost_usd
    if worst <= left:
        return allowed
    minimum = price(model, prompt_tokens, MIN_COMPLETION_TOKENS) or 0.0
    if minimum > left:
        raise BudgetExhausted(
            f"cost cap: ${usage.cost_usd:.4f} of {usd(cap)} spent; the next call could cost "
            f"${minimum:.4f} or more"
        )
    # Shrink the completion allowance until its worst case fits the money left.
    low, high = MIN_COMPLETION_TOKENS, allowed
    while low < high:
        middle = (low + high + 1) // 2
        if (price(model, prompt_tokens, middle) or 0.0) <= left:
            low = middle
        else:
            high = middle - 1
    return low


def add_call(usage: Usage, call: LLMCall) -> Usage:
    return usage.model_copy(
        update={
            "tokens": usage.tokens + call.prompt_tokens + call.completion_tokens,
            "cost_usd": usage.cost_usd + call.cost_usd,
            "cost_known": usage.cost_known and call.cost_known,
            "llm_calls": usage.llm_calls + 1,
        }
    )


def unpriced_cost_cap(cap: float | None, models: ModelTiers, price: PriceFn,
                      *, replaying: bool) -> list[str]:
    """A cost cap only binds models with a known price: say so for the others, instead of
    letting the cap look enforced. (A replay's costs are the recorded ones.)"""
    if cap is None or replaying:
        return []
    unpriced = sorted({m for m in (models.cheap, models.strong, models.judge,
                                   models.for_tier("review"))
                       if price(m, 1000, 1000) is None})
    return [f"budget.cost_usd is set, but no price is known for {model}: only the token "
            "budget limits its calls" for model in unpriced]


def usd(amount: float) -> str:
    """Dollars as a person reads them: cents from a dollar up, and enough digits below one
    that a cap of $0.001 does not print as $0.00."""
    if amount >= 1 or amount == 0:
        return f"${amount:,.2f}"
    return "$" + f"{amount:.8f}".rstrip("0")
