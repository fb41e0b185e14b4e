"""Before a run spends anything: model policy, replay fit, the first state."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.models import ChatMessage, ChatRequest, ChatResponse, ModelTiers
from selfcorrect_action.llm.recording import Recorder, task_digest
from selfcorrect_action.runs.prepare import (
    check_models,
    check_replay_fits,
    initial_state,
    resolve_models,
)
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import LoadedSpec, load_spec_text


def test_a_redacted_recording_still_fits_its_task(tmp_path: Path) -> None:
    prompt = "Fetch the repo with token ghp_" + "B" * 36 + " and count its files"
    path = tmp_path / "run.jsonl"
    Recorder(path).record(
        ChatRequest(purpose="plan", tier="cheap",
                    messages=(ChatMessage(role="user", content=f"Task:\n{prompt}\n"),)),
        ChatResponse(text="{}", model="m", prompt_tokens=1, completion_tokens=1, cost_usd=0,
                     cost_known=False, latency_ms=1),
    )
    check_replay_fits(path, prompt)  # the recorded prompt holds the token redacted
    with pytest.raises(UsageError, match="made for a different task"):
        check_replay_fits(path, "Another task entirely")


def _loaded(tmp_path: Path, text: str) -> LoadedSpec:
    return load_spec_text(text, "t.yml", root=tmp_path, name="t.yml")


@pytest.mark.parametrize(("settings", "environ", "spec_models", "expected"), [
    # --model wins over the spec, for every tier
    (RunSettings(model="m/flag", fallback_model="m/env"), {}, "{cheap: m/spec}",
     ("m/flag", "m/flag", "m/flag")),
    # the spec's tiers win over SELFCORRECT_MODEL, which fills the rest
    (RunSettings(fallback_model="m/env"), {}, "{cheap: m/spec}",
     ("m/spec", "m/env", "m/env")),
    # no model anywhere but a provider key: the defaults
    (RunSettings(), {"OPENAI_API_KEY": "sk-x"}, "{}",
     ("openai/gpt-4o-mini", "openai/gpt-4o", "openai/gpt-4o-mini")),
])
def test_model_precedence(tmp_path: Path, settings: RunSettings, environ: dict[str, str],
                          spec_models: str, expected: tuple[str, str, str]) -> None:
    loaded = _loaded(tmp_path, f"prompt: do it\nmodels: {spec_models}\n")
    tiers = resolve_models(loaded, settings, environ)
    assert (tiers.cheap, tiers.strong, tiers.judge) == expected


@pytest.mark.parametrize(("settings", "spec_models", "expected"), [
    (RunSettings(fallback_model="m/env"), "{judge: m/judge}", "m/judge"),  # the judge's
    (RunSettings(fallback_model="m/env"), "{judge: m/judge, review: m/rev}", "m/rev"),
    (RunSettings(model="m/flag"), "{review: m/rev}", "m/flag"),  # --model sets every tier
])
def test_the_reviewer_is_the_judges_model_unless_named(
        tmp_path: Path, settings: RunSettings, spec_models: str, expected: str) -> None:
    loaded = _loaded(tmp_path, f"prompt: do it\nmodels: {spec_models}\n")
    assert resolve_models(loaded, settings, {}).for_tier("review") == expected


def test_no_model_at_all_is_bad_usage_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no model is configured") as caught:
        resolve_models(_loaded(tmp_path, "prompt: do it\n"), RunSettings(), {})
    assert caught.value.exit_code == 2


def test_a_local_server_needs_no_provider_key(tmp_path: Path) -> None:
    settings = RunSettings(api_base="http://127.0.0.1:8765", model="openai/smollm2")
    assert resolve_models(_loaded(tmp_path, "prompt: do it\n"), settings, {}).cheap == (
        "openai/smollm2")


def test_initial_state_takes_settings_and_spec(tmp_path: Path) -> None:
    (tmp_path / "data.csv").write_text("a\n1\n")
    loaded = _loaded(tmp_path, "prompt: do it\ninputs: [data.csv]\n"
                               "contract: {timeout_s: 5}\n")
    settings = RunSettings(replay=Path("r.jsonl"), guidance="be brief", runtime="runsc")
    state = initial_state(loaded, ModelTiers(), settings, run_id="abc")
    assert (state.run_id, state.replayed, state.replay_file) == ("abc", True, "r.jsonl")
    assert state.guidance == "be brief" and state.runtime == "runsc"
    assert state.inputs == ["data.csv"] and state.output_name == "t.py"
    assert state.user_contract_fields == ["timeout_s"]


@pytest.mark.parametrize("model", ["foo/bar", "smollm2", "  "])
def test_a_model_litellm_cannot_route_is_bad_usage_up_front(model: str) -> None:
    with pytest.raises(UsageError, match="the cheap tier") as caught:
        check_models(ModelTiers(cheap=model), RunSettings())
    assert caught.value.exit_code == 2 and "openai/" in (caught.value.hint or "")


def test_known_providers_and_replays_pass() -> None:
    check_models(ModelTiers(cheap="ollama/llama3", strong="anthropic/claude-3-5-haiku-latest",
                            judge="openai/smollm2"), RunSettings())
    check_models(ModelTiers(cheap="foo/bar"), RunSettings(replay=Path("r.jsonl")))


def test_a_recording_that_names_its_task_is_held_to_it(tmp_path: Path) -> None:
    """A completion or a small model's prompt need not quote the task: the recording's
    header names the task by its prompt's digest instead."""
    path = tmp_path / "rec.jsonl"
    recorder = Recorder(path, task_sha256=task_digest("Complete double()."))
    request = ChatRequest(purpose="generate", tier="cheap", mode="completion", messages=(
        ChatMessage(role="user", content="def double(x):\n"),))
    recorder.record(request, ChatResponse(text="    return 2 * x\n", model="m",
                                          prompt_tokens=1, completion_tokens=1, cost_usd=0,
                                          cost_known=True, latency_ms=1))
    check_replay_fits(path, "Complete double().")
    with pytest.raises(UsageError, match="names another prompt's digest"):
        check_replay_fits(path, "Complete triple().")
