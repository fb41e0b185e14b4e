"""``LiteLLMClient``: the real ``LLM``, on ``litellm.completion``.

It maps tiers to model names, retries what can succeed later (see failures.py for which), and
reports usage and cost per call. litellm's and the OpenAI SDK's own retries are switched off on
every call (``num_retries=0, max_retries=0``): otherwise a 429 would be retried up to 3 times
inside each of our attempts, with sleeps we neither see nor control.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from selfcorrect_action.choices import StructuredOutput
from selfcorrect_action.llm._litellm import load as load_litellm
from selfcorrect_action.llm.failures import (
    Failure,
    MalformedCompletion,
    classify,
    own_error_in,
    to_error,
)
from selfcorrect_action.llm.formats import response_format, wire_messages
from selfcorrect_action.llm.models import (
    ChatRequest,
    ChatResponse,
    ModelTiers,
)
from selfcorrect_action.llm.replay import REPLAY_HIDDEN_KEY, ReplaySession
from selfcorrect_action.llm.retry import RetryPolicy, backoff_delay
from selfcorrect_action.waiting import Notify, announced_wait

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 180.0
# A server that ignores max_tokens once sent a 4.9 MB answer (issue 10). No tokenizer writes
# more than this many characters per token, so text past max_tokens x this was never
# allowed: it is cut there, and the call is counted as at least what it really sent.
MAX_CHARS_PER_TOKEN = 16
UNCAPPED_MAX_TOKENS = 16_384  # the cap for a request that set no max_tokens


class LiteLLMClient:
    def __init__(
        self,
        tiers: ModelTiers | None = None,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
        replay: ReplaySession | None = None,
        on_wait: Notify | None = None,
        structured: StructuredOutput = "auto",
    ) -> None:
        self.tiers = tiers or ModelTiers()
        self.api_base = api_base
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._clock = clock
        self._rng = rng or random.Random()
        self._replay = replay
        # Told about long waits and retries, for progress lines (never decides anything).
        self._on_wait = on_wait
        self.structured = structured
        # Models whose server answered a schema with a 4xx: they get plain JSON mode after.
        self._schema_refused: set[str] = set()

    def __repr__(self) -> str:
        # Spelled out so the API key can never reach a log through repr().
        return f"LiteLLMClient(tiers={self.tiers!r}, api_base={self.api_base!r})"

    def model_for(self, request: ChatRequest) -> str:
        model = request.model or self.tiers.for_tier(request.tier or "strong")
        return f"replay/{model}" if self._replay is not None else model

    def complete(self, request: ChatRequest) -> ChatResponse:
        model = self.model_for(request)
        attempt = 1
        while True:
            try:
                return self._attempt(request, model)
            except Exception as exc:  # litellm raises from many hierarchies; classify sorts them
                failure = self._failure_or_reraise(exc)
                if self._schema_was_refused(failure, request, model):
                    continue  # the same attempt again, in plain JSON mode
                if self._give_up(failure, attempt):
                    raise to_error(
                        failure, model=model, attempts=attempt, explicit_key=bool(self._api_key)
                    ) from exc
                self._pause(failure, attempt, request, model)
            attempt += 1

    def _attempt(self, request: ChatRequest, model: str) -> ChatResponse:
        litellm = load_litellm()  # before the clock starts: the first import takes seconds
        started = self._clock()
        what = f"the {request.purpose} answer from {model}"
        with announced_wait(None if self._replay else self._on_wait, what,
                            timeout_s=self.timeout_s):
            if request.mode == "completion":
                response = litellm.text_completion(**self._text_kwargs(request, model))
            else:
                response = litellm.completion(**self._call_kwargs(request, model))
        latency_ms = round((self._clock() - started) * 1000)
        return chat_response(response, model=model, latency_ms=latency_ms,
                             max_tokens=request.max_tokens)

    def _text_kwargs(self, request: ChatRequest, model: str) -> dict[str, Any]:
        """A completion request: the text to continue, through litellm.text_completion (an
        OpenAI-compatible server's /v1/completions for `openai/<name>`; a replay, or a
        provider without one, gets it as a chat message)."""
        # Key and endpoint as for the chat call: litellm's own key lookup for the text
        # provider asks for TEXT-COMPLETION-OPENAI_API_KEY, which no one sets.
        kwargs = self._call_kwargs(request, model)
        kwargs["model"] = text_completion_model(model)
        del kwargs["messages"]
        kwargs.pop("response_format", None)
        kwargs.pop("drop_params", None)
        kwargs["prompt"] = request.completion_prompt
        if request.stop:
            kwargs["stop"] = list(request.stop)
        return kwargs

    def _call_kwargs(self, request: ChatRequest, model: str) -> dict[str, Any]:
        structured = "json-object" if model in self._schema_refused else self.structured
        kwargs = completion_kwargs(request, model, timeout_s=self.timeout_s,
                                   structured=structured,
                                   enforces_schema=self._enforces_schema(model))
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif self.api_base and self._replay is None and not _has_key(model):
            # Local servers (llama.cpp, vLLM, Ollama, LM Studio) want no key, but the OpenAI
            # SDK under litellm refuses to send a request without one: a made-up
            # OPENAI_API_KEY used to be needed before anything ran (issue 8).
            kwargs["api_key"] = NO_KEY
        if self._replay is not None:
            kwargs["litellm_metadata"] = self._replay.tag_for(request)
        return kwargs

    def _schema_was_refused(self, failure: Failure, request: ChatRequest, model: str) -> bool:
        """A server that cannot take our schema (400/422: "json_schema not supported", a
        grammar it cannot compile) gets the call again without it, once per model."""
        sent_schema = (request.json_schema is not None and self.structured != "json-object"
                       and model not in self._schema_refused)
        if failure.kind != "rejected" or not sent_schema:
            return False
        self._schema_refused.add(model)
        message = (f"{model} refused the JSON schema for the {request.purpose} answer "
                   f"({failure.describe()}); asking in plain JSON mode from now on")
        if self._on_wait is not None:
            self._on_wait(message)
        else:
            log.warning("%s", message)
        return True

    def _enforces_schema(self, model: str) -> bool:
        if self._replay is not None:
            return False
        return _supports_schema(model)

    def _failure_or_reraise(self, exc: Exception) -> Failure:
        own = own_error_in(exc)
        if own is not None and own is not exc:
            raise own from exc
        failure = classify(exc, secrets=(self._api_key or "",))
        if failure is None:  # not a model-call failure: a bug, ours or litellm's
            raise exc
        if _waits_too_long(failure, self.retry):
            wait, cap = failure.retry_after_s, self.retry.max_retry_after_s
            detail = f"{failure.detail}; it asked to wait {wait:.0f} s, over our {cap:.0f} s limit"
            return replace(failure, detail=detail)
        return failure

    def _give_up(self, failure: Failure, attempt: int) -> bool:
        return (
            not failure.retryable
            or attempt >= self.retry.max_attempts
            or _waits_too_long(failure, self.retry)
        )

    def _pause(self, failure: Failure, attempt: int, request: ChatRequest, model: str) -> None:
        delay = failure.retry_after_s
        if delay is None:
            delay = backoff_delay(self.retry, attempt, self._rng)
        message = (
            f"LLM call ({request.purpose}, {model}) failed, {failure.kind.replace('_', ' ')} "
            f"({failure.describe()}); retrying in {delay:.1f} s (attempt {attempt + 1} of "
            f"{self.retry.max_attempts})"
        )
        if self._on_wait is not None:
            self._on_wait(message)
        else:
            log.warning("%s", message)
        self._sleep(delay)


NO_KEY = "no-key-needed"


@functools.cache
def _supports_schema(model: str) -> bool:
    """litellm's word on whether the provider enforces a JSON Schema for this model."""
    try:
        return bool(load_litellm().supports_response_schema(model=model))
    except Exception:  # an unknown model: litellm cannot say, so we do not assume
        return False


