"""LiteLLMClient against a real HTTP server speaking the OpenAI chat API: usage and cost,
which failures are retried and how long it waits, and what each failure turns into."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from selfcorrect_action.llm import (
    ChatMessage,
    ChatRequest,
    LiteLLMClient,
    LLMAuthError,
    LLMRequestError,
    LLMResponseError,
    LLMUnavailable,
    RetryPolicy,
)
from tests.fakes.openai_server import (
    Delayed,
    EmptyChoices,
    FakeOpenAIServer,
    Hang,
    NonJSON,
    Reply,
    Status,
    Truncated,
)

from .conftest import API_KEY, never_sleep

MakeClient = Callable[..., LiteLLMClient]


def ask(tier: str | None = "cheap", **fields: Any) -> ChatRequest:
    messages = (ChatMessage(role="user", content="Say hi in JSON."),)
    return ChatRequest.model_validate(
        {"purpose": "plan", "tier": tier, "messages": messages, **fields}
    )


def test_reply_carries_usage_and_cost_from_litellm_tables(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    server.script(Reply(content="hi", prompt_tokens=1000, completion_tokens=500))

    response = make_client().complete(ask())

    assert (response.text, response.model) == ("hi", "openai/gpt-4o-mini")
    assert (response.prompt_tokens, response.completion_tokens) == (1000, 500)
    # gpt-4o-mini: $0.15 per 1M prompt tokens, $0.60 per 1M completion tokens
    assert response.cost_usd == pytest.approx(1000 * 0.15e-6 + 500 * 0.60e-6)
    assert response.cost_known and not response.replayed
    assert response.finish_reason == "stop"


def test_unpriced_model_reports_cost_unknown_not_free(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    # litellm prices by the model the server says answered, so that must be unknown too.
    server.script(Reply(model="local-llama"))

    response = make_client().complete(ask(tier=None, model="openai/local-llama"))

    assert response.model == "openai/local-llama"
    assert (response.cost_usd, response.cost_known) == (0.0, False)


def test_request_sends_tier_model_params_and_key(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    server.script(Reply())

    make_client().complete(
        ask(tier="strong", temperature=0.2, max_tokens=64, response_format="json")
    )

    sent = server.requests[0]
    assert sent.body["model"] == "gpt-4o"
    assert sent.body["messages"] == [{"role": "user", "content": "Say hi in JSON."}]
    assert (sent.body["temperature"], sent.body["max_tokens"]) == (0.2, 64)
    assert sent.body["response_format"] == {"type": "json_object"}
    assert sent.headers["authorization"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize(
    "failure",
    [Status(429), Status(500), Status(502), Status(503), Truncated(), NonJSON(), EmptyChoices()],
    ids=lambda failure: type(failure).__name__ + str(getattr(failure, "code", "")),
)
def test_transient_failure_is_retried_then_succeeds(
    failure: object, server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.script(failure, Reply(content="second time"))  # type: ignore[arg-type]

    response = make_client().complete(ask())

    assert response.text == "second time"
    assert len(server.requests) == 2, "exactly one retry: litellm and the SDK must not add any"
    assert len(sleeps) == 1 and 0.0 <= sleeps[0] <= 1.0  # full jitter under the first cap


def test_retry_after_header_sets_the_wait(
    server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.script(Status(429, retry_after="7"), Status(503, retry_after="2"), Reply())

    make_client().complete(ask())

    assert sleeps == [7.0, 2.0]


def test_retry_after_longer_than_allowed_gives_up_at_once(
    server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.script(Status(429, retry_after="3600"))

    with pytest.raises(LLMUnavailable, match="asked to wait 3600 s"):
        make_client(retry=RetryPolicy(max_retry_after_s=60)).complete(ask())

    assert sleeps == []


def test_timeout_is_retried(
    server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.script(Hang(seconds=5), Reply(content="awake"))

    response = make_client(timeout_s=0.5).complete(ask())

    assert response.text == "awake"
    assert len(server.requests) == 2 and len(sleeps) == 1


def test_gives_up_after_max_attempts_with_exponential_caps(
    server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.script(*[Status(503)] * 4)

    with pytest.raises(LLMUnavailable, match="after 4 attempts") as raised:
        make_client().complete(ask())

    assert raised.value.exit_code == 3
    assert "HTTP 503" in str(raised.value) and "hint:" in str(raised.value)
    assert len(server.requests) == 4
    assert len(sleeps) == 3
    assert all(0.0 <= delay <= cap for delay, cap in zip(sleeps, [1.0, 2.0, 4.0], strict=True))


def test_refused_connection_is_an_outage(make_client: MakeClient, server: FakeOpenAIServer) -> None:
    client = make_client(retry=RetryPolicy(max_attempts=2))
    server.stop()

    with pytest.raises(LLMUnavailable, match="connection"):
        client.complete(ask())


@pytest.mark.parametrize("code", [401, 403])
def test_auth_failure_fails_fast_and_never_shows_the_key(
    code: int,
    server: FakeOpenAIServer,
    make_client: MakeClient,
    sleeps: list[float],
    caplog: pytest.LogCaptureFixture,
) -> None:
    server.script(Status(code, message=f"Incorrect API key provided: {API_KEY}"))
    caplog.set_level(logging.DEBUG)

    with pytest.raises(LLMAuthError) as raised:
        make_client().complete(ask())

    assert len(server.requests) == 1 and sleeps == []
    assert f"HTTP {code}" in str(raised.value)
    assert API_KEY not in str(raised.value)
    assert API_KEY not in caplog.text


def test_missing_key_names_the_variable_to_set(server: FakeOpenAIServer) -> None:
    """The provider's own endpoint (no api_base) needs its key; the call is refused before
    anything is sent. (With an api_base, see test_a_local_server_needs_no_provider_key.)"""
    client = LiteLLMClient(sleep=never_sleep)

    with pytest.raises(LLMAuthError) as raised:
        client.complete(ask())

    assert "OPENAI_API_KEY" in (raised.value.hint or "")
    assert server.requests == []


@pytest.mark.parametrize("code", [400, 404, 422])
def test_rejected_request_fails_fast(
    code: int, server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    server.script(Status(code, message="The model `gpt-9` does not exist"))

    with pytest.raises(LLMRequestError, match="does not exist"):
        make_client().complete(ask())

    assert len(server.requests) == 1 and sleeps == []


@pytest.mark.parametrize(
    ("failure", "says"),
    [
        (Truncated(), "closed before the response body was complete"),
        (NonJSON(), "not a JSON chat completion"),
        (EmptyChoices(), "no choices"),
    ],
)
def test_malformed_answers_end_as_response_errors_after_retries(
    failure: object, says: str, server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    server.script(failure, failure)  # type: ignore[arg-type]

    with pytest.raises(LLMResponseError, match=says) as raised:
        make_client(retry=RetryPolicy(max_attempts=2)).complete(ask())

    assert "api_base" in (raised.value.hint or "")
    assert len(server.requests) == 2


def test_repr_hides_the_key(make_client: MakeClient) -> None:
    assert API_KEY not in repr(make_client())


def test_an_answer_longer_than_max_tokens_allows_is_cut_and_counted(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    """Issue 10: a server ignoring max_tokens sent 4.9 MB, all of it accepted."""
    flood = "x = 1\n" * 800_000  # 4.8 MB, while the server claims 7 completion tokens
    server.script(Reply(content=flood, completion_tokens=7))
    response = make_client().complete(ask(max_tokens=100))
    assert len(response.text) == 100 * 16
    assert response.finish_reason == "length"
    assert response.completion_tokens >= len(flood) // 16


def test_an_honest_answer_is_kept_whole(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    server.script(Reply(content="y" * 1500, completion_tokens=400))
    response = make_client().complete(ask(max_tokens=100))
    assert len(response.text) == 1500 and response.completion_tokens == 400


def test_a_slow_answer_is_announced_while_waiting(
    server: FakeOpenAIServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selfcorrect_action import waiting

    monkeypatch.setattr(waiting, "FIRST_NOTICE_S", 0.2)
    monkeypatch.setattr(waiting, "NOTICE_EVERY_S", 0.2)
    notices: list[str] = []
    server.script(Delayed(1.0, Reply(content="late")))
    response = make_client(on_wait=notices.append, timeout_s=5.0).complete(ask())
    assert response.text == "late"
    assert notices and "waiting for the plan answer from openai/gpt-4o-mini" in notices[0]
    assert "gives up after 5 s" in notices[0]


def test_retries_are_announced_to_the_listener(
    server: FakeOpenAIServer, make_client: MakeClient, sleeps: list[float]
) -> None:
    notices: list[str] = []
    server.script(Status(503), Reply(content="ok"))
    assert make_client(on_wait=notices.append).complete(ask()).text == "ok"
    assert len(notices) == 1 and "retrying in" in notices[0] and "HTTP 503" in notices[0]


def test_a_local_server_needs_no_provider_key(
    server: FakeOpenAIServer, make_client: MakeClient
) -> None:
    """Issue 8: with an api_base and no OPENAI_API_KEY, the call used to fail before it was
    sent ("Missing credentials"); local servers want no key."""
    server.script(Reply(content="hi"))
    assert make_client(api_key=None).complete(ask()).text == "hi"
    assert server.requests[0].headers.get("authorization") == "Bearer no-key-needed"


def test_whether_a_key_is_set_is_asked_on_every_call(
    server: FakeOpenAIServer, make_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer was cached per model: once a call had seen OPENAI_API_KEY, a later call
    after it was unset sent no key at all and failed with "Missing credentials"."""
    server.script(Reply(content="one"), Reply(content="two"))
    client = make_client(api_key=None)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    assert client.complete(ask()).text == "one"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert client.complete(ask()).text == "two"
    assert [r.headers.get("authorization") for r in server.requests] == [
        "Bearer sk-from-the-environment", "Bearer no-key-needed"]
