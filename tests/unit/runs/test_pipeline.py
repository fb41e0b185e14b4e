"""The one run pipeline, without Docker: a replayed model, and the container engine played by
tests/fakes/fake_engine.py at the Engine seam (the runner's side of the wire protocol).

What every front end relies on: the reports are on disk before anything is published; an
interrupted run is never published and its interruption comes back to the caller; a cancel
that arrives while the reports are written still stops the publishing; the sandbox's
containers are gone afterwards."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.errors import Interrupted, SandboxUnavailable
from selfcorrect_action.llm.models import Purpose
from selfcorrect_action.loop.state import Status
from selfcorrect_action.report import load_run_json
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken, cancel_on_signals
from selfcorrect_action.runs.outcome import exit_code
from selfcorrect_action.runs.pipeline import Connections, Finished
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox.image import PROTOCOL_LABEL
from selfcorrect_action.spec import LoadedSpec, load_spec
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine, Reply
from tests.fakes.replays import fenced, write_replay
from tests.fakes.scripted_llm import ScriptedLLM

IMAGE = "selfcorrect-sandbox:fake"
PROMPT = "Print hello."
CONTRACT: dict[str, Any] = {"artifacts": [], "stdout_contains": ["hello"], "timeout_s": 30,
                            "memory_mb": 256, "success_criteria": ["it says hello"]}
SPEC = {
    "prompt": PROMPT, "output": "hello.py", "judge": False,
    "budget": {"patch_attempts": 1, "rethink_attempts": 0}, "contract": CONTRACT,
}


def _printing(text: str) -> FakeEngine:
    return FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=lambda header: Reply(report={
        "exit_code": 0, "stdout": {"text": text, "total_bytes": len(text)}}))


def _loaded(tmp_path: Path) -> LoadedSpec:
    path = tmp_path / "hello.yml"
    path.write_text(json.dumps(SPEC))
    return load_spec(path)


def _prepared(tmp_path: Path, answers: int = 1) -> pipeline.PreparedRun:
    answers_given: list[tuple[Purpose, str]] = [("generate", fenced("print('hello')"))]
    answers_given += [("repair", fenced("print('hello')"))] * (answers - 1)
    replay = write_replay(tmp_path / "replay.jsonl", PROMPT, answers_given)
    settings = RunSettings(replay=replay, sandbox_image=IMAGE)
    return pipeline.prepare(_loaded(tmp_path), settings, environ={}, secrets=[])


def test_a_passing_run_is_published_after_its_reports_are_written(tmp_path: Path) -> None:
    engine = _printing("hello\n")
    seen: list[Any] = []

    def publish(done: Finished) -> str:
        # The publisher can count on the reports being whole files already.
        assert done.report_paths is not None
        seen.append(load_run_json(done.report_paths.run_json.read_text()).status)
        return "published"

    outcome = pipeline.run(_prepared(tmp_path), environ={}, secrets=[],
                           reports_dir=tmp_path / "out", publish=publish,
                           connections=Connections(engine=engine))
    assert outcome.state.status is Status.PASSED and outcome.exit_code == 0
    assert seen == [Status.PASSED] and outcome.published == "published"
    assert outcome.interruption is None
    assert (tmp_path / "out" / "AUDIT.md").read_text() == outcome.reports.audit_md
    assert engine.containers == {}, "the session removed its containers"


@pytest.mark.parametrize("labels", [{PROTOCOL_LABEL: "2"}, {}], ids=["other-protocol", "none"])
def test_a_prebuilt_image_of_another_protocol_is_refused_before_any_model_call(
        tmp_path: Path, labels: dict[str, str]) -> None:
    """What a released action.yml names, or a user, is checked as the run opens: no model
    is asked anything, no container starts and nothing is published."""
    model = ScriptedLLM(answers=[])  # any call fails the test: "unscripted generate call"
    engine = FakeEngine(images={IMAGE: labels})
    published: list[object] = []
    with pytest.raises(SandboxUnavailable, match=f"the sandbox image {IMAGE} "):
        pipeline.run(_prepared(tmp_path), environ={}, secrets=[], publish=published.append,
                     connections=Connections(llm=model, engine=engine))
    assert model.requests == [] and engine.history == [] and published == []


def test_a_failed_run_is_published_too_with_its_exit_code(tmp_path: Path) -> None:
    published: list[Status] = []
    outcome = pipeline.run(_prepared(tmp_path, answers=2), environ={}, secrets=[],
                           publish=lambda done: published.append(done.state.status),
                           connections=Connections(engine=_printing("goodbye\n")))
    assert outcome.state.status is Status.EXHAUSTED and outcome.exit_code == 1
    assert published == [Status.EXHAUSTED] and outcome.report_paths is None


def test_a_cancel_ends_the_run_at_the_next_step_and_nothing_is_published(
        tmp_path: Path) -> None:
    """A caller on another thread (the API, an MCP client) cancels: the loop stops before
    its next step, the reports say so, the publisher is never called."""
    token = CancelToken()

    def on_event(step: str, message: str) -> None:
        if step == "execute":
            token.cancel()

    published: list[object] = []
    outcome = pipeline.run(_prepared(tmp_path, answers=2), environ={}, secrets=[],
                           events=RunEvents(on_event=on_event), cancel=token,
                           reports_dir=tmp_path / "out", publish=published.append,
                           connections=Connections(engine=_printing("goodbye\n")))
    assert published == [] and outcome.published is None
    assert outcome.interruption is not None and outcome.exit_code == 130
    state = load_run_json((tmp_path / "out" / "run.json").read_text())
    assert state.status is Status.CANCELLED and state.interrupted_by == "cancelled"
    assert state.stop_reason.startswith("interrupted by a cancel request")
    assert len(state.attempts) == 1, "no repair was generated after the cancel"
    with pytest.raises(Interrupted) as raised:
        outcome.raise_if_interrupted()
    assert raised.value.exit_code == 130


def test_sigterm_during_the_reports_lets_them_finish_and_stops_the_publishing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal handler raises wherever the main thread is, except while the reports are
    written: there it only sets the token, and the run stops right after them."""
    from selfcorrect_action.report import writer
    from selfcorrect_action.runs import pipeline as module

    real = writer.write_rendered

    def write_during_sigterm(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "write_rendered", write_during_sigterm)
    published: list[object] = []
    token = CancelToken()
    with cancel_on_signals(token):
        outcome = pipeline.run(_prepared(tmp_path), environ={}, secrets=[], cancel=token,
                               reports_dir=tmp_path / "out", publish=published.append,
                               connections=Connections(engine=_printing("hello\n")))
    assert published == []
    assert outcome.state.status is Status.PASSED, "the reports say what really happened"
    assert load_run_json((tmp_path / "out" / "run.json").read_text()).status is Status.PASSED
    assert outcome.interruption is not None and outcome.exit_code == 143


