"""`selfcorrect config` says whether each model tier's key is set, never its value (issue
38, item 7), through cli.main as a user types it."""

from __future__ import annotations

import json

import pytest

from selfcorrect_action.cli import main
from selfcorrect_action.runs import settings

SECRET = "sk-proj-" + "k" * 40


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in [row.variable for row in settings.SETTINGS if row.variable]:
        monkeypatch.delenv(variable, raising=False)
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


def test_config_says_which_tiers_key_is_set_and_never_its_value(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert main(["config", "--json"]) == 0  # the default models
    out = capsys.readouterr().out
    keys = json.loads(out)["keys"]
    assert [(k["tiers"], k["model"], k["state"], k["variables"]) for k in keys] == [
        (["cheap", "judge"], "openai/gpt-4o-mini", "set", ["OPENAI_API_KEY"]),
        (["strong"], "openai/gpt-4o", "set", ["OPENAI_API_KEY"]),
    ]
    assert main(["config", "--model", "anthropic/claude-3-5-haiku-latest"]) == 0
    text = capsys.readouterr().out
    assert SECRET not in out + text
    (line,) = text.split("model keys", 1)[1].splitlines()[1:]
    assert line.split()[:5] == ["cheap,", "strong,", "judge,", "review",
                                "anthropic/claude-3-5-haiku-latest"]
    assert line.endswith("ANTHROPIC_API_KEY not set: a run would be refused")


def test_config_needs_no_key_for_a_local_server_or_a_replay(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "--json", "--model", "openai/local",
                 "--api-base", "http://127.0.0.1:8080/v1"]) == 0
    (key,) = json.loads(capsys.readouterr().out)["keys"]
    assert key["state"] == "not_needed" and "--api-base" in key["said"]
    assert main(["config", "--json", "--model", "ollama/llama3"]) == 0
    (key,) = json.loads(capsys.readouterr().out)["keys"]
    assert key["state"] == "not_needed"
