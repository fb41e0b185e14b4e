"""Pull requests through the action's entry point against the GitHub stand-in: a spec
change validated (its one comment kept up to date, annotations when a fork's read-only
token cannot comment) and `/selfcorrect retry` on a pull request, which only re-runs what
selfcorrect itself opened. No Docker: each path ends before a task's sandbox starts."""

from __future__ import annotations

from typing import Any

from selfcorrect_action.github.naming import (
    VALIDATE_MARKER,
    approval_marker,
    body_digest,
    origin_marker,
    report_marker,
)
from tests.e2e.action.harness import MAINTAINER, OUTSIDER
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.conftest import Act

SPEC_PATH = ".selfcorrect/tasks/greet.yml"
GOOD, BAD = "prompt: print hello\n", "prompt: print hello\ncontract:\n  timeout_s: -1\n"
ISSUE = "```yaml\nprompt: print hello\n```\n"


def _spec_pull(github: FakeGitHub, spec: str) -> int:
    github.add_branch(DEFAULT_REPO, "edit-spec")
    github.commit_files(DEFAULT_REPO, "edit-spec", {SPEC_PATH: spec}, message="spec",
                        author=MAINTAINER)
    return github.add_pull(DEFAULT_REPO, "edit-spec", title="a task")


def _pull_event(github: FakeGitHub, number: int, action: str = "opened") -> dict[str, Any]:
    return github.event("pull_request", DEFAULT_REPO, number=number, action=action)


def test_a_bad_spec_fails_with_inline_problems_then_its_comment_is_updated(
    act: Act, github: FakeGitHub
) -> None:
    number = _spec_pull(github, BAD)
    run = act("pull_request", _pull_event(github, number), ref="edit-spec")
    assert (run.code, run.outputs["status"]) == (1, "invalid-spec")
    assert f"::error file={SPEC_PATH},line=3" in run.stdout
    (comment,) = github.comments(DEFAULT_REPO, number)
    assert VALIDATE_MARKER in comment.body and "greater than 0; got -1" in comment.body
    (red,) = github.check_runs(DEFAULT_REPO)
    assert (red.name, red.conclusion, red.head_sha) == (
        "selfcorrect / validate", "failure", github.pulls(DEFAULT_REPO)[0].head_sha)
    (mark,) = red.annotations
    assert (mark["path"], mark["start_line"], mark["annotation_level"]) == (SPEC_PATH, 3,
                                                                            "failure")
    assert "greater than 0; got -1" in str(mark["message"])
    github.commit_files(DEFAULT_REPO, "edit-spec", {SPEC_PATH: GOOD}, message="fix",
                        author=MAINTAINER)
    run = act("pull_request", _pull_event(github, number, "synchronize"), ref="edit-spec")
    assert (run.code, run.outputs["status"]) == (0, "valid")
    (comment,) = github.comments(DEFAULT_REPO, number)  # edited, not repeated
    assert "no problems" in comment.body
    green = github.check_runs(DEFAULT_REPO, github.pulls(DEFAULT_REPO)[0].head_sha)
    assert [(c.conclusion, c.annotations) for c in green] == [("success", [])]


def test_more_problems_than_one_request_takes_are_all_marked(act: Act,
                                                             github: FakeGitHub) -> None:
    """GitHub takes 50 annotations a request: the rest go out in updates."""
    spec = "prompt: print hello\n" + "".join(f"colour{n}: red\n" for n in range(60))
    number = _spec_pull(github, spec)
    run = act("pull_request", _pull_event(github, number), ref="edit-spec")
    assert run.code == 1
    (red,) = github.check_runs(DEFAULT_REPO)
    assert [a["start_line"] for a in red.annotations] == list(range(2, 62))