def test_sigterm_mid_run_is_recorded_and_raised_after_the_reports(tmp_path: Path) -> None:
    engine = _printing("hello\n")

    def on_event(step: str, message: str) -> None:
        if step == "execute":
            os.kill(os.getpid(), signal.SIGTERM)

    token = CancelToken()
    with cancel_on_signals(token):
        outcome = pipeline.run(_prepared(tmp_path), environ={}, secrets=[],
                               events=RunEvents(on_event=on_event), cancel=token,
                               reports_dir=tmp_path / "out", publish=lambda done: "no",
                               connections=Connections(engine=engine))
    assert outcome.published is None and outcome.exit_code == 143
    state = load_run_json((tmp_path / "out" / "run.json").read_text())
    assert (state.status, state.interrupted_by) == (Status.CANCELLED, "SIGTERM")
    assert exit_code(state) == 143, "what the run.json says it exits with"
    assert engine.containers == {}


def test_a_credentials_value_is_redacted_in_the_reports_whatever_its_variable_is_called(
        tmp_path: Path) -> None:
    """Issue 19: the proxy adds the header outside the sandbox, but an API may echo it back
    into what the script prints; the variable's name does not look secret."""
    value = "value-of-the-credential-1234"
    spec = {**SPEC, "contract": {**SPEC["contract"], "network": {  # type: ignore[dict-item]
        "allow": ["api.example.com"],
        "credentials": {"api.example.com": {
            "header": "X-Key", "secret": "SELFCORRECT_SECRET_EXAMPLE_VALUE"}}}}}
    path = tmp_path / "hello.yml"
    path.write_text(json.dumps(spec))
    replay = write_replay(tmp_path / "replay.jsonl", PROMPT,
                          [("generate", fenced("print('hello')"))])
    environ = {"SELFCORRECT_SECRET_EXAMPLE_VALUE": value,
               "SELFCORRECT_SECRET_EXAMPLE_VALUE_HOSTS": "api.example.com"}
    prepared = pipeline.prepare(load_spec(path), RunSettings(replay=replay, sandbox_image=IMAGE),
                                environ=environ, secrets=[])
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        prepared, environ=environ, secrets=[], reports_dir=tmp_path / "out",
        connections=Connections(engine=_printing(f"hello {value}\n")))
    assert outcome.state.status is Status.PASSED
    for report in ("AUDIT.md", "run.json"):
        text = (tmp_path / "out" / report).read_text()
        assert "hello" in text and value not in text, report


def test_the_first_pooled_container_preloads_what_the_task_names(tmp_path: Path) -> None:
    """A script's first container imports the data libraries; a function's only what its
    task names (here nothing: HumanEval's functions import none of them)."""
    def first_preload(name: str, spec: dict[str, Any], answer: str) -> str:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "test_doubler.py").write_text(
            "from doubler import double\n\n\ndef test_double():\n    assert double(2) == 4\n")
        (folder / "task.yml").write_text(json.dumps({
            **spec, "contract": {**CONTRACT, "memory_mb": 512}}))
        replay = write_replay(folder / "replay.jsonl", spec["prompt"],
                              [("generate", fenced(answer))])
        prepared = pipeline.prepare(load_spec(folder / "task.yml", root=folder),
                                    RunSettings(replay=replay, sandbox_image=IMAGE),
                                    environ={}, secrets=[])
        engine = _printing("hello\n")
        pipeline.run(prepared, environ={}, secrets=[], reports_dir=folder / "out",
                     connections=Connections(engine=engine))
        command: list[str] = engine.history[0].config["command"]
        assert command[-2] == "--warm"
        return command[-1]

    assert first_preload("script", SPEC, "print('hello')") == (
        "numpy,pandas,matplotlib,matplotlib.pyplot,PIL,PIL.Image")
    function = {**SPEC, "kind": "function", "output": "doubler.py", "tests": ["test_doubler.py"],
                "prompt": "Complete this function.\n\n```python\ndef double(x: int) -> int:\n```\n"}
    assert first_preload("function", function, "def double(x):\n    return 2 * x\n") == ""
    named = {**function, "prompt": "Use numpy.\n\n```python\ndef double(x: int) -> int:\n```\n"}
    assert first_preload("numpy", named, "def double(x):\n    return 2 * x\n") == "numpy"
