"""Run settings: flags and inputs first, then the environment, each value checked with the
name the user wrote it under."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs import settings
from selfcorrect_action.runs.settings import RunSettings, from_environment


def test_environment_fills_what_was_not_given() -> None:
    environ = {"SELFCORRECT_MODEL": "openai/x", "SELFCORRECT_LLM_TIMEOUT_S": "30",
               "SELFCORRECT_LLM_RETRIES": "0", "SELFCORRECT_API_BASE": "http://h:1/v1"}
    chosen = from_environment(environ)
    assert chosen.fallback_model == "openai/x" and chosen.model is None
    assert (chosen.llm_timeout_s, chosen.llm_retries) == (30.0, 0)
    assert chosen.api_base == "http://h:1/v1"


def test_given_values_win_over_the_environment() -> None:
    chosen = from_environment({"SELFCORRECT_LLM_TIMEOUT_S": "30"}, llm_timeout_s=5.0,
                              model=None)
    assert chosen.llm_timeout_s == 5.0 and chosen.model is None


def test_defaults_without_anything() -> None:
    chosen = from_environment({})
    assert (chosen.llm_timeout_s, chosen.llm_retries, chosen.runtime) == (180.0, 3, "runc")


@pytest.mark.parametrize(("variable", "raw"), [
    ("SELFCORRECT_LLM_TIMEOUT_S", "soon"), ("SELFCORRECT_LLM_TIMEOUT_S", "0"),
    ("SELFCORRECT_LLM_TIMEOUT_S", "nan"), ("SELFCORRECT_LLM_TIMEOUT_S", "99999"),
    ("SELFCORRECT_LLM_RETRIES", "-1"), ("SELFCORRECT_LLM_RETRIES", "2.5"),
    ("SELFCORRECT_LLM_RETRIES", "11"), ("SELFCORRECT_API_BASE", "localhost:8080"),
    ("SELFCORRECT_API_BASE", "ftp://h/"), ("SELFCORRECT_API_BASE", "http://h:port/"),
])
def test_bad_environment_values_name_the_variable(variable: str, raw: str) -> None:
    with pytest.raises(UsageError, match=variable) as caught:
        from_environment({variable: raw})
    assert caught.value.exit_code == 2 and caught.value.hint


def test_a_flag_is_named_as_the_user_wrote_it() -> None:
    with pytest.raises(UsageError, match="--api-base: 'htp://x' is not an http"):
        settings.api_base("htp://x", "--api-base")


# One precedence table for every front end: the CLI's flag and the action's input both win
# over the SELFCORRECT_* variable, which wins over the default. Each row: the setting, the
# value written as a flag/input, as the variable, and what each reads back as.
ROWS = [
    ("api_base", "http://flag:1/v1", "http://env:2/v1", "http://flag:1/v1", "http://env:2/v1"),
    ("llm_timeout_s", "5", "30", 5.0, 30.0),
    ("llm_retries", "1", "0", 1, 0),
    ("structured_output", "json-schema", "off", "json-schema", "off"),
    ("runtime", "runsc", "runsc", "runsc", "runsc"),
    ("sandbox_image", "img:flag", "img:env", "img:flag", "img:env"),
]


def _cli(argv: list[str], environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
         ) -> settings.Resolved:
    from selfcorrect_action import cli

    for variable in [row.variable for row in settings.SETTINGS if row.variable]:
        monkeypatch.delenv(variable, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    args = cli.build_parser().parse_args(["config", *argv])
    resolved: settings.Resolved = cli._resolved_settings(args)
    return resolved


def _action(inputs: dict[str, str], environ: dict[str, str]) -> RunSettings:
    from selfcorrect_action.action.inputs import read_inputs
    from selfcorrect_action.action.task import Task
    from selfcorrect_action.action.task_run import resolve_task_settings
    from selfcorrect_action.spec import load_spec_text

    loaded = load_spec_text("prompt: p\n", "t.yml", root=Path("."), name="t.yml")
    task = Task(loaded, origin="spec t.yml", label="t.yml", title="t", branch="b")
    full = {"INPUT_GITHUB-TOKEN": "t", **environ,
            **{f"INPUT_{name.upper()}": value for name, value in inputs.items()}}
    return resolve_task_settings(task, read_inputs(full), full).settings


@pytest.mark.parametrize(("name", "as_flag", "as_env", "from_flag", "from_env"), ROWS)
def test_cli_and_action_read_each_setting_in_the_same_order(
        name: str, as_flag: str, as_env: str, from_flag: object, from_env: object,
        monkeypatch: pytest.MonkeyPatch) -> None:
    row = settings.SETTING[name]
    assert row.flag and row.action_input and row.variable
    environ = {row.variable: as_env}
    both = _cli([row.flag, as_flag], environ, monkeypatch)
    assert getattr(both.settings, name) == from_flag and both.sources[name] == row.flag
    assert getattr(_cli([], environ, monkeypatch).settings, name) == from_env
    assert _cli([], environ, monkeypatch).sources[name] == row.variable
    default = getattr(RunSettings(), name)
    assert getattr(_cli([], {}, monkeypatch).settings, name) == default
    assert _cli([], {}, monkeypatch).sources[name] == "default"
    action = _action({row.action_input: as_flag}, environ)
    assert getattr(action, name) == from_flag
    assert getattr(_action({}, environ), name) == from_env, \
        "the action ignored the environment variable (it used to)"
    # The runner passes an input left at action.yml's empty default as "".
    assert getattr(_action({row.action_input: ""}, environ), name) == from_env
    assert getattr(_action({}, {}), name) == default


def test_a_bad_input_is_named_as_the_workflow_wrote_it() -> None:
    with pytest.raises(UsageError, match="input llm-timeout: expected seconds"):
        _action({"llm-timeout": "soon"}, {})
    with pytest.raises(UsageError, match="SELFCORRECT_RUNTIME: expected one of runc, runsc"):
        _action({}, {"SELFCORRECT_RUNTIME": "kata"})


def test_the_action_ignores_mlflows_variables_the_cli_follows(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A job may set MLFLOW_TRACKING_URI for its own steps; the action's image has no mlflow,
    so following it would refuse every run."""
    environ = {"MLFLOW_TRACKING_URI": "http://127.0.0.1:5000",
               "SELFCORRECT_MLFLOW_TRACES": "1"}
    assert _cli([], environ, monkeypatch).settings.mlflow == "http://127.0.0.1:5000"
    chosen = _action({}, environ)
    assert chosen.mlflow is None and not chosen.mlflow_traces


