"""A model's context window as a refusal says it (issue 38): llama-cpp-python and vLLM
answer an over-long request with OpenAI's words ("This model's maximum context length is
4096 tokens, however you requested ..."), llama.cpp's server with its own ("the request
exceeds the available context size (4096 tokens)"), llama-cpp-python's library with
"Requested tokens (5000) exceed context window of 4096"; litellm raises such a 400 as
ContextWindowExceededError. Pure."""

from __future__ import annotations

import re

_WINDOW = (
    re.compile(r"maximum context length is (\d[\d,]*)\s*tokens", re.IGNORECASE),
    re.compile(r"exceeds? (?:the )?(?:available )?context (?:window|size|length) "
               r"(?:of )?\(?(\d[\d,]*)", re.IGNORECASE),
    re.compile(r"context (?:window|length|size) (?:is |of )(\d[\d,]*)", re.IGNORECASE),
    re.compile(r"\bn_ctx\b\D{0,20}(\d[\d,]*)", re.IGNORECASE),
)
_REFUSAL = re.compile(r"context.{0,20}(?:length|window|size)|n_ctx|too many tokens|"
                      r"context_length_exceeded|prompt is too long", re.IGNORECASE)


def is_context_refusal(text: str, *, exception_names: tuple[str, ...] = ()) -> bool:
    """Whether a provider's refusal says the request did not fit the model's window."""
    return "ContextWindowExceededError" in exception_names or bool(_REFUSAL.search(text))


_PROMPT = (re.compile(r"\((\d[\d,]*) in your prompt", re.IGNORECASE),
           re.compile(r"n_prompt_tokens\D{0,5}(\d[\d,]*)", re.IGNORECASE),
           re.compile(r"Requested tokens \((\d[\d,]*)\)", re.IGNORECASE))


def prompt_tokens_in(text: str) -> int | None:
    """How many tokens the server counted in the prompt, where its refusal says."""
    for pattern in _PROMPT:
        found = pattern.search(text)
        if found:
            return int(found.group(1).replace(",", ""))
    return None


def window_in(text: str) -> int | None:
    """The window a refusal names, in tokens; None when it names none."""
    for pattern in _WINDOW:
        found = pattern.search(text)
        if found:
            value = int(found.group(1).replace(",", ""))
            if 64 <= value <= 100_000_000:
                return value
    return None
