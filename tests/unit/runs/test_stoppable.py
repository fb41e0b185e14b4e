"""A cancel from another thread stops what a run blocks in: the script in its container is
killed (and the container removed), a model call stops being waited for. A signal on the
run's own thread still interrupts both where they stand."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from selfcorrect_action.errors import Interrupted, SandboxError
from selfcorrect_action.llm.errors import LLMError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest, ChatResponse
from selfcorrect_action.loop.state import Status
from selfcorrect_action.report import load_run_json
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken, cancel_on_signals
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.runs.stoppable import StoppableExecutor, StoppableLLM
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult
from selfcorrect_action.spec import load_spec
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine, Reply
from tests.fakes.replays import fenced, write_replay

IMAGE = "selfcorrect-sandbox:fake"
PROMPT = "Wait a long time, then print done."
SPEC = {
    "prompt": PROMPT, "output": "slow.py", "judge": False,
    "budget": {"patch_attempts": 1, "rethink_attempts": 0},
    "contract": {"artifacts": [], "stdout_contains": ["done"], "timeout_s": 60,
                 "memory_mb": 256, "success_criteria": ["it says done"]},
}
SCRIPT_RUNS_S = 30.0


def _prepared(tmp_path: Path) -> pipeline.PreparedRun:
    spec = tmp_path / "slow.yml"
    spec.write_text(json.dumps(SPEC))
    replay = write_replay(tmp_path / "replay.jsonl", PROMPT,
                          [("generate", fenced("import time; time.sleep(30); print('done')"))])
    return pipeline.prepare(load_spec(spec), RunSettings(replay=replay, sandbox_image=IMAGE),
                            environ={}, secrets=[])


def _cancel_once_running(engine: FakeEngine, token: CancelToken, when: list[float]
                         ) -> threading.Thread:
    """Cancels from another thread as soon as a container has its script."""
    def watch() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(container.requests for container in engine.history):
                when.append(time.monotonic())
                token.cancel()
                return
            time.sleep(0.01)
    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def test_a_cancel_kills_the_running_script_and_removes_its_container(tmp_path: Path) -> None:
    engine = FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL},
                        behaviour=lambda header: Reply(runs_s=SCRIPT_RUNS_S))
    token = CancelToken()
    cancelled_at: list[float] = []
    watcher = _cancel_once_running(engine, token, cancelled_at)
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        _prepared(tmp_path), environ={}, secrets=[], cancel=token,
        reports_dir=tmp_path / "out", connections=Connections(engine=engine))
    watcher.join()
    assert time.monotonic() - cancelled_at[0] < SCRIPT_RUNS_S / 3, "the script was not waited"
    assert outcome.exit_code == 130 and outcome.interruption is not None
    ran = [container for container in engine.history if container.requests]
    assert len(ran) == 1 and ran[0].killed
    assert engine.containers == {}, "every container was removed"
    state = load_run_json((tmp_path / "out" / "run.json").read_text())
    assert state.status is Status.CANCELLED and state.interrupted_by == "cancelled"
    # The killed execution is not judged: what a killed script left says nothing about it.
    assert [attempt.execution for attempt in state.attempts] == [None]


class _Hanging:
    """A model API that answers only when released (or after 30 s)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        self.release.wait(30)
        return ChatResponse(text="late", model="m", prompt_tokens=1, completion_tokens=1,
                            cost_usd=0.0, cost_known=True, latency_ms=1)


REQUEST = ChatRequest(purpose="generate", tier="cheap",
                      messages=(ChatMessage(role="user", content="hello"),))


def test_a_cancel_from_another_thread_stops_the_wait_for_a_model_call() -> None:
    api = _Hanging()
    token = CancelToken()
    threading.Timer(0.2, token.cancel).start()
    started = time.monotonic()
    with pytest.raises(Interrupted) as raised:
        StoppableLLM(api, token).complete(REQUEST)
    assert time.monotonic() - started < 5
    assert raised.value.exit_code == 130 and api.calls == 1
    api.release.set()


def test_an_answer_comes_back_through_the_helper_thread() -> None:
    api = _Hanging()
    api.release.set()
    assert StoppableLLM(api, CancelToken()).complete(REQUEST).text == "late"


def test_a_cancelled_token_makes_no_call() -> None:
    api = _Hanging()
    token = CancelToken()
    token.cancel()
    with pytest.raises(Interrupted):
        StoppableLLM(api, token).complete(REQUEST)
    assert api.calls == 0


def test_a_signal_interrupts_the_wait_on_the_main_thread() -> None:
    """The CLI's Ctrl-C: the handler raises in the waiting thread, as it did in the call."""
    api = _Hanging()
    token = CancelToken()
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    with pytest.raises(Interrupted) as raised, cancel_on_signals(token):
        StoppableLLM(api, token).complete(REQUEST)
    assert raised.value.signal_name == "SIGINT"
    api.release.set()


class _Failing:
    """A sandbox whose execution fails as a stop makes it fail (or as a broken one)."""

    def __init__(self, token: CancelToken | None = None) -> None:
        self.token = token
        self.stopped = False

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        if self.token is not None:
            self.token.cancel()  # a cancel lands while the script is sent
        raise SandboxError("the sandbox did not start the script")

    def stop(self) -> None:
        self.stopped = True


EXECUTION = ExecutionRequest(argv=["python3", "s.py"], files=[], timeout_s=5)


def test_a_sandbox_failure_caused_by_the_cancel_is_the_cancel(tmp_path: Path) -> None:
    token = CancelToken()
    sandbox = _Failing(token)
    with pytest.raises(Interrupted):
        StoppableExecutor(sandbox, token).run(EXECUTION, tmp_path)
    assert sandbox.stopped


def test_a_sandbox_failure_without_a_cancel_stays_a_sandbox_failure(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="did not start"):
        StoppableExecutor(_Failing(), CancelToken()).run(EXECUTION, tmp_path)


def test_a_model_calls_error_comes_back_through_the_helper_thread() -> None:
    class Refusing:
        def complete(self, request: ChatRequest) -> ChatResponse:
            raise LLMError("the API said no")

    with pytest.raises(LLMError, match="the API said no"):
        StoppableLLM(Refusing(), CancelToken()).complete(REQUEST)
