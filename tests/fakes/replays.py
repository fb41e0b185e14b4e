"""Recordings written by tests: a scripted model's answers in the format `--replay` plays
back (llm/recording.py), so a test drives `selfcorrect run` itself with chosen answers."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from selfcorrect_action.llm.models import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    Purpose,
    Tier,
)
from selfcorrect_action.llm.recording import RecordedExchange, RecordingHeader


def write_replay(path: Path, prompt: str, answers: list[tuple[Purpose, str]]) -> Path:
    """`answers`: (purpose, text) in the order the run asks; the task's prompt is quoted in
    the first request, as a real recording's is (the run checks that it fits the task).
    The judge is asked on its own tier, everything else on the cheap one (a repair that
    escalates to the strong tier needs a recording of its own)."""
    lines = [RecordingHeader(created_at=datetime.now(UTC)).model_dump_json()]
    for index, (purpose, text) in enumerate(answers):
        tier: Tier = "judge" if purpose == "judge" else "cheap"
        request = ChatRequest(purpose=purpose, tier=tier, messages=(
            ChatMessage(role="user", content=f"# Task\n{prompt}"),))
        response = ChatResponse(text=text, model="scripted", prompt_tokens=400,
                                completion_tokens=max(1, len(text) // 4), cost_usd=0.0,
                                cost_known=True, latency_ms=1)
        lines.append(RecordedExchange(index=index, request=request,
                                      response=response).model_dump_json())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def fenced(code: str) -> str:
    return f"```python\n{code.strip()}\n```\n"
