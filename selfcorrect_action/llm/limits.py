"""What litellm's bundled model table knows of a model's limits: its context window and
its longest answer. Requests are sized to them (issue 9): a prompt sized for a 128k model
overflowed a small local model's window, and a max_tokens above a model's own limit is a
400 from some providers."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from selfcorrect_action.llm._litellm import load as load_litellm


@dataclass(frozen=True)
class ModelLimits:
    context_tokens: int | None = None  # prompt and answer together
    answer_tokens: int | None = None


@functools.cache
def model_limits(model: str) -> ModelLimits:
    """The table's figures, or unknowns (local servers, new models): nothing is assumed."""
    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:  # ModelNotMappedError, or litellm's other ways of not knowing
        return ModelLimits()
    return ModelLimits(_positive(info.get("max_input_tokens")),
                       _positive(info.get("max_output_tokens")))


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


@functools.cache
def supports_images(model: str) -> bool:
    """litellm's word on whether the model accepts image parts (its vision flag)."""
    try:
        return bool(load_litellm().supports_vision(model=model))
    except Exception:  # unknown model: it gets text only
        return False
