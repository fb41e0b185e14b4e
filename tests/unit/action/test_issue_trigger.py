"""An issue labelled `selfcorrect`, and `/selfcorrect retry` on it, through the action's entry
point against the GitHub stand-in: who may start a run, what a bad issue is told, and what
is said when a task stops before its sandbox starts. No Docker: every path here ends before
a task would run (tests/e2e/action runs the ones that do)."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.naming import approval_marker, body_digest, report_marker
from tests.e2e.action.harness import MAINTAINER, OUTSIDER, ROOT
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.conftest import Act

BODY = "Please greet.\n\n```yaml\nprompt: print hello\n```\n"


def _labeled(github: FakeGitHub, *, by: str = MAINTAINER, body: str = BODY) -> dict[str, Any]:
    number = github.add_issue(DEFAULT_REPO, "Greet", body, user=OUTSIDER, labels=["selfcorrect"])
    return github.event("issues", DEFAULT_REPO, action="labeled", number=number,
                        label="selfcorrect", sender=by)


def _retry_event(github: FakeGitHub, number: int, text: str = "/selfcorrect retry",
                 *, by: str = MAINTAINER) -> dict[str, Any]:
    comment = github.add_comment(DEFAULT_REPO, number, text, user=by)
    return github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)


def _approve(act: Act, number: int, body: str = BODY) -> None:
    """What the labelled run leaves: the bot's report comment with the approved digest."""
    act.github.add_comment(DEFAULT_REPO, number, f"{report_marker('run=1.1 task=x')}\n"
                           f"{approval_marker(body_digest(body))}\nreport",
                           user=act.identity.login)


def test_a_labeler_without_write_access_is_refused_and_the_label_removed(
    act: Act, github: FakeGitHub
) -> None:
    run = act("issues", _labeled(github, by=OUTSIDER))
    assert (run.code, run.outputs["status"]) == (0, "refused")
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "did not run" in comment.body and "write access" in comment.body
    assert r"can add the \`selfcorrect\` label instead" in comment.body
    assert "selfcorrect" not in github.labels(DEFAULT_REPO, 1)
    assert "::notice::selfcorrect did not run" in run.stdout


def test_a_malformed_issue_is_answered_with_located_problems_and_the_failed_label(
    act: Act, github: FakeGitHub
) -> None:
    body = "```yaml\nprompt: draw it\ncontract:\n  timeout_s: -3\n```\n"
    run = act("issues", _labeled(github, body=body))
    assert (run.code, run.outputs["status"]) == (1, "invalid-spec")
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "could not read the task" in comment.body and ":3:" in comment.body
    assert "selfcorrect:failed" in github.labels(DEFAULT_REPO, 1)
    assert "::error title=selfcorrect%3A the task in the issue::" in run.stdout
    assert github.pulls(DEFAULT_REPO) == []


def test_a_task_that_stops_before_its_run_says_why_on_the_issue(
    act: Act, github: FakeGitHub
) -> None:
    """No model input and no replay: the run cannot start, and the issue says how to fix it
    instead of showing nothing (the comment is the one the live report would have used)."""
    run = act("issues", _labeled(github))
    assert (run.code, run.outputs["status"]) == (2, "error")
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "could not finish issue #1" in comment.body
    assert "no model is configured" in comment.body and "How to fix it" in comment.body
    assert report_marker("run=4242.1 task=selfcorrect/issue-1") in comment.body
    assert "selfcorrect:failed" in github.labels(DEFAULT_REPO, 1)
    assert "::error::issue #1: no model is configured" in run.stdout
    assert github.pulls(DEFAULT_REPO) == []


def test_an_error_comment_keeps_the_approval_so_the_retry_it_suggests_runs(
    act: Act, github: FakeGitHub
) -> None:
    """The error comment replaces the live report; it used to drop the approval marker, and
    the `/selfcorrect retry` it tells the maintainer to comment was then refused as an
    unreviewed edit."""
    act("issues", _labeled(github))
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert approval_marker(body_digest(BODY)) in comment.body
    retried = act("issue_comment", _retry_event(github, 1))
    assert retried.outputs.get("status") != "refused", retried.stdout
    assert "no model is configured" in retried.stdout


def test_a_second_failure_edits_the_same_comment(act: Act, github: FakeGitHub) -> None:
    event = _labeled(github)
    act("issues", event)
    act("issues", event)
    assert len(github.comments(DEFAULT_REPO, 1)) == 1


def test_a_replay_input_naming_no_file_is_a_usage_error(act: Act, github: FakeGitHub) -> None:
    with pytest.raises(UsageError, match=r"input replay: replays/none.jsonl is not a file"):
        act("issues", _labeled(github), replay="replays/none.jsonl")


