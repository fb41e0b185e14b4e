"""Reading the runner's GITHUB_* variables and event file: outside Actions, or with an event
file that is not an event, the action stops with what is wrong and where."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.action.context import read_context
from selfcorrect_action.errors import UsageError


def _environ(event: Path) -> dict[str, str]:
    return {"GITHUB_EVENT_NAME": "issues", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": "o/r"}


def test_outside_actions_it_says_to_use_run_instead() -> None:
    with pytest.raises(UsageError, match="GITHUB_EVENT_NAME is not set") as caught:
        read_context({})
    assert "selfcorrect run" in (caught.value.hint or "")


def test_github_coms_defaults_fill_what_the_runner_left_out(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text('{"action": "labeled"}')
    context = read_context(_environ(event))
    assert (context.api_url, context.server_url) == ("https://api.github.com",
                                                     "https://github.com")
    assert (context.run_key, context.output_file, context.summary_file) == ("0.1", None, None)
    assert context.run_url == "https://github.com/o/r/actions/runs/0"
    assert context.event == {"action": "labeled"}


@pytest.mark.parametrize(("content", "expected"), [
    ("{not json", "not a JSON event payload"),
    ("[1, 2]", "the payload is not a JSON object"),
])
def test_an_event_file_that_is_no_event_is_refused(tmp_path: Path, content: str,
                                                   expected: str) -> None:
    event = tmp_path / "event.json"
    event.write_text(content)
    with pytest.raises(UsageError, match=f"GITHUB_EVENT_PATH {event}: {expected}"):
        read_context(_environ(event))


def test_a_missing_event_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=f"GITHUB_EVENT_PATH {tmp_path / 'gone.json'}: "):
        read_context(_environ(tmp_path / "gone.json"))
