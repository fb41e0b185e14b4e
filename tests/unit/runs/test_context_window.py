"""A model's context window (issue 38, item 1), through the pipeline without Docker: the
model is the OpenAI stand-in refusing, as llama-cpp-python does, any request whose prompt
and answer exceed its window (counted with more tokens per character than selfcorrect's
estimate, as a real tokenizer may); the sandbox is played at the Engine seam.

A refusal is never the end of the run: the window it names is learned, and the prompt is
shortened in the stated order (code_request.TRIMS) until it fits; what was left out is in
run.json and AUDIT.md. A window the server states up front is used before any refusal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from selfcorrect_action.loop.code_request import TRIMS
from selfcorrect_action.loop.state import RunState, Status, Strategy
from selfcorrect_action.report.audit import audit_markdown
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec
from selfcorrect_action.taxonomy import Category
from tests.fakes.fake_engine import FakeEngine, printing
from tests.fakes.openai_server import ContextWindow, FakeOpenAIServer
from tests.fakes.openai_server import Reply as ModelReply
from tests.fakes.replays import fenced

IMAGE = "selfcorrect-sandbox:fake"
SPEC: dict[str, Any] = {
    "prompt": "Print hello.", "output": "hello.py", "judge": False,
    "budget": {"patch_attempts": 2, "rethink_attempts": 1},
    "contract": {"artifacts": [], "stdout_contains": ["hello"], "timeout_s": 30,
                 "memory_mb": 256, "success_criteria": ["it says hello"]},
}
# Attempt 1: a long script (about 12,000 characters) that prints the wrong word: the patch
# that repairs it quotes it whole, which no 4,096-token window holds.
LONG = "\n".join(f"value_{n} = {n} * 2  # a line of a long script, number {n}"
                 for n in range(220)) + "\nprint('goodbye')\n"
HELLO = ModelReply(fenced("print('hello')"), prompt_tokens=None)


def engine(*outputs: str) -> FakeEngine:
    return printing(*outputs, image=IMAGE)


def run(tmp_path: Path, server: FakeOpenAIServer) -> RunState:
    path = tmp_path / "hello.yml"
    path.write_text(json.dumps(SPEC))
    settings = RunSettings(model="openai/local", api_base=server.api_base,
                           sandbox_image=IMAGE, profile="standard")
    prepared = pipeline.prepare(load_spec(path, root=tmp_path), settings, environ={},
                                secrets=[])
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        prepared, environ={}, secrets=[],
        connections=Connections(engine=engine("goodbye\n", "hello\n")))
    return outcome.state


def test_a_refusal_teaches_the_window_and_the_prompt_is_shortened_to_fit(
        tmp_path: Path) -> None:
    with FakeOpenAIServer(window=ContextWindow(4096)) as server:
        server.script(ModelReply(fenced(LONG), prompt_tokens=None), HELLO)
        state = run(tmp_path, server)
        refused = server.refused
        asked = [request.body for request in server.requests]
    assert state.status is Status.PASSED, state.stop_reason
    assert refused == 1  # the patch, once: then the window was known
    assert server.overruns == 0 and len(asked) == 3
    first, second = state.attempts
    assert first.prompt_trimmed == []
    # Leaving out most of the evidence was not enough (the task has no input files, so no
    # previews to leave out: not said): the repair was asked without the previous code,
    # rewriting the file from the task.
    assert second.prompt_trimmed == [TRIMS[1], TRIMS[2]]
    assert "value_219" not in json.dumps(asked[2])
    assert second.strategy is Strategy.PATCH and state.status is Status.PASSED
    audit = audit_markdown(state, secrets=[])
    assert "shortened to fit the model's context window" in audit


def test_a_window_no_prompt_fits_fails_attempts_not_the_run(tmp_path: Path) -> None:
    """A window smaller than the shortest prompt: each attempt is a resource failure found
    without a call or a sandbox run, and the run ends exhausted, not in an error."""
    with FakeOpenAIServer(window=ContextWindow(120)) as server:
        state = run(tmp_path, server)
        assert server.refused == 1 and server.overruns == 0
    assert state.status is Status.EXHAUSTED, state.stop_reason
    assert state.error_exit_code is None
    assert all(a.verdict is not None and a.verdict.category is Category.RESOURCE
               for a in state.attempts)
    assert "did not fit the model's context window" in state.attempts[0].verdict.evidence  # type: ignore[union-attr]


def test_a_window_the_server_states_is_used_before_any_refusal(tmp_path: Path) -> None:
    """llama.cpp's server says its n_ctx at /props: the patch is shortened before it is
    sent, and the server refuses nothing."""
    identity = {"/props": {"default_generation_settings": {"n_ctx": 4096},
                           "model_path": "/models/local.gguf", "build_info": "b5000"}}
    with FakeOpenAIServer(identity, window=ContextWindow(4096, chars_per_token=3.0)) as server:
        server.script(ModelReply(fenced(LONG), prompt_tokens=None), HELLO)
        state = run(tmp_path, server)
        assert server.refused == 0
    assert state.status is Status.PASSED
    assert state.server is not None and state.server.context_tokens == 4096
    assert state.attempts[1].prompt_trimmed


def test_a_plan_whose_prompt_does_not_fit_is_skipped_not_the_run(tmp_path: Path) -> None:
    """The plan's prompt (the task, the input previews, the contract so far) leaves no room
    in the window: the run goes on without a plan, as with an unusable plan answer."""
    spec = {**SPEC, "contract": {"stdout_contains": ["hello"]},  # the planner has work
            "budget": {"patch_attempts": 0, "rethink_attempts": 0}}
    (tmp_path / "hello.yml").write_text(json.dumps(spec))
    with FakeOpenAIServer(window=ContextWindow(150, chars_per_token=3.0)) as server:
        settings = RunSettings(model="openai/local", api_base=server.api_base,
                               sandbox_image=IMAGE, profile="standard")
        prepared = pipeline.prepare(load_spec(tmp_path / "hello.yml", root=tmp_path),
                                    settings, environ={}, secrets=[])
        outcome: pipeline.RunOutcome[None] = pipeline.run(
            prepared, environ={}, secrets=[], connections=Connections(engine=engine("x")))
        assert server.overruns == 0
    state = outcome.state
    assert state.plan is not None and "context window" in state.plan.skipped
    assert state.status is Status.EXHAUSTED and state.error_exit_code is None