def test_in_mode_plan_a_refusal_is_planned_and_the_token_never_writes(
    act: Act, github: FakeGitHub
) -> None:
    github.clear_requests()
    run = act("issues", _labeled(github, by=OUTSIDER), token=act.identity.read_token, mode="plan")
    assert (run.code, run.outputs["status"], run.outputs["has-plan"]) == (0, "refused", "true")
    assert [r for r in github.requests if r.method != "GET"] == []
    assert github.comments(DEFAULT_REPO, 1) == []
    assert "selfcorrect" in github.labels(DEFAULT_REPO, 1)  # a read-only token cannot remove it
    (plan,) = (run.workspace / "selfcorrect-plan").glob("*.json")
    assert "did not run" in plan.read_text()


def test_a_retry_on_an_approved_issue_runs_it_with_the_guidance(
    act: Act, github: FakeGitHub
) -> None:
    number = github.add_issue(DEFAULT_REPO, "Greet", BODY, user=OUTSIDER)
    _approve(act, number)
    run = act("issue_comment", _retry_event(github, number, "/selfcorrect retry use print"))
    assert (run.code, run.outputs["status"]) == (2, "error")
    assert "task: issue #1 -> selfcorrect/issue-1" in run.stdout
    assert "no model is configured" in github.comments(DEFAULT_REPO, number)[-1].body


def test_a_retry_from_someone_without_write_access_is_refused(
    act: Act, github: FakeGitHub
) -> None:
    number = github.add_issue(DEFAULT_REPO, "Greet", BODY, user=OUTSIDER)
    _approve(act, number)
    run = act("issue_comment", _retry_event(github, number, by=OUTSIDER))
    assert (run.code, run.outputs["status"]) == (0, "refused")
    last = github.comments(DEFAULT_REPO, number)[-1]
    assert "@\u2060visitor has read access" in last.body  # named, never pinged
    assert r"Ask someone with write access to comment \`/selfcorrect retry\`" in last.body


def test_a_retry_of_an_issue_edited_into_a_bad_spec_reports_its_problems(
    act: Act, github: FakeGitHub
) -> None:
    bad = "```yaml\nprompt: x\nkind: scirpt\n```\n"
    number = github.add_issue(DEFAULT_REPO, "Greet", bad, user=OUTSIDER)
    _approve(act, number, bad)  # approved as it is: the text itself is wrong
    run = act("issue_comment", _retry_event(github, number))
    # (The exit code is 0 here but 1 for the same issue labelled: on_retry maps every
    # refusal to 0. Not pinned until that is decided.)
    assert run.outputs["status"] == "invalid-spec"
    last = github.comments(DEFAULT_REPO, number)[-1]
    assert "could not read the task" in last.body and "kind" in last.body
    assert "selfcorrect:failed" in github.labels(DEFAULT_REPO, number)


def test_the_bots_own_comment_is_ignored_without_a_write(act: Act, github: FakeGitHub) -> None:
    number = github.add_issue(DEFAULT_REPO, "Greet", BODY)
    event = _retry_event(github, number, by=act.identity.login)
    github.clear_requests()
    run = act("issue_comment", event)
    assert (run.code, run.outputs["status"], run.outputs["has-plan"]) == (0, "ignored", "false")
    assert "::notice title=selfcorrect::nothing to do" in run.stdout
    assert github.requests == []


def test_a_refusal_github_will_not_take_is_still_said_in_the_log(
    act: Act, github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    event = _labeled(github, by=OUTSIDER)
    github.fail("POST", f"/repos/{DEFAULT_REPO}/issues/1/comments", 404)
    github.fail("DELETE", re.compile(r".*/labels/selfcorrect$"), 403,
                body={"message": "Resource not accessible by integration"})
    with caplog.at_level(logging.WARNING):
        run = act("issues", event)
    assert (run.code, run.outputs["status"]) == (0, "refused")
    assert "::notice::selfcorrect did not run" in run.stdout
    assert "::warning::could not comment on #1: " in run.stdout
    assert github.comments(DEFAULT_REPO, 1) == []
    assert "selfcorrect" in github.labels(DEFAULT_REPO, 1)  # its removal failed, quietly
    assert "removing the label 'selfcorrect' from #1" in caplog.text


def test_a_recording_of_another_task_is_refused_on_the_issue(act: Act,
                                                             github: FakeGitHub) -> None:
    recording = (ROOT / "examples/replays/two_sum.jsonl").read_text()
    github.commit_files(DEFAULT_REPO, "main", {"replays/issue-1.jsonl": recording},
                        message="a recording")
    run = act("issues", _labeled(github), replay="replays")
    assert (run.code, run.outputs["status"]) == (2, "error")
    body = github.comments(DEFAULT_REPO, 1)[-1].body
    assert "replays/issue-1.jsonl" in body and "made for a different task" in body