def test_the_action_model_inputs_fill_their_tiers() -> None:
    chosen = _action({"model": "openai/a", "strong-model": "openai/b"},
                     {"SELFCORRECT_MODEL": "openai/fallback"})
    assert (chosen.model, chosen.strong_model, chosen.fallback_model) == (
        "openai/a", "openai/b", "openai/fallback")


def test_config_prints_every_setting_with_its_source(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from selfcorrect_action.cli import main

    for variable in [row.variable for row in settings.SETTINGS if row.variable]:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("SELFCORRECT_LLM_RETRIES", "2")
    assert main(["config", "--json", "--model", "openai/x"]) == 0
    shown = json.loads(capsys.readouterr().out)["settings"]
    assert set(shown) == {row.name for row in settings.SETTINGS}
    assert shown["model"] == {"value": "openai/x", "source": "--model"}
    assert shown["llm_retries"] == {"value": 2, "source": "SELFCORRECT_LLM_RETRIES"}
    assert shown["llm_timeout_s"] == {"value": 180.0, "source": "default"}
    assert main(["config"]) == 0
    text = capsys.readouterr().out
    assert "llm_retries" in text and "SELFCORRECT_LLM_RETRIES" in text
    monkeypatch.setenv("SELFCORRECT_LLM_RETRIES", "many")
    assert main(["config"]) == 2
    assert "SELFCORRECT_LLM_RETRIES: expected a whole number" in capsys.readouterr().err


def test_the_log_line_names_what_is_not_default_and_hides_credentials() -> None:
    resolved = settings.resolve({"SELFCORRECT_API_BASE": "https://me:sk-123@gw.example/v1"},
                                {"model": settings.Given("openai/x", "input model")})
    line = settings.described(resolved)
    assert "model=openai/x (input model)" in line
    assert "api_base=https://***@gw.example/v1 (SELFCORRECT_API_BASE)" in line
    assert "sk-123" not in line and "llm_timeout_s" not in line