def test_a_pull_request_without_spec_changes_gets_no_comment(act: Act,
                                                             github: FakeGitHub) -> None:
    github.add_branch(DEFAULT_REPO, "docs")
    github.commit_files(DEFAULT_REPO, "docs", {"README.md": "more\n"}, message="docs")
    number = github.add_pull(DEFAULT_REPO, "docs")
    run = act("pull_request", _pull_event(github, number), ref="docs")
    assert (run.code, run.outputs["status"]) == (0, "valid")
    assert "no task spec (.selfcorrect/tasks/*.yml) changed" in run.stdout
    assert github.comments(DEFAULT_REPO, number) == []


def test_a_push_that_undoes_the_spec_change_clears_the_old_problems(
    act: Act, github: FakeGitHub
) -> None:
    github.add_branch(DEFAULT_REPO, "docs")
    github.commit_files(DEFAULT_REPO, "docs", {"README.md": "more\n"}, message="docs")
    number = github.add_pull(DEFAULT_REPO, "docs")
    github.add_comment(DEFAULT_REPO, number, f"{VALIDATE_MARKER}\n1 problem",
                       user=act.identity.login)
    act("pull_request", _pull_event(github, number, "synchronize"), ref="docs")
    (comment,) = github.comments(DEFAULT_REPO, number)
    assert "1 problem" not in comment.body


def test_a_fork_gets_annotations_when_its_token_cannot_comment(
    act: Act, github: FakeGitHub
) -> None:
    github.add_repo(f"{OUTSIDER}/hello-world", fork_of=DEFAULT_REPO)
    github.commit_files(f"{OUTSIDER}/hello-world", "main", {SPEC_PATH: "prompt: x\ncolour: r\n"},
                        message="m")
    number = github.add_pull(DEFAULT_REPO, f"{OUTSIDER}:main", title="fork", user=OUTSIDER)
    github.git(DEFAULT_REPO, "branch", "-f", "fork-head",
               github.refs(DEFAULT_REPO)[f"refs/pull/{number}/head"])
    run = act("pull_request", _pull_event(github, number), token=act.identity.read_token,
              ref="fork-head")
    assert run.code == 1
    assert f"::error file={SPEC_PATH}" in run.stdout
    assert "::warning::could not comment on #1 (a pull request from a fork gets a read-only " \
           "token)" in run.stdout
    assert github.comments(DEFAULT_REPO, number) == []
    assert github.check_runs(DEFAULT_REPO) == []
    assert "Add `checks: write`" in run.stdout and "comes from a fork" in run.stdout


def _bot_pull(act: Act, body: str, *, branch: str = "selfcorrect/issue-1") -> int:
    github = act.github
    github.add_branch(DEFAULT_REPO, branch)
    github.commit_files(DEFAULT_REPO, branch, {"greet.py": "print('hi')\n"}, message="m")
    return github.add_pull(DEFAULT_REPO, branch, body=body, user=act.identity.login)


def _retry(github: FakeGitHub, number: int, *, by: str = MAINTAINER) -> dict[str, Any]:
    comment = github.add_comment(DEFAULT_REPO, number, "/selfcorrect retry", user=by)
    return github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)


def _refusal(github: FakeGitHub, number: int) -> str:
    body = github.comments(DEFAULT_REPO, number)[-1].body
    assert "did not run" in body
    return body


def test_a_retry_on_someone_elses_pull_request_is_refused(act: Act,
                                                          github: FakeGitHub) -> None:
    number = _bot_pull(act, origin_marker("issue 1"), branch="feature")
    run = act("issue_comment", _retry(github, number))
    assert run.code == 0
    assert "this one's branch is feature" in _refusal(github, number)
    assert github.refs(DEFAULT_REPO, "refs/heads/selfcorrect/") == {}


