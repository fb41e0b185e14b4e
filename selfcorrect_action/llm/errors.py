"""What can go wrong when talking to a model, as selfcorrect's own expected-failure types.

litellm, openai and httpx exceptions never get past the llm package: failures.py turns them
into one of these, with what happened and how to fix it. No message ever carries an API key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from selfcorrect_action.errors import SelfcorrectError

if TYPE_CHECKING:
    from selfcorrect_action.llm.structured import Rejection


class LLMError(SelfcorrectError):
    """Base for every failure of the LLM layer."""


class LLMUnavailable(LLMError):
    """The endpoint kept failing (429, 5xx, timeouts, refused connections) past our retries."""

    exit_code = 3


class LLMAuthError(LLMError):
    """The provider rejected the credentials (401/403); retrying cannot help."""

    exit_code = 3


class LLMRequestError(LLMError):
    """The provider refused the request itself (400/404/422: unknown model, prompt too long)."""


class LLMContextWindowError(LLMRequestError):
    """The request did not fit the model's context window (issue 38): a shorter prompt or a
    shorter answer may. `window` is the window the refusal named, when it named one."""

    def __init__(self, message: str, *, hint: str | None = None,
                 window: int | None = None, prompt_tokens: int | None = None) -> None:
        super().__init__(message, hint=hint)
        self.window = window
        self.prompt_tokens = prompt_tokens  # what the server counted in the prompt, if said


class LLMResponseError(LLMError):
    """The endpoint answered, but not with a usable completion (truncated, not JSON, no choices)."""


class LLMStructuredOutputError(LLMResponseError):
    """The model's reply was still not valid JSON for the schema after the one repair-retry.

    ``rejected`` holds each refused reply with the reason, for the reports.
    """

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        rejected: tuple[Rejection, ...] = (),
    ) -> None:
        super().__init__(message, hint=hint)
        self.rejected = rejected


class LLMReplayError(LLMError):
    """A replay file does not fit the run: unreadable, exhausted, or a different call was asked.

    Exit code 2 because, like a bad spec, the fix is to the input (re-record it), not the code.
    """

    exit_code = 2
