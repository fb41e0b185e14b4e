"""Run settings: flags and inputs first, then the environment, each value checked with the
name the user wrote it under."""

from __future__ import annotations

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs import settings
from selfcorrect_action.runs.settings import from_environment


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
