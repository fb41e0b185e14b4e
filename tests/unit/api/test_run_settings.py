"""The API's settings come from the one table: its arguments over the SELFCORRECT_*
variables over the defaults, a bad value named as the argument it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.api import run_settings, run_task
from selfcorrect_action.errors import UsageError
from selfcorrect_action.runs.settings import RunSettings


def test_arguments_win_over_the_environment() -> None:
    environ = {"SELFCORRECT_RUNTIME": "runsc", "SELFCORRECT_MODEL": "openai/gpt-4o-mini"}
    assert run_settings(environ).runtime == "runsc"
    chosen = run_settings(environ, runtime="runc", model="openai/gpt-4o",
                          replay=Path("r.jsonl"), guidance="use a log scale")
    assert (chosen.runtime, chosen.model, chosen.replay, chosen.guidance) == (
        "runc", "openai/gpt-4o", Path("r.jsonl"), "use a log scale")
    assert chosen.fallback_model == "openai/gpt-4o-mini"


def test_a_bad_argument_is_named() -> None:
    with pytest.raises(UsageError, match="argument runtime: expected one of runc, runsc"):
        run_settings({}, runtime="kata")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="argument api_base: 'localhost' is not"):
        run_settings({}, api_base="localhost")


def test_settings_and_their_shortcuts_do_not_mix(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="either settings or model"):
        run_task(prompt="Print hello.", settings=RunSettings(), model="openai/gpt-4o",
                 out_dir=tmp_path)


def test_recording_and_resuming_from_python() -> None:
    """Issue 37: recorded by default; an argument or the variable switches it off; a
    resume with more budget, and more budget without a resume refused."""
    assert run_settings({}).record_exchanges is True
    assert run_settings({"SELFCORRECT_RECORD_EXCHANGES": "0"}).record_exchanges is False
    assert run_settings({"SELFCORRECT_RECORD_EXCHANGES": "0"},
                        record_exchanges=True).record_exchanges is True
    chosen = run_settings({}, resume="abc123", more_attempts=2, more_usd=0.5)
    assert (chosen.resume, chosen.more_attempts, chosen.more_usd) == ("abc123", 2, 0.5)
    with pytest.raises(UsageError, match="go with resume"):
        run_settings({}, more_attempts=2)
    with pytest.raises(UsageError, match="SELFCORRECT_RECORD_EXCHANGES: expected yes or no"):
        run_settings({"SELFCORRECT_RECORD_EXCHANGES": "maybe"})
