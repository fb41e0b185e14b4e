"""The live comment on the GitHub stand-in: one comment per run, found again by its marker;
notes about a slow model spaced out; and GitHub failing never stopping the run."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from selfcorrect_action.action.writes.live import LiveComment
from selfcorrect_action.github.naming import report_marker
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import RunState, Usage
from selfcorrect_action.spec import Budget, TaskSpec
from tests.fakes.github_server import BOT_LOGIN, DEFAULT_REPO, FakeGitHub

MARKER = report_marker("run=7.1 task=selfcorrect/issue-1")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _state(**usage: Any) -> RunState:
    spec = TaskSpec(prompt="p", budget=Budget(tokens=50_000, cost_usd=2.0))
    return RunState(run_id="r", started_at="t", spec_source="s", spec=spec, output_name="x.py",
                    contract=spec.contract, models=ModelTiers(), usage=Usage(**usage))


def _live(forge: PyGithubForge, number: int, clock: Clock | None = None) -> LiveComment:
    return LiveComment(forge, number, MARKER, task="issue #1", run_url="https://gh/run",
                       guidance="", secrets=["s3cr3t-value"], clock=clock or Clock(),
                       min_interval_s=3)


def _bodies(fake_github: FakeGitHub, number: int) -> list[str]:
    return [c.body for c in fake_github.comments(DEFAULT_REPO, number)]


def test_a_retried_start_edits_the_comment_it_made_before(forge: PyGithubForge,
                                                          fake_github: FakeGitHub) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "x", "b")
    posts = f"/repos/{DEFAULT_REPO}/issues/{number}/comments"
    _live(forge, number).start()
    assert len(fake_github.requests_to("POST", posts)) == 1
    fake_github.clear_requests()
    _live(forge, number).start()
    (body,) = _bodies(fake_github, number)
    assert MARKER in body
    assert fake_github.requests_to("POST", posts) == []


def test_notes_about_the_model_are_spaced_and_other_steps_ignored(
    forge: PyGithubForge, fake_github: FakeGitHub
) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "x", "b")
    clock = Clock()
    live = _live(forge, number, clock)
    live.start()
    live.on_event("llm", "waiting for the plan: 5 s so far")  # right after the start: held
    live.on_event("sandbox", "attempt 1 running")  # never a note of its own
    assert "waiting" not in _bodies(fake_github, number)[0]
    clock.now += 3
    live.on_event("llm", "waiting for the plan: 8 s so far")
    assert "8 s so far" in _bodies(fake_github, number)[0]
    assert "attempt 1 running" not in _bodies(fake_github, number)[0]


def test_each_state_is_shown_at_once_with_usage_against_the_caps(
    forge: PyGithubForge, fake_github: FakeGitHub
) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "x", "b")
    live = _live(forge, number)
    live.start()
    live.on_state(_state(tokens=12_345, cost_usd=0.25, llm_calls=2))  # no wait for the interval
    (body,) = _bodies(fake_github, number)
    assert "12,345" in body and "50,000" in body and "$0.25" in body


def test_github_failing_at_the_start_does_not_stop_the_run(
    forge: PyGithubForge, fake_github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "x", "b")
    path = f"/repos/{DEFAULT_REPO}/issues/{number}/comments"
    fake_github.fail("GET", path, 404, times=1)
    live = _live(forge, number)
    with caplog.at_level(logging.WARNING):
        live.start()
    assert f"could not post the live report on #{number}" in caplog.text
    assert _bodies(fake_github, number) == []
    live.on_state(_state())  # the next edit makes the comment after all
    (comment,) = fake_github.comments(DEFAULT_REPO, number)
    assert comment.user == BOT_LOGIN and MARKER in comment.body


def test_a_failed_edit_is_logged_and_the_next_one_tries_again(
    forge: PyGithubForge, fake_github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    number = fake_github.add_issue(DEFAULT_REPO, "x", "b")
    live = _live(forge, number)
    live.start()
    fake_github.fail("PATCH", "*", 404, times=1)
    with caplog.at_level(logging.WARNING):
        live.on_state(_state(tokens=1, llm_calls=1))
    assert f"could not update the live report on #{number}" in caplog.text
    live.on_state(_state(tokens=777, llm_calls=1))
    assert "777" in _bodies(fake_github, number)[0]
