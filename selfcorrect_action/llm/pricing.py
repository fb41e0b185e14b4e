"""Prices from litellm's bundled table, for budget checks made before a call is paid for."""

from __future__ import annotations

from selfcorrect_action.llm._litellm import load as load_litellm


def price_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """What ``model`` charges for these token counts; None when the table does not price it.

    ``model`` is the litellm name a tier maps to (``openai/gpt-4o``). The table is the copy
    litellm ships, not a live fetch (see _litellm.py), so it can lag a provider's price change.
    """
    litellm = load_litellm()
    try:
        prompt_usd, completion_usd = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
    except (litellm.exceptions.ModelNotMappedError, litellm.exceptions.BadRequestError):
        return None
    return float(prompt_usd + completion_usd)
