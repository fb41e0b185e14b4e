"""A scripted model at the LLM seam (like smolagents' FakeCodeModel): answers in order,
checking each request's purpose, with usage so budgets behave as with a real model."""

from __future__ import annotations

from dataclasses import dataclass, field

from selfcorrect_action.llm.models import ChatRequest, ChatResponse


@dataclass
class ScriptedLLM:
    answers: list[tuple[str, str]]  # (purpose, text)
    prompt_tokens: int = 500
    requests: list[ChatRequest] = field(default_factory=list)

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unscripted {request.purpose} call")
        purpose, text = self.answers.pop(0)
        assert purpose == request.purpose, f"expected a {purpose} call, got {request.purpose}"
        return ChatResponse(
            text=text, model=f"scripted-{request.tier}", prompt_tokens=self.prompt_tokens,
            completion_tokens=max(1, len(text) // 4), cost_usd=0.001, cost_known=True,
            latency_ms=1,
        )