def test_a_retry_on_a_pull_request_from_a_fork_is_refused(act: Act, github: FakeGitHub) -> None:
    github.add_repo(f"{OUTSIDER}/hello-world", fork_of=DEFAULT_REPO)
    github.add_branch(f"{OUTSIDER}/hello-world", "selfcorrect/issue-1")
    github.commit_files(f"{OUTSIDER}/hello-world", "selfcorrect/issue-1", {"x.py": "1\n"},
                        message="m")
    number = github.add_pull(DEFAULT_REPO, f"{OUTSIDER}:selfcorrect/issue-1", user=OUTSIDER,
                             body=origin_marker("issue 1"))
    act("issue_comment", _retry(github, number))
    assert f"comes from a fork ({OUTSIDER}/hello-world)" in _refusal(github, number)


def test_a_retry_on_our_pull_request_without_its_origin_note_is_refused(
    act: Act, github: FakeGitHub
) -> None:
    number = _bot_pull(act, "someone rewrote the description")
    act("issue_comment", _retry(github, number))
    assert "lost the hidden note" in _refusal(github, number)


def test_an_origin_with_a_superscript_digit_is_refused_not_a_crash(
    act: Act, github: FakeGitHub
) -> None:
    """A PR body edited to `issue ²`: str.isdigit says yes, int() refuses; the retry crashed
    with a traceback (issue 16, item 5)."""
    number = _bot_pull(act, origin_marker("issue \u00b2"))
    run = act("issue_comment", _retry(github, number))
    assert run.code == 0
    assert "is not a task selfcorrect can run again" in _refusal(github, number)


def test_an_origin_outside_the_repository_is_not_run(act: Act, github: FakeGitHub) -> None:
    number = _bot_pull(act, origin_marker("spec ../../etc/passwd"),
                       branch="selfcorrect/task-x")
    act("issue_comment", _retry(github, number))
    assert "is not a task selfcorrect can run again" in _refusal(github, number)


def test_a_retry_on_a_spec_pull_request_reads_the_spec_and_reports_its_problems(
    act: Act, github: FakeGitHub
) -> None:
    github.commit_files(DEFAULT_REPO, "main", {SPEC_PATH: BAD}, message="spec")
    number = _bot_pull(act, origin_marker(f"spec {SPEC_PATH}"),
                       branch="selfcorrect/task-greet")
    run = act("issue_comment", _retry(github, number))
    assert run.outputs["status"] == "invalid-spec"
    assert "greater than 0; got -1" in github.comments(DEFAULT_REPO, number)[-1].body


def test_a_retry_on_a_spec_pull_request_runs_it_on_that_branch(act: Act,
                                                               github: FakeGitHub) -> None:
    github.commit_files(DEFAULT_REPO, "main", {SPEC_PATH: GOOD}, message="spec")
    number = _bot_pull(act, origin_marker(f"spec {SPEC_PATH}"),
                       branch="selfcorrect/task-greet")
    run = act("issue_comment", _retry(github, number))
    assert (run.code, run.outputs["status"]) == (2, "error")  # no model: stops before the run
    assert f"task: {SPEC_PATH} -> selfcorrect/task-greet" in run.stdout
    assert "no model is configured" in github.comments(DEFAULT_REPO, number)[-1].body


def test_a_retry_on_an_issue_pull_request_needs_the_issue_still_approved(
    act: Act, github: FakeGitHub
) -> None:
    issue = github.add_issue(DEFAULT_REPO, "Greet", ISSUE, user=OUTSIDER)
    number = _bot_pull(act, origin_marker(f"issue {issue}"))
    act("issue_comment", _retry(github, number))
    assert f"issue #{issue} has no run started by its label" in _refusal(github, number)
    github.add_comment(DEFAULT_REPO, issue, f"{report_marker('run=1.1 task=x')}\n"
                       f"{approval_marker(body_digest(ISSUE))}", user=act.identity.login)
    run = act("issue_comment", _retry(github, number))
    assert run.code == 2  # approved: it starts, and stops for want of a model
    assert f"task: issue #{issue} -> selfcorrect/issue-1" in run.stdout
    assert "no model is configured" in github.comments(DEFAULT_REPO, number)[-1].body
