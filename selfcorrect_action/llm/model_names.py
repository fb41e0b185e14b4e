"""Model names checked before anything is spent: a misspelt provider used to surface as an
infrastructure error (exit 3) after every retry, not as the usage error it is."""

from __future__ import annotations

from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm._litellm import load as load_litellm
from selfcorrect_action.llm.models import ModelTiers, Tier

MODEL_HINT = (
    "write PROVIDER/MODEL as litellm spells it, e.g. openai/gpt-4o-mini, "
    "anthropic/claude-3-5-haiku-latest or ollama/llama3; for any OpenAI-compatible server "
    "given with --api-base, openai/<the name the server knows>"
)


def check_model_names(models: ModelTiers, *, api_base: str | None) -> None:
    """UsageError naming the tier whose model litellm cannot route to a provider."""
    litellm = load_litellm()
    tiers: list[Tier] = ["cheap", "strong", "judge"]
    if models.review:
        tiers.append("review")
    for tier in tiers:
        name = models.for_tier(tier)
        try:
            litellm.get_llm_provider(model=name, api_base=api_base)
        except Exception as exc:  # litellm raises its BadRequestError, or worse, for junk
            raise UsageError(f"model {name!r} (the {tier} tier): litellm cannot tell which "
                             "provider serves it", hint=MODEL_HINT) from exc
