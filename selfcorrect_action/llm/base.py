"""The one seam the loop depends on for model calls. Fakes implement this, nothing more."""

from __future__ import annotations

from typing import Protocol

from selfcorrect_action.llm.models import ChatRequest, ChatResponse


class LLM(Protocol):
    def complete(self, request: ChatRequest) -> ChatResponse:
        """Run one chat completion, retried as the implementation sees fit.

        Raises an ``LLMError`` subclass for every failure that is not a bug.
        """
        ...
