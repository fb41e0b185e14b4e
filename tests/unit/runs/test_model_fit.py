"""How a run asks for code, decided from what the user said and what the server is."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.llm.server_probe import ServerInfo
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.runs.model_fit import fitted
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import TaskSpec

STUB = '```python\ndef f(x):\n    """Double x."""\n```'
LLAMA = ServerInfo(kind="llama-cpp-python", completions=True)


def state(model: str = "openai/local", *, kind: str = "function", prompt: str = STUB,
          generation: str | None = None) -> RunState:
    spec = TaskSpec.model_validate({"prompt": prompt, "kind": kind, "generation": generation})
    return RunState(run_id="r", started_at="t", spec_source="s.yml", spec=spec,
                    output_name="m.py", contract=spec.contract,
                    models=ModelTiers(cheap=model, strong=model, judge=model))


@pytest.mark.parametrize(("model", "server", "profile"), [
    ("openai/local", None, "standard"),
    ("openai/SmolLM2-135M-Instruct", None, "small"),
    ("ollama/qwen2.5-coder:1.5b", None, "small"),
    ("openai/Qwen2.5-7B-Instruct", None, "standard"),
    ("openai/local", ServerInfo(model_params=500_000_000), "small"),
    ("openai/gpt-4o-mini", None, "standard"),
])
def test_auto_picks_small_for_models_of_3b_or_fewer(model: str, server: ServerInfo | None,
                                                    profile: str) -> None:
    assert fitted(state(model), RunSettings(), server).profile == profile


def test_a_profile_given_is_kept() -> None:
    small = RunSettings(profile="small")
    assert fitted(state("openai/gpt-4o"), small, None).profile == "small"
    standard = RunSettings(profile="standard")
    assert fitted(state("openai/SmolLM2-135M"), standard, None).profile == "standard"


def test_auto_generation_completes_a_base_model_where_the_server_serves_it() -> None:
    base = state("openai/Qwen2.5-Coder-1.5B-base")
    assert fitted(base, RunSettings(), LLAMA).generation == "completion"
    assert fitted(base, RunSettings(), None).generation == "chat"
    assert fitted(base, RunSettings(), ServerInfo()).generation == "chat"
    # A chat model, or one whose name says nothing, is asked to chat: an instruct model
    # continuing a function closed the code block and wrote prose.
    for model in ("openai/SmolLM2-135M-Instruct", "openai/local", "openai/qwen2.5-coder-chat"):
        assert fitted(state(model), RunSettings(), LLAMA).generation == "chat", model
    hosted = state("anthropic/claude-3-5-haiku-latest")
    assert fitted(hosted, RunSettings(), LLAMA).generation == "chat"


@pytest.mark.parametrize(("model", "continues"), [
    ("openai/starcoder2-3b", True), ("openai/deepseek-coder-1.3b-base", True),
    ("openai/codellama-7b", True), ("openai/codellama-7b-instruct", False),
    ("openai/llama-3.2-1b-it", False), ("openai/database-helper", False),
])
def test_a_base_model_is_told_by_its_name(model: str, continues: bool) -> None:
    from selfcorrect_action.runs.model_fit import continues_text

    assert continues_text(model) is continues


def test_the_flag_wins_over_the_spec_and_scripts_always_chat() -> None:
    spec_says = state(generation="chat")
    assert fitted(spec_says, RunSettings(), LLAMA).generation == "chat"
    assert fitted(spec_says, RunSettings(generation="completion"), None).generation == (
        "completion")
    script = state(kind="script", prompt="Print hello.")
    assert fitted(script, RunSettings(generation="completion"), LLAMA).generation == "chat"


def test_completion_needs_the_functions_start() -> None:
    no_stub = state(prompt="Write f that doubles x.")
    assert fitted(no_stub, RunSettings(generation="completion"), LLAMA).generation == "chat"


def test_the_small_profile_draws_an_unrunnable_answer_again_and_a_replay_as_recorded() -> None:
    assert fitted(state("openai/SmolLM2-135M-Instruct"), RunSettings(), None).redraws == 2
    assert fitted(state("openai/gpt-4o-mini"), RunSettings(), None).redraws == 0
    # A replay takes its recording's number; one recorded before redraws has none, and a
    # recording of a standard run replayed as small still draws as it was recorded.
    small = state("openai/SmolLM2-135M-Instruct")
    assert fitted(small, RunSettings(), None, {"profile": "small", "redraws": "0"}).redraws == 0
    assert fitted(small, RunSettings(), None, {"profile": "small", "redraws": "2"}).redraws == 2
    assert fitted(state(), RunSettings(profile="small"), None, {"redraws": "1"}).redraws == 1


@pytest.mark.parametrize(("model", "settings", "left_open"), [
    ("openai/smollm2", RunSettings(api_base="http://127.0.0.1:8765/v1"), True),
    ("ollama/mystery", RunSettings(), True),
    ("openai/gpt-4o-mini", RunSettings(), False),  # hosted: unsaid, and not small
    ("openai/smollm2", RunSettings(api_base="http://127.0.0.1:8765/v1",
                                   replay=Path("r.jsonl")), False),  # a replay: as recorded
    ("openai/SmolLM2-135M", RunSettings(api_base="http://127.0.0.1:8765/v1"), False),
])
def test_only_a_local_model_of_unknown_size_is_left_to_its_answers(
        model: str, settings: RunSettings, left_open: bool) -> None:
    """Issue 38: the first unrunnable answer switches a run to small only where a small
    model may hide behind the name; a hosted model's syntax error is just a syntax error."""
    fit = fitted(state(model), settings, None)
    assert fit.profile_open is left_open
    assert fit.profile_reason
    assert fit.profile == ("small" if "135M" in model else "standard")
