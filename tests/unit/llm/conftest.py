"""Fixtures for the LLM layer: a real OpenAI-shaped server on 127.0.0.1, a sleeper that
records instead of sleeping, and a guard that fails any test in which something (litellm
fetching its price table, say) tries to reach a host other than this machine."""

from __future__ import annotations

import random
import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from selfcorrect_action.llm import LiteLLMClient, ModelTiers, RetryPolicy
from tests.fakes.openai_server import FakeOpenAIServer

API_KEY = "sk-test-0123456789abcdef"
TIERS = ModelTiers(cheap="openai/gpt-4o-mini", strong="openai/gpt-4o", judge="openai/gpt-4o-mini")


def never_sleep(seconds: float) -> None:
    """A client's `sleep` where the test expects no retry wait at all."""
    pytest.fail(f"the client slept {seconds} s")
_LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost"}
_PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    reached: list[object] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[0] not in _LOCAL_HOSTS:
            reached.append(address)
            raise OSError(f"test tried to connect to {address}")
        real_connect(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in _LOCAL_HOSTS and host is not None:
            reached.append(host)
            raise socket.gaierror(f"test tried to resolve {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    for name in _PROVIDER_KEYS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield
    assert reached == [], f"the test tried to reach the network: {reached}"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as running:
        yield running
    assert running.overruns == 0, "the client made more requests than the test scripted"


@pytest.fixture
def sleeps() -> list[float]:
    """Every backoff the client asked for, in seconds; nothing really sleeps."""
    return []


@pytest.fixture
def make_client(server: FakeOpenAIServer, sleeps: list[float]) -> Callable[..., LiteLLMClient]:
    def make(**overrides: Any) -> LiteLLMClient:
        options: dict[str, Any] = {
            "api_base": server.api_base,
            "api_key": API_KEY,
            "timeout_s": 5.0,
            "retry": RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=8.0),
            "sleep": sleeps.append,
            "rng": random.Random(7),
            **overrides,
        }
        return LiteLLMClient(TIERS, **options)

    return make
