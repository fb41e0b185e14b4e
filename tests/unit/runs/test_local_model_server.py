"""A run against a local OpenAI-compatible server, without flags: the server is asked what it
is once, and the run fits itself to it (issue 21). The server is the OpenAI stand-in on
127.0.0.1 answering as llama-cpp-python's does; the sandbox is played at the Engine seam.

- an unconfigured `openai/<name>` on llama-cpp-python's server gets its schema;
- a small model (by its name) is asked in the small profile: a short system prompt, the
  function's own start given, temperature 0, shorter answers;
- completion generation sends the function's start to /v1/completions and runs the start
  plus the continuation; recorded, it replays, and replays only as what it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from selfcorrect_action.llm.recording import read_recording
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.pipeline import Connections
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import load_spec
from tests.fakes.fake_engine import SPEAKS_OUR_PROTOCOL, FakeEngine, Reply
from tests.fakes.openai_server import LLAMA_CPP_PYTHON, FakeOpenAIServer
from tests.fakes.openai_server import Reply as ModelReply

IMAGE = "selfcorrect-sandbox:fake"
STUB = '''def double(x: int) -> int:
    """Return twice x."""
'''
FUNCTION_SPEC = {
    "prompt": f"Complete this function.\n\n```python\n{STUB}```\n", "kind": "function",
    "output": "doubler.py", "tests": ["test_doubler.py"], "judge": False,
    "budget": {"patch_attempts": 1, "rethink_attempts": 0},
    "contract": {"artifacts": [], "stdout_contains": [], "timeout_s": 30, "memory_mb": 256,
                 "success_criteria": ["the tests pass"]},
}
PLAN = json.dumps({"approach": "print it", "contract": {"stdout_contains": ["hello"],
                                                        "success_criteria": ["says hello"]}})


def _engine() -> FakeEngine:
    return FakeEngine(images={IMAGE: SPEAKS_OUR_PROTOCOL}, behaviour=lambda header: Reply(
        report={"exit_code": 0, "stdout": {"text": "hello\n", "total_bytes": 6}}))


def _run(tmp_path: Path, spec: dict[str, Any], server: FakeOpenAIServer | None, *,
         model: str | None = "openai/local", **settings: Any) -> tuple[RunState, list[str]]:
    folder = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
    folder.mkdir()
    (folder / "test_doubler.py").write_text("from doubler import double\n\n\n"
                                            "def test_double():\n    assert double(2) == 4\n")
    (folder / "task.yml").write_text(json.dumps(spec))
    given = RunSettings(model=model, sandbox_image=IMAGE,
                        api_base=server.api_base if server else None, **settings)
    prepared = pipeline.prepare(load_spec(folder / "task.yml", root=folder), given,
                                environ={}, secrets=[])
    said: list[str] = []
    outcome: pipeline.RunOutcome[None] = pipeline.run(
        prepared, environ={}, secrets=[], reports_dir=folder / "out",
        events=RunEvents(on_event=lambda step, text: said.append(text)),
        connections=Connections(engine=_engine()))
    return outcome.state, said


def test_an_unconfigured_model_on_llama_cpp_pythons_server_gets_its_schema(
        tmp_path: Path) -> None:
    with FakeOpenAIServer(identity=LLAMA_CPP_PYTHON) as server:
        server.script(ModelReply(PLAN), ModelReply("```python\nprint('hello')\n```"))
        state, said = _run(tmp_path, {"prompt": "Print hello.", "judge": False}, server)
        plan = server.requests[0].body
    assert plan["response_format"]["type"] == "json_object"
    assert plan["response_format"]["schema"]["type"] == "object"  # without --structured-output
    assert state.server is not None and state.server.kind == "llama-cpp-python"
    assert any("server at the API base: llama-cpp-python 0.3.36" in line for line in said)
    assert state.profile == "standard"  # "local" says nothing of the model's size
    run_json = json.loads((tmp_path / "run-0" / "out" / "run.json").read_text())
    assert run_json["server"]["structured_output"] == "json-object-schema"


def test_an_unknown_server_keeps_the_settings_it_was_given(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.script(ModelReply(PLAN), ModelReply("```python\nprint('hello')\n```"))
        state, _ = _run(tmp_path, {"prompt": "Print hello.", "judge": False}, server)
        plan = server.requests[0].body
    assert plan["response_format"] == {"type": "json_object"}
    assert state.server is not None and state.server.kind == "unknown"


def test_a_small_model_is_asked_in_the_small_profile(tmp_path: Path) -> None:
    record = tmp_path / "small.jsonl"
    with FakeOpenAIServer(identity=LLAMA_CPP_PYTHON) as server:
        server.script(ModelReply("```python\n" + STUB + "    return 2 * x\n```"))
        state, _ = _run(tmp_path, FUNCTION_SPEC, server, record=record,
                        model="openai/SmolLM2-135M-Instruct", generation="chat")
        body = server.requests[0].body
    assert state.profile == "small" and state.generation == "chat"
    system, user = body["messages"]
    assert len(system["content"]) < 200
    assert user["content"].startswith("Complete this Python function.\n\n```python\n"
                                      "def double(x: int) -> int:")
    assert "test_doubler" not in user["content"] and "contract" not in user["content"]
    assert (body["temperature"], body["max_tokens"]) == (0.0, 768)
    assert state.attempts[0].temperature == 0.0
    # The recording says how the run asked; its replay, with no flag and no model named,
    # asks the same way (and so decides the same way on a repeat at temperature 0).
    header = read_recording(record).header
    assert (header.profile, header.generation) == ("small", "chat")
    again, _ = _run(tmp_path, FUNCTION_SPEC, None, replay=record, model=None)
    assert (again.profile, again.generation) == ("small", "chat")
    assert again.attempts[0].temperature == 0.0


def test_a_small_models_unparsable_answer_is_drawn_again_and_replays_so(tmp_path: Path) -> None:
    """Issue 21: the small profile asks again, a step warmer, for an answer that does not
    parse; the recording says so, its replay draws as it did, and a recording made before
    redraws (no `redraws` in its header) replays drawing each answer once."""
    record = tmp_path / "redrawn.jsonl"
    one_attempt = {**FUNCTION_SPEC, "budget": {"patch_attempts": 0, "rethink_attempts": 0}}
    broken = "```python\ndef double(x: int) -> int:\n    return 2 * (x\n```"
    with FakeOpenAIServer(identity=LLAMA_CPP_PYTHON) as server:
        fixed = "```python\n" + STUB + "    return 2 * x\n```"
        server.script(ModelReply(broken), ModelReply(fixed))
        state, said = _run(tmp_path, one_attempt, server, record=record,
                           model="openai/SmolLM2-135M-Instruct", generation="chat")
        temperatures = [request.body["temperature"] for request in server.requests]
    assert temperatures == [0.0, 0.35]
    assert state.redraws == 2 and len(state.attempts) == 1
    (only,) = state.attempts
    assert only.code.endswith("return 2 * x\n") and only.temperature == 0.35
    assert only.rejected[0].reason.startswith("SyntaxError")
    assert "return 2 * (x" in only.rejected[0].text
    assert any("asking again at temperature 0.35 (1 of 2)" in line for line in said)
    assert read_recording(record).header.redraws == 2

    again, _ = _run(tmp_path, one_attempt, None, replay=record, model=None)
    assert again.redraws == 2 and again.attempts[0].code == only.code

    header, first, _ = record.read_text().splitlines()
    older = json.loads(header)
    del older["redraws"]
    before = tmp_path / "before-redraws.jsonl"
    before.write_text(json.dumps(older) + "\n" + first + "\n")
    old, _ = _run(tmp_path, one_attempt, None, replay=before, model=None)
    assert old.redraws == 0 and old.attempts[0].rejected == []
    assert old.attempts[0].verdict is not None
    assert old.attempts[0].verdict.category == "syntax"

def test_completion_continues_the_functions_start_and_replays_as_it_was(
        tmp_path: Path) -> None:
    record = tmp_path / "completion.jsonl"
    with FakeOpenAIServer(identity=LLAMA_CPP_PYTHON) as server:
        # A server that ignores the stops past its fourth: the continuation is cut here.
        server.script(ModelReply("    return 2 * x\nprint(double(2))\n"))
        state, said = _run(tmp_path, FUNCTION_SPEC, server, record=record,
                           model="openai/starcoder2-3b")
        request = server.requests[0]
    assert request.path == "/v1/completions"
    assert request.body["prompt"] == STUB
    assert request.body["stop"] == ["\ndef ", "\nclass ", "\nif __name__", "```"]
    # auto: a base model, and the server serves /v1/completions
    assert state.generation == "completion"
    assert state.attempts[0].code == STUB + "    return 2 * x\n"
    assert any("completion generation" in line for line in said)
    recorded = read_recording(record)
    assert recorded.exchanges[0].request.mode == "completion"
    assert recorded.header.task_sha256  # a completion quotes no task: the digest names it

    again, _ = _run(tmp_path, FUNCTION_SPEC, None, replay=record, generation="completion",
                    model="openai/starcoder2-3b")
    assert again.attempts[0].code == state.attempts[0].code
    wrong, _ = _run(tmp_path, FUNCTION_SPEC, None, replay=record, generation="chat",
                    model="openai/starcoder2-3b")
    assert wrong.status.value == "error" and wrong.error_exit_code == 2
    assert "recorded a completion request, but the run asked for a chat one" in (
        wrong.stop_reason)


def test_a_model_under_an_alias_is_switched_to_small_by_its_first_unrunnable_answer(
        tmp_path: Path) -> None:
    """Issue 38: llama-cpp-python serving SmolLM2 as `smollm2` says nothing of its size, so
    `auto` starts standard; the first answer that is not Python switches the run to the
    small profile's handling at once (the attempt drawn again the small way), recorded in
    run.json and the reports, and its replay switches where it did."""
    record = tmp_path / "switched.jsonl"
    once = {**FUNCTION_SPEC, "budget": {"patch_attempts": 0, "rethink_attempts": 0}}
    prose = ModelReply("Sure! To double a number you multiply it by two.")
    with FakeOpenAIServer(identity=LLAMA_CPP_PYTHON) as server:
        server.script(prose, ModelReply("```python\n" + STUB + "    return 2 * x\n```"))
        state, said = _run(tmp_path, once, server, record=record,
                           model="openai/smollm2", generation="chat")
        standard, small = (request.body for request in server.requests)
    assert state.profile == "small" and not state.profile_open
    assert state.profile_reason.startswith("small since attempt 1: the model's size was "
                                           "unknown")
    assert len(small["messages"][0]["content"]) < 200 < len(standard["messages"][0]["content"])
    assert small["temperature"] == 0.0 and state.redraws == 2
    (attempt,) = state.attempts
    assert "return 2 * x" in attempt.code  # the small way's answer is the one run
    assert "asked again with the small profile" in attempt.rejected[0].reason
    assert any("asking the small profile's way" in line for line in said)
    run_json = json.loads((tmp_path / "run-0" / "out" / "run.json").read_text())
    assert run_json["profile"] == "small" and "small since attempt 1" in \
        run_json["profile_reason"]
    assert "small since attempt 1" in (tmp_path / "run-0" / "out" / "AUDIT.md").read_text()
    assert read_recording(record).header.profile_open is True
    again, _ = _run(tmp_path, once, None, replay=record, model=None)
    assert again.profile == "small" and again.attempts[0].rejected[0].text == prose.content


def test_a_model_of_unknown_size_that_answers_python_stays_standard(tmp_path: Path) -> None:
    with FakeOpenAIServer(identity=LLAMA_CPP_PYTHON) as server:
        server.script(ModelReply("```python\n" + STUB + "    return 2 * x\n```"))
        state, _ = _run(tmp_path, {**FUNCTION_SPEC, "budget": {"patch_attempts": 0,
                                                               "rethink_attempts": 0}},
                        server, model="openai/local", generation="chat")
    assert state.profile == "standard" and not state.profile_open
    assert "first answer (attempt 1) was runnable Python" in state.profile_reason
