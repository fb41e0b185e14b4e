"""Record a run against the fake server, stop the server, and play it back through litellm's
``replay`` provider: same responses, flagged as replays, and clear errors when the run asks
for something the recording does not hold."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from selfcorrect_action.llm import (
    LLM,
    ChatMessage,
    ChatRequest,
    ChatResponse,
    LLMReplayError,
    RetryPolicy,
    client_for,
    complete_json,
)
from selfcorrect_action.llm._litellm import load as load_litellm
from selfcorrect_action.llm.replay_provider import ReplayProvider
from tests.fakes.openai_server import FakeOpenAIServer, Reply, Status

from .conftest import API_KEY, TIERS, never_sleep


class Verdict(BaseModel):
    passed: bool


def ask(purpose: str, tier: str) -> ChatRequest:
    message = ChatMessage(role="user", content=f"{purpose} please, in JSON")
    return ChatRequest.model_validate({"purpose": purpose, "tier": tier, "messages": [message]})


class Capturing:
    """Every response `inner` gave, in order."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.responses: list[ChatResponse] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        response = self.inner.complete(request)
        self.responses.append(response)
        return response


def run(llm: LLM) -> list[ChatResponse]:
    """A plan, a generation and a judgement whose first answer needs the JSON repair-retry."""
    capturing = Capturing(llm)
    capturing.complete(ask("plan", "cheap"))
    capturing.complete(ask("generate", "strong"))
    complete_json(capturing, ask("judge", "judge"), Verdict)
    return capturing.responses


def record_run(server: FakeOpenAIServer, path: Path, sleeps: list[float]) -> list[ChatResponse]:
    server.script(
        Reply(content="plan text", prompt_tokens=1200, completion_tokens=300),
        Status(429, retry_after="1"),
        Reply(content="print('hi')", prompt_tokens=2000, completion_tokens=800),
        Reply(content="not json", model="judge-local"),
        Reply(content='{"passed": true}', model="judge-local"),
    )
    live = client_for(
        TIERS, record=path, api_base=server.api_base, api_key=API_KEY, sleep=sleeps.append
    )
    return run(live)


