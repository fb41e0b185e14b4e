from __future__ import annotations

import pytest

from selfcorrect_action.llm import price_usd


def test_priced_model_costs_prompt_plus_completion() -> None:
    # gpt-4o-mini: $0.15 per 1M prompt tokens, $0.60 per 1M completion tokens
    assert price_usd("openai/gpt-4o-mini", 1000, 500) == pytest.approx(0.00045)


@pytest.mark.parametrize("model", ["openai/local-llama", "no-provider-model", "replay/x"])
def test_unpriced_model_is_none_not_free(model: str) -> None:
    assert price_usd(model, 1000, 500) is None
