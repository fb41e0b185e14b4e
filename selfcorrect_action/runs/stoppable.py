"""What a run blocks in, made to give way to a cancel from another thread (an MCP client's,
a Python API caller's), so the run stops in seconds rather than after the script's timeout
or the model call's.

- The sandbox: the cancel stops it (`Sandbox.stop`): the container whose script is running
  is killed, and no later script starts; the execution returns early and is not evaluated,
  since what the killed script left says nothing about the script.
- A model call runs on a helper thread the run waits for; a cancel stops the wait. The call
  itself cannot be interrupted from outside: it ends on its own (at the latest at its
  timeout) and its answer is dropped, its cost missing from the reports, as when Ctrl-C
  interrupts the CLI in the middle of one.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Protocol

from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.models import ChatRequest, ChatResponse
from selfcorrect_action.loop.deps import Executor
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult


class Stoppable(Executor, Protocol):
    def stop(self) -> None: ...


class StoppableExecutor:
    """An Executor whose running script a cancel kills."""

    def __init__(self, inner: Stoppable, cancel: CancelToken) -> None:
        self._inner = inner
        self._cancel = cancel

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        self._cancel.check()
        try:
            with self._cancel.while_running(self._inner.stop):
                result = self._inner.run(request, artifact_dir)
        except SelfcorrectError:
            # A container killed while its request was sent fails as a sandbox error, and
            # a stopped sandbox refuses to run: the cancel is what stopped them.
            self._cancel.check()
            raise
        self._cancel.check()
        return result


class StoppableLLM:
    """An LLM whose call a cancel stops waiting for."""

    def __init__(self, inner: LLM, cancel: CancelToken) -> None:
        self._inner = inner
        self._cancel = cancel

    def complete(self, request: ChatRequest) -> ChatResponse:
        self._cancel.check()
        call = _Call(self._inner, request)
        helper = threading.Thread(target=call.run, name="llm-call", daemon=True)
        with self._cancel.while_running(call.done.set):
            helper.start()
            call.done.wait()
        self._cancel.check()
        return call.outcome()


class _Call:
    def __init__(self, llm: LLM, request: ChatRequest) -> None:
        self._llm = llm
        self._request = request
        self.done = threading.Event()
        self._response: ChatResponse | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._response = self._llm.complete(self._request)
        except BaseException as exc:  # handed to the waiting thread, which raises it
            self._error = exc
        finally:
            self.done.set()

    def outcome(self) -> ChatResponse:
        if self._error is not None:
            raise self._error
        assert self._response is not None
        return self._response
