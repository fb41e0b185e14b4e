"""Turn whatever litellm (and the openai and httpx libraries under it) raises into a
``Failure`` we can reason about, then into one of our own errors.

Which failures are retried:
- 429, 408, 409, 5xx, timeouts and refused or reset connections: the endpoint is overloaded
  or restarting, so a later attempt can succeed. After the last attempt: ``LLMUnavailable``.
- Malformed answers (a body cut off mid-way, a non-JSON body, a completion with no choices):
  retried too, since in practice they come from a proxy or gateway in the middle of a restart.
  But after the last attempt they raise ``LLMResponseError``, not ``LLMUnavailable``, because
  the endpoint did answer and the fix is usually its configuration (``api_base``).
- 401/403 and a missing API key (``LLMAuthError``), other 4xx such as an unknown model
  (``LLMRequestError``): fail at once, since the same request would fail the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.llm._litellm import load as load_litellm
from selfcorrect_action.llm.context_window import (
    is_context_refusal,
    prompt_tokens_in,
    window_in,
)
from selfcorrect_action.llm.errors import (
    LLMAuthError,
    LLMContextWindowError,
    LLMError,
    LLMRequestError,
    LLMResponseError,
    LLMUnavailable,
)
from selfcorrect_action.llm.retry import retry_after_seconds

FailureKind = Literal[
    "rate_limited",
    "server_error",
    "timeout",
    "connection",
    "malformed",
    "auth",
    "rejected",
    "context_window",
    "misconfigured",
]
_RETRYABLE: frozenset[FailureKind] = frozenset(
    {"rate_limited", "server_error", "timeout", "connection", "malformed"}
)
# litellm's words when a 200 body is not a completion (llms/openai/openai.py); a test against
# the fake server's NonJSON behaviour notices if a litellm upgrade rewords it.
_NON_JSON_MARKER = "Empty or invalid response from LLM endpoint"
_KEY_LIKE = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}")
# "litellm.RateLimitError: RateLimitError: OpenAIException - <the provider's words>"
_LITELLM_PREFIX = re.compile(r"^(litellm\.\w+: )?(\w+: )?(\w+Exception - )?")
_DETAIL_LIMIT = 300
_CREDENTIALS = re.compile(r"credential|api[_ ]key", re.IGNORECASE)


class MalformedCompletion(Exception):
    """Raised by the client itself for a 200 that litellm accepted but holds no answer."""


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    detail: str
    status: int | None = None
    retry_after_s: float | None = None

    @property
    def retryable(self) -> bool:
        return self.kind in _RETRYABLE

    def describe(self) -> str:
        return f"HTTP {self.status}: {self.detail}" if self.status else self.detail


def own_error_in(exc: BaseException) -> SelfcorrectError | None:
    """Our own error (e.g. a replay mismatch) that litellm wrapped on its way out, if any."""
    return next((e for e in _chain(exc) if isinstance(e, SelfcorrectError)), None)


def classify(exc: BaseException, *, secrets: tuple[str, ...] = ()) -> Failure | None:
    """The failure behind ``exc``, or None when it is not an LLM call failure (a bug)."""
    if isinstance(exc, MalformedCompletion):
        return Failure("malformed", str(exc))
    import httpx
    import openai

    if not isinstance(exc, openai.OpenAIError):
        return None
    detail = _detail(exc, secrets)
    chain = list(_chain(exc))
    if any(type(e) is openai.OpenAIError for e in chain):
        # The SDK's bare base class is only raised client-side (no API key, bad endpoint);
        # litellm re-raises it as a 500, which must not be retried as an outage.
        return Failure("misconfigured", detail)
    if any(isinstance(e, httpx.TimeoutException | openai.APITimeoutError) for e in chain):
        return Failure("timeout", detail)
    if any(isinstance(e, httpx.RemoteProtocolError) for e in chain):
        return Failure("malformed", "the connection closed before the response body was complete")
    if _NON_JSON_MARKER in str(exc):
        return Failure("malformed", "the response body was not a JSON chat completion")
    status = getattr(exc, "status_code", None)
    if status in (400, 413, 422) and is_context_refusal(
            str(exc), exception_names=tuple(type(e).__name__ for e in chain)):
        return Failure("context_window", detail, status)
    if any(isinstance(e, httpx.TransportError | openai.APIConnectionError) for e in chain):
        return Failure("connection", detail)
    return _by_status(exc, detail)


def _by_status(exc: BaseException, detail: str) -> Failure:
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    if status in (401, 403):
        return Failure("auth", detail, status)
    if status == 429:
        return Failure("rate_limited", detail, status, _retry_after(exc))
    if status == 408:
        return Failure("timeout", detail, status)
    if status is None or status == 409 or status >= 500:
        return Failure("server_error", detail, status, _retry_after(exc))
    return Failure("rejected", detail, status)


def to_error(failure: Failure, *, model: str, attempts: int, explicit_key: bool) -> LLMError:
    """Our exception for a failure we are not retrying (any more)."""
    what = failure.describe()
    if failure.kind == "auth":
        return LLMAuthError(
            f"the provider rejected the credentials for model {model!r} ({what})",
            hint=_auth_hint(model, explicit_key=explicit_key),
        )
    if failure.kind == "misconfigured":
        return _misconfigured(failure, model, explicit_key=explicit_key)
    if failure.kind == "context_window":
        window = window_in(failure.detail)
        said = f" of {window:,} tokens" if window else ""
        return LLMContextWindowError(
            f"model {model!r} refused a request longer than its context window{said} "
            f"({what})",
            hint="the run shortens its prompts to fit; a model (or a server setting such as "
            "llama.cpp's --n_ctx) with a larger window avoids it", window=window,
            prompt_tokens=prompt_tokens_in(failure.detail))
    if failure.kind == "rejected":
        return LLMRequestError(
            f"the provider refused the request to model {model!r} ({what})",
            hint="check the model name (litellm spelling, e.g. openai/gpt-4o-mini) and that "
            "the prompt fits its context window",
        )
    tries = f"after {attempts} attempt{'s' if attempts != 1 else ''}"
    if failure.kind == "malformed":
        return LLMResponseError(
            f"model {model!r} did not return a usable completion {tries}: {what}",
            hint="check that api_base points at an OpenAI-compatible /v1 endpoint and that no "
            "proxy in between rewrites or cuts responses",
        )
    return LLMUnavailable(
        f"model {model!r} is unavailable {tries} ({failure.kind.replace('_', ' ')}; {what})",
        hint="this is usually an outage or a rate limit: retry later, allow more retries or a "
        "longer wait (--llm-retries / --llm-timeout, SELFCORRECT_LLM_RETRIES / "
        "SELFCORRECT_LLM_TIMEOUT_S, or the action's llm-retries / llm-timeout inputs), or "
        "check api_base and the network",
    )


def _misconfigured(failure: Failure, model: str, *, explicit_key: bool) -> LLMError:
    if _CREDENTIALS.search(failure.detail):
        return LLMAuthError(
            f"no usable API key for model {model!r} ({failure.detail})",
            hint=_auth_hint(model, explicit_key=explicit_key),
        )
    return LLMRequestError(
        f"the call to model {model!r} could not be set up ({failure.detail})",
        hint="check the model name and api_base",
    )


def _auth_hint(model: str, *, explicit_key: bool) -> str:
    if explicit_key:
        return f"the API key passed to selfcorrect was refused; check it is valid for {model}"
    missing = load_litellm().validate_environment(model=model).get("missing_keys") or []
    if missing:
        return f"set {' or '.join(missing)} in the environment (or pass an API key)"
    return f"the API key found in the environment was refused; check it is valid for {model}"


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None) or getattr(exc, "litellm_response_headers", None)
    return retry_after_seconds(headers) if isinstance(headers, Mapping) else None


def _detail(exc: BaseException, secrets: tuple[str, ...]) -> str:
    text = str(getattr(exc, "message", None) or exc).strip()
    text = _LITELLM_PREFIX.sub("", text.split("\n", 1)[0])
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = _KEY_LIKE.sub("***", text)
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
