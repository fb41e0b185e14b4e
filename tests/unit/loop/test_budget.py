"""Token and cost guards: checked before a call, sized so the worst case still fits."""

from __future__ import annotations

import pytest

from selfcorrect_action.llm.models import ChatMessage
from selfcorrect_action.loop.budget import (
    MIN_COMPLETION_TOKENS,
    BudgetExhausted,
    TokenBudget,
    add_call,
    allowed_completion,
    estimate_prompt_tokens,
)
from selfcorrect_action.loop.state import LLMCall, Usage


def per_token(rate_in: float, rate_out: float):
    return lambda model, p, c: p * rate_in + c * rate_out


def unpriced(model: str, p: int, c: int) -> None:
    return None


def test_prompt_estimate_errs_on_the_high_side() -> None:
    messages = [ChatMessage(role="user", content="x" * 4000)]
    # 4,000 characters are ~1,000 real tokens; the estimate must not be below that.
    assert estimate_prompt_tokens(messages) >= 1000


def test_completion_is_capped_by_tokens_left() -> None:
    usage = Usage(tokens=9000)
    allowed = allowed_completion(
        usage, TokenBudget(tokens=10_000), model="m", prompt_tokens=500, wanted=4000,
        price=unpriced,
    )
    assert allowed == 500


def test_wanted_is_kept_when_there_is_room() -> None:
    allowed = allowed_completion(
        Usage(), TokenBudget(tokens=100_000), model="m", prompt_tokens=500, wanted=4000,
        price=unpriced,
    )
    assert allowed == 4000


def test_exhausted_when_a_useful_answer_cannot_fit() -> None:
    usage = Usage(tokens=9_500)
    with pytest.raises(BudgetExhausted, match="token budget"):
        allowed_completion(
            usage, TokenBudget(tokens=10_000), model="m",
            prompt_tokens=500 - MIN_COMPLETION_TOKENS + 1, wanted=4000, price=unpriced,
        )


def test_exactly_the_minimum_still_fits() -> None:
    allowed = allowed_completion(
        Usage(tokens=0), TokenBudget(tokens=1000), model="m",
        prompt_tokens=1000 - MIN_COMPLETION_TOKENS, wanted=4000, price=unpriced,
    )
    assert allowed == MIN_COMPLETION_TOKENS


def test_cost_cap_shrinks_the_completion_to_fit() -> None:
    price = per_token(0.0, 0.001)  # $1 per 1,000 completion tokens
    allowed = allowed_completion(
        Usage(cost_usd=0.0), TokenBudget(tokens=10**6, cost_usd=0.5), model="m",
        prompt_tokens=100, wanted=4000, price=price,
    )
    assert allowed == 500
    assert price("m", 100, allowed) <= 0.5


def test_cost_cap_reached_refuses_the_call() -> None:
    with pytest.raises(BudgetExhausted, match="cost cap"):
        allowed_completion(
            Usage(cost_usd=0.49), TokenBudget(tokens=10**6, cost_usd=0.5), model="m",
            prompt_tokens=100, wanted=4000, price=per_token(0.0, 0.001),
        )


def test_unpriced_models_fall_back_to_the_token_cap() -> None:
    allowed = allowed_completion(
        Usage(cost_usd=0.49), TokenBudget(tokens=10**6, cost_usd=0.5), model="m",
        prompt_tokens=100, wanted=4000, price=unpriced,
    )
    assert allowed == 4000


def test_usage_adds_up_calls() -> None:
    call = LLMCall(purpose="generate", model="m", prompt_tokens=10, completion_tokens=5,
                   cost_usd=0.01, cost_known=False, latency_ms=3, replayed=True)
    usage = add_call(add_call(Usage(), call), call)
    assert usage.tokens == 30 and usage.llm_calls == 2
    assert usage.cost_usd == pytest.approx(0.02)
    assert usage.cost_known is False


def test_a_cost_cap_on_an_unpriced_model_is_said_not_to_bind() -> None:
    from selfcorrect_action.llm.models import ModelTiers
    from selfcorrect_action.loop.budget import unpriced_cost_cap

    tiers = ModelTiers(cheap="priced", strong="custom/x", judge="priced")
    price = lambda model, p, c: None if model.startswith("custom/") else 0.01  # noqa: E731
    assert unpriced_cost_cap(0.5, tiers, price, replaying=False) == [
        "budget.cost_usd is set, but no price is known for custom/x: only the token budget "
        "limits its calls"]
    assert unpriced_cost_cap(None, tiers, price, replaying=False) == []
    assert unpriced_cost_cap(0.5, tiers, price, replaying=True) == []


def test_dollar_amounts_below_a_cent_do_not_print_as_zero() -> None:
    from selfcorrect_action.loop.budget import usd

    assert [usd(x) for x in (0, 0.00001, 0.005, 0.5, 1, 12.5, 100_000)] == [
        "$0.00", "$0.00001", "$0.005", "$0.5", "$1.00", "$12.50", "$100,000.00"]


def test_requests_are_sized_to_the_models_known_limits() -> None:
    from selfcorrect_action.loop.budget import PromptTooLong, fit_to_model

    def small(model: str) -> tuple[int | None, int | None]:
        return (8192, 4096) if model == "ollama/llama3" else (None, None)

    assert fit_to_model(6000, model="ollama/llama3", prompt_tokens=1000, limits=small) == 4096
    assert fit_to_model(6000, model="ollama/llama3", prompt_tokens=6000, limits=small) == 2192
    assert fit_to_model(6000, model="local/unknown", prompt_tokens=90_000, limits=small) == 6000
    with pytest.raises(PromptTooLong, match="context window of 8,192 tokens"):
        fit_to_model(6000, model="ollama/llama3", prompt_tokens=8000, limits=small)


def test_the_litellm_table_gives_known_models_their_window() -> None:
    from selfcorrect_action.llm.limits import ModelLimits, model_limits

    assert model_limits("openai/gpt-4o-mini").context_tokens == 128_000
    assert model_limits("openai/a-local-model-nobody-knows") == ModelLimits()
