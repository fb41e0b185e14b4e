"""The ``replay`` provider, registered with litellm so replays go through litellm.completion
exactly like real calls (argument handling, response objects, the exception wrapping).

litellm 1.110 dispatches a ``<provider>/<model>`` name to a ``CustomLLM`` listed in
``litellm.custom_provider_map`` (main.py ``_complete_custom_providers``; ``custom_llm_setup``
adds the provider name on each call). It passes our ``litellm_metadata`` through in
``litellm_params``; whatever we put in ``model_response._hidden_params`` survives to the caller.
Only the synchronous, non-streaming ``completion`` is implemented: that is all the client uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import litellm
from litellm.llms.custom_llm import CustomLLM
from litellm.types.utils import ModelResponse, Usage

from selfcorrect_action.llm.recording import RecordedExchange
from selfcorrect_action.llm.replay import REPLAY_HIDDEN_KEY, session_for

PROVIDER = "replay"


class ReplayProvider(CustomLLM):
    def completion(  # litellm calls this with every one of these keywords
        self,
        model: str,
        messages: list[Any],
        api_base: str,
        custom_prompt_dict: dict[str, Any],
        model_response: ModelResponse,
        print_verbose: Callable[..., Any],
        encoding: Any,
        api_key: Any,
        logging_obj: Any,
        optional_params: dict[str, Any],
        acompletion: Any = None,
        litellm_params: dict[str, Any] | None = None,
        logger_fn: Any = None,
        headers: dict[str, Any] | None = None,
        timeout: float | httpx.Timeout | None = None,
        client: Any = None,
    ) -> ModelResponse:
        params = litellm_params or {}
        metadata = params.get("litellm_metadata") or params.get("metadata")
        session, ask = session_for(metadata)
        return _fill(model_response, session.take(ask))


def _fill(model_response: ModelResponse, exchange: RecordedExchange) -> ModelResponse:
    recorded = exchange.response
    choice = model_response.choices[0]
    choice.message.content = recorded.text
    # Recorded from litellm's own normalised values, so it is one of its Literal strings.
    choice.finish_reason = recorded.finish_reason or "stop"  # type: ignore[assignment]
    model_response.model = recorded.model
    model_response.usage = Usage(  # type: ignore[attr-defined]
        prompt_tokens=recorded.prompt_tokens,
        completion_tokens=recorded.completion_tokens,
        total_tokens=recorded.total_tokens,
    )
    model_response._hidden_params[REPLAY_HIDDEN_KEY] = recorded.model_dump(
        exclude={"text", "replayed"}
    )
    return model_response


def register() -> None:
    """Add the provider to ``litellm.custom_provider_map`` once, keeping any others there."""
    if any(item["provider"] == PROVIDER for item in litellm.custom_provider_map):
        return
    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": PROVIDER, "custom_handler": ReplayProvider()},
    ]
