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
    tier_keys,
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


# ---- A missing provider key, refused before anything is spent (issue 38, item 7) ----

def _models(settings: RunSettings, environ: dict[str, str], spec: str = "") -> ModelTiers:
    return resolve_models(_loaded(Path("."), f"prompt: do it\n{spec}"), settings, environ)


def test_a_hosted_model_without_its_key_is_refused_naming_the_variable() -> None:
    with pytest.raises(UsageError, match="OPENAI_API_KEY is not set") as caught:
        _models(RunSettings(model="openai/gpt-4o-mini"), {"ANTHROPIC_API_KEY": "sk-ant"})
    assert "(the cheap, strong, judge and review tiers)" in caught.value.message
    assert caught.value.exit_code == 2
    hint = caught.value.hint or ""
    assert "export OPENAI_API_KEY=" in hint and "${{ secrets.OPENAI_API_KEY }}" in hint
    assert "--api-base" in hint and "--replay" in hint


def test_each_tier_is_checked_and_an_empty_key_is_no_key() -> None:
    settings = RunSettings(fallback_model="openai/gpt-4o-mini")
    with pytest.raises(UsageError, match=r"'anthropic/claude-3-5-haiku-latest' \(the judge "
                       r"tier\) needs an API key: ANTHROPIC_API_KEY is not set"):
        _models(settings, {"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": " "},
                "models: {judge: anthropic/claude-3-5-haiku-latest}\n")
    # A workflow's `${{ secrets.OPENAI_API_KEY }}` when the secret is not set: empty.
    with pytest.raises(UsageError, match="OPENAI_API_KEY is not set"):
        _models(settings, {"OPENAI_API_KEY": ""})


def test_the_run_environment_is_what_is_asked_not_the_process_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm reads os.environ itself; the check asks it about the run's `environ`."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-process")
    with pytest.raises(UsageError, match="OPENAI_API_KEY is not set"):
        _models(RunSettings(model="openai/gpt-4o-mini"), {})
    monkeypatch.delenv("OPENAI_API_KEY")
    assert _models(RunSettings(model="openai/gpt-4o-mini"), {"OPENAI_API_KEY": "sk-x"}).cheap \
        == "openai/gpt-4o-mini"


def test_either_of_geminis_variables_will_do() -> None:
    with pytest.raises(UsageError, match="GOOGLE_API_KEY or GEMINI_API_KEY is not set"):
        _models(RunSettings(model="gemini/gemini-1.5-flash"), {})
    _models(RunSettings(model="gemini/gemini-1.5-flash"), {"GEMINI_API_KEY": "g-x"})


@pytest.mark.parametrize("settings", [
    RunSettings(model="openai/smollm2", api_base="http://127.0.0.1:8080/v1"),  # local server
    RunSettings(model="openai/gpt-4o-mini", replay=Path("r.jsonl")),  # no model is called
    RunSettings(model="ollama/llama3"),  # a local provider: no key to have
])
def test_local_servers_and_replays_need_no_key(settings: RunSettings) -> None:
    assert _models(settings, {}).cheap == settings.model


def test_an_openai_base_from_the_environment_is_a_server_of_ones_own() -> None:
    _models(RunSettings(model="openai/local"), {"OPENAI_BASE_URL": "http://127.0.0.1:1/v1"})


@pytest.mark.parametrize(("model", "variable"), [
    ("vertex_ai/gemini-1.5-pro", "VERTEXAI_PROJECT"),
    ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", "AWS_ACCESS_KEY_ID"),
    ("azure/my-deployment", "AZURE_API_KEY"),
])
def test_providers_that_authenticate_another_way_are_warned_about(
        model: str, variable: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING", logger="selfcorrect_action.runs.prepare"):
        assert _models(RunSettings(model=model), {}).cheap == model
    (record,) = caplog.records
    assert variable in record.getMessage() and "the run goes on" in record.getMessage()


def test_tier_keys_say_whether_a_key_is_set_never_its_value() -> None:
    models = ModelTiers(cheap="openai/gpt-4o-mini", strong="anthropic/claude-3-5-haiku-latest",
                        judge="openai/gpt-4o-mini")
    found = tier_keys(models, RunSettings(), {"OPENAI_API_KEY": "sk-secret-value"})
    assert [(k.tiers, k.state, k.variables) for k in found] == [
        (("cheap", "judge"), "set", ("OPENAI_API_KEY",)),
        (("strong",), "missing", ("ANTHROPIC_API_KEY",)),
    ]
    assert "sk-secret-value" not in repr(found)


def test_the_no_model_hint_names_a_local_server() -> None:
    with pytest.raises(UsageError) as caught:
        _models(RunSettings(), {})
    assert "--api-base URL" in (caught.value.hint or "")