def _has_key(model: str) -> bool:
    """Whether the environment holds the key litellm looks for for `model`, asked on every
    call: the environment can change within a process (a cached answer once sent no key
    after OPENAI_API_KEY was unset)."""
    report = load_litellm().validate_environment(model=model)
    return bool(report.get("keys_in_environment"))


def _waits_too_long(failure: Failure, policy: RetryPolicy) -> bool:
    return failure.retry_after_s is not None and failure.retry_after_s > policy.max_retry_after_s


def completion_kwargs(request: ChatRequest, model: str, *, timeout_s: float,
                      structured: StructuredOutput = "auto",
                      enforces_schema: bool = False) -> dict[str, Any]:
    """The ``litellm.completion`` arguments for ``request``, minus endpoint and credentials."""
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": wire_messages(request.messages),
        "timeout": timeout_s,
        "num_retries": 0,
        "max_retries": 0,
        # A provider that lacks a parameter (temperature on reasoning models, JSON mode on some
        # local servers) gets the call without it instead of a 400.
        "drop_params": True,
    }
    if request.temperature is not None:
        kwargs["temperature"] = request.temperature
    if request.max_tokens is not None:
        kwargs["max_tokens"] = request.max_tokens
    wanted = response_format(request, structured, enforces_schema=enforces_schema)
    if wanted is not None:
        kwargs["response_format"] = wanted
    return kwargs


def text_completion_model(model: str) -> str:
    """litellm's name for the text-completion endpoint of an OpenAI-compatible server."""
    if model.startswith("openai/"):
        return "text-completion-openai/" + model.removeprefix("openai/")
    return model


def chat_response(response: Any, *, model: str, latency_ms: int,
                  max_tokens: int | None = None) -> ChatResponse:
    """Our ``ChatResponse`` from litellm's ``ModelResponse``; MalformedCompletion if empty.
    Text beyond what ``max_tokens`` allows is cut off (finish_reason "length")."""
    if not response.choices:
        raise MalformedCompletion("the completion had no choices")
    choice = response.choices[0]
    message = getattr(choice, "message", None)  # a text completion's choice has `text`
    text = message.content if message is not None else getattr(choice, "text", None)
    if text is None:
        raise MalformedCompletion("the completion's message had no text content")
    hidden = getattr(response, "_hidden_params", None) or {}
    usage = getattr(response, "usage", None)
    reported = getattr(usage, "completion_tokens", 0) or 0
    cap = (max_tokens or UNCAPPED_MAX_TOKENS) * MAX_CHARS_PER_TOKEN
    fields: dict[str, Any] = {
        "text": text[:cap],
        "model": model,
        "prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
        "completion_tokens": max(reported, len(text) // MAX_CHARS_PER_TOKEN)
        if len(text) > cap else reported,
        "finish_reason": "length" if len(text) > cap else choice.finish_reason,
        "latency_ms": latency_ms,
        **_cost_fields(hidden.get("response_cost")),
    }
    if (recorded := hidden.get(REPLAY_HIDDEN_KEY)) is not None:
        # Replays report what the recording says, so budgets and reports come out identical.
        fields.update(recorded, replayed=True)
    return ChatResponse(**fields)


def _cost_fields(cost: object) -> dict[str, Any]:
    # litellm prices the call from its bundled table; unpriced models (local servers, new
    # releases) come back as None, which we report as unknown rather than free.
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return {"cost_usd": float(cost), "cost_known": True}
    return {"cost_usd": 0.0, "cost_known": False}