def test_replay_reproduces_the_recorded_run_offline(
    server: FakeOpenAIServer, tmp_path: Path, sleeps: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "run.jsonl"
    recorded = record_run(server, path, sleeps)
    server.stop()
    calls: list[str] = []
    real_completion = ReplayProvider.completion

    def spy(self: ReplayProvider, model: str, *args: object, **kwargs: Any) -> object:
        calls.append(model)
        return real_completion(self, model, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ReplayProvider, "completion", spy)

    replayed = run(client_for(TIERS, replay=path, sleep=never_sleep))

    assert len(recorded) == 4 and all(response.replayed for response in replayed)
    assert [r.model_copy(update={"replayed": False}) for r in replayed] == recorded
    # Every replayed call went through litellm.completion to the replay provider.
    assert calls == [TIERS.cheap, TIERS.strong, TIERS.judge, TIERS.judge]


def test_replay_is_registered_with_litellm() -> None:
    litellm = load_litellm()

    providers = {item["provider"]: item["custom_handler"] for item in litellm.custom_provider_map}

    assert isinstance(providers["replay"], ReplayProvider)


def test_recording_is_versioned_json_lines_written_per_exchange(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    server.script(Reply(content="one"), Reply(content="two"))
    live = client_for(TIERS, record=path, api_base=server.api_base, api_key=API_KEY)

    live.complete(ask("plan", "cheap"))
    after_first = path.read_text().splitlines()
    live.complete(ask("repair", "strong"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]

    assert len(after_first) == 2, "the exchange is on disk before the next call starts"
    assert lines[0]["kind"] == "selfcorrect.llm-recording"
    assert lines[0]["format_version"] == 1
    assert [line["index"] for line in lines[1:]] == [0, 1]
    assert lines[2]["request"]["purpose"] == "repair"
    assert lines[2]["request"]["messages"] == [
        {"role": "user", "content": "repair please, in JSON"}
    ]
    assert lines[2]["response"]["text"] == "two"
    assert {"prompt_tokens", "completion_tokens", "cost_usd", "cost_known"} <= set(
        lines[2]["response"]
    )
    assert API_KEY not in path.read_text()


def test_a_line_torn_by_a_crash_is_ignored(server: FakeOpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    server.script(Reply(content="kept"))
    client_for(TIERS, record=path, api_base=server.api_base, api_key=API_KEY).complete(
        ask("plan", "cheap")
    )
    with path.open("a") as stream:
        stream.write('{"index": 1, "request": {"purp')

    replay = client_for(replay=path)

    assert replay.complete(ask("plan", "cheap")).text == "kept"
    with pytest.raises(LLMReplayError, match="has only 1; its line 3 was cut off") as caught:
        replay.complete(ask("plan", "cheap"))
    assert caught.value.exit_code == 2  # a bad input, like every other replay problem


def recorded_plan(server: FakeOpenAIServer, tmp_path: Path) -> Path:
    path = tmp_path / "plan.jsonl"
    server.script(Reply(content="plan"))
    client_for(TIERS, record=path, api_base=server.api_base, api_key=API_KEY).complete(
        ask("plan", "cheap")
    )
    return path


def test_replay_mismatch_names_the_index_and_both_calls(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    replay = client_for(replay=recorded_plan(server, tmp_path))

    with pytest.raises(LLMReplayError) as raised:
        replay.complete(ask("judge", "judge"))

    message = str(raised.value)
    assert "exchange index 0" in message
    assert "recorded a 'plan' call on tier cheap" in message
    assert "asked for a 'judge' call on tier judge" in message
    assert raised.value.exit_code == 2
    assert "--record" in (raised.value.hint or "")


def test_replay_running_out_names_the_index(server: FakeOpenAIServer, tmp_path: Path) -> None:
    replay = client_for(replay=recorded_plan(server, tmp_path))
    replay.complete(ask("plan", "cheap"))

    with pytest.raises(LLMReplayError, match=r"exchange index 1 \('generate' call on tier strong"):
        replay.complete(ask("generate", "strong"))


def test_two_replays_in_one_process_keep_their_own_place(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = recorded_plan(server, tmp_path)
    first, second = client_for(replay=path), client_for(replay=path)

    assert first.complete(ask("plan", "cheap")).text == "plan"
    assert second.complete(ask("plan", "cheap")).text == "plan"


@pytest.mark.parametrize(
    ("content", "error"),
    [
        ("", "holds no exchanges"),
        (
            '{"kind": "selfcorrect.llm-recording", "format_version": 99, "created_at": '
            '"2026-01-01T00:00:00Z"}\n',
            "format_version 99 is not supported",
        ),
        ('{"hello": 1}\n', r"bad\.jsonl:1: not a selfcorrect LLM recording line \(created_at"),
    ],
)
def test_unusable_replay_files_fail_before_the_run(
    tmp_path: Path, content: str, error: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)

    with pytest.raises(LLMReplayError, match=error):
        client_for(replay=path)


def test_missing_replay_file(tmp_path: Path) -> None:
    with pytest.raises(LLMReplayError, match=r"nope\.jsonl: no such file"):
        client_for(replay=tmp_path / "nope.jsonl", retry=RetryPolicy())


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_replay_path_that_is_not_a_file_fails_at_once(tmp_path: Path, kind: str) -> None:
    path = Path("/dev/zero")
    if kind == "fifo":
        path = tmp_path / "pipe.jsonl"
        os.mkfifo(path)
    with pytest.raises(LLMReplayError, match="is not a regular file"):
        client_for(replay=path, retry=RetryPolicy())


def test_recordings_are_redacted_and_still_replay(server: FakeOpenAIServer, tmp_path: Path) -> None:
    """Recordings get committed: a token in the prompt or the answer is not written."""
    shaped, secret = "ghp_" + "A" * 36, "correct-horse-battery"
    path = tmp_path / "run.jsonl"
    server.script(Reply(content=f"print('{shaped}', '{secret}')"))
    live = client_for(TIERS, record=path, api_base=server.api_base, api_key=API_KEY,
                      secrets=[secret])
    message = ChatMessage(role="user", content=f"use {shaped} and {secret}")
    live.complete(ChatRequest(purpose="plan", tier="cheap", messages=(message,)))
    text = path.read_text()
    assert shaped not in text and secret not in text
    assert "[REDACTED:github-token]" in text and "[REDACTED:secret]" in text

    replayed = client_for(TIERS, replay=path, sleep=never_sleep).complete(
        ChatRequest(purpose="plan", tier="cheap", messages=(message,)))
    assert replayed.text == "print('[REDACTED:github-token]', '[REDACTED:secret]')"
