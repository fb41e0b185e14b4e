"""Inputs as the runner passes them (INPUT_<NAME>, hyphens kept), checked by their names."""

from __future__ import annotations

import pytest

from selfcorrect_action.action.inputs import read_inputs
from selfcorrect_action.errors import UsageError

TOKEN = {"INPUT_GITHUB-TOKEN": "ghs_" + "a" * 36}


def test_defaults_as_action_yml_fills_them() -> None:
    inputs = read_inputs({**TOKEN, "INPUT_TASKS": ".selfcorrect/tasks/*.yml",
                          "INPUT_TRIGGER-LABEL": "selfcorrect", "INPUT_MODE": "run",
                          "INPUT_DRAFT-ON-FAILURE": "false", "INPUT_MODEL": ""})
    assert inputs.model is None and inputs.mode == "run" and not inputs.draft_on_failure
    assert inputs.tasks == ".selfcorrect/tasks/*.yml" and inputs.sandbox_runtime is None
    assert inputs.update is None


def test_every_input_is_read() -> None:
    inputs = read_inputs({**TOKEN, "INPUT_MODEL": "openai/x", "INPUT_STRONG-MODEL": "openai/y",
                          "INPUT_JUDGE-MODEL": "openai/z", "INPUT_API-BASE": "http://h:1/v1",
                          "INPUT_SANDBOX-RUNTIME": "runsc", "INPUT_SANDBOX-IMAGE": "img:1",
                          "INPUT_PATCH-ATTEMPTS": "2", "INPUT_RETHINK-ATTEMPTS": "0",
                          "INPUT_MAX-TOKENS": "9000", "INPUT_MAX-COST-USD": "$0.25",
                          "INPUT_DRAFT-ON-FAILURE": "TRUE", "INPUT_BASE-BRANCH": "dev",
                          "INPUT_REPLAY": "r/x.jsonl", "INPUT_LLM-TIMEOUT": "30",
                          "INPUT_LLM-RETRIES": "1", "INPUT_MODE": "plan",
                          "INPUT_PLAN-DIR": "out/plan", "INPUT_UPDATE": "regenerate"})
    assert (inputs.strong_model, inputs.judge_model, inputs.api_base) == (
        "openai/y", "openai/z", "http://h:1/v1")
    assert (inputs.patch_attempts, inputs.rethink_attempts, inputs.max_tokens) == (2, 0, 9000)
    assert inputs.max_cost_usd == 0.25 and inputs.draft_on_failure
    assert (inputs.llm_timeout_s, inputs.llm_retries, inputs.mode) == (30.0, 1, "plan")
    assert inputs.update == "regenerate"


@pytest.mark.parametrize(("name", "value", "says"), [
    ("INPUT_SANDBOX-RUNTIME", "kata", "input sandbox-runtime"),
    ("INPUT_PATCH-ATTEMPTS", "many", "input patch-attempts"),
    ("INPUT_PATCH-ATTEMPTS", "99", "input patch-attempts"),
    ("INPUT_MAX-COST-USD", "cheap", "input max-cost-usd"),
    ("INPUT_MAX-COST-USD", "-1", "input max-cost-usd"),
    ("INPUT_DRAFT-ON-FAILURE", "yes", "input draft-on-failure"),
    ("INPUT_API-BASE", "localhost:1", "input api-base"),
    ("INPUT_REPLAY", "/etc/passwd", "input replay"),
    ("INPUT_REPLAY", "../outside.jsonl", "input replay"),
    ("INPUT_MODE", "yolo", "input mode"),
    ("INPUT_UPDATE", "always", "input update"),
    ("INPUT_LLM-TIMEOUT", "0", "input llm-timeout"),
])
def test_bad_inputs_are_named_with_a_fix(name: str, value: str, says: str) -> None:
    with pytest.raises(UsageError, match=says) as caught:
        read_inputs({**TOKEN, name: value})
    assert caught.value.hint and caught.value.exit_code == 2


def test_an_empty_token_says_what_to_pass() -> None:
    with pytest.raises(UsageError, match="github-token") as caught:
        read_inputs({"INPUT_GITHUB-TOKEN": "  "})
    assert "github.token" in (caught.value.hint or "")
