"""LLM access: one small interface (``LLM``), a litellm-backed client with retries and cost
accounting, strict JSON answers, and record/replay through a litellm custom provider.

Importing this package does not import litellm (about 8 s); the first model call does.
"""

from __future__ import annotations

# First: it sets litellm's offline switches before anything can import litellm.
from selfcorrect_action.llm import _litellm  # noqa: F401  # isort: skip
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.client import LiteLLMClient
from selfcorrect_action.llm.errors import (
    LLMAuthError,
    LLMError,
    LLMReplayError,
    LLMRequestError,
    LLMResponseError,
    LLMStructuredOutputError,
    LLMUnavailable,
)
from selfcorrect_action.llm.factory import client_for
from selfcorrect_action.llm.models import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    ModelTiers,
    Purpose,
    Tier,
)
from selfcorrect_action.llm.pricing import price_usd
from selfcorrect_action.llm.recording import Recorder, RecordingLLM, read_recording
from selfcorrect_action.llm.retry import RetryPolicy
from selfcorrect_action.llm.structured import JSONAnswer, complete_json

__all__ = [
    "LLM",
    "ChatMessage",
    "ChatRequest",
    "ChatResponse",
    "JSONAnswer",
    "LLMAuthError",
    "LLMError",
    "LLMReplayError",
    "LLMRequestError",
    "LLMResponseError",
    "LLMStructuredOutputError",
    "LLMUnavailable",
    "LiteLLMClient",
    "ModelTiers",
    "Purpose",
    "Recorder",
    "RecordingLLM",
    "RetryPolicy",
    "Tier",
    "client_for",
    "complete_json",
    "price_usd",
    "read_recording",
]
