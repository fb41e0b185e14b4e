"""GitHub failing while the action works: 5xx in the middle of a run, a 502 on a request
GitHub applied, and an outage that outlasts the retries."""

from __future__ import annotations

import pytest

from tests.e2e.action.harness import RunAction, labeled
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub

pytestmark = pytest.mark.docker
COMMENT_PATH = "/repos/octo-org/hello-world/issues/comments/*"


def test_500s_in_the_middle_of_a_run_are_retried_and_leave_no_duplicates(
    act: RunAction, github: FakeGitHub
) -> None:
    github.fail("PATCH", COMMENT_PATH, 500, times=2)
    github.fail("POST", "/repos/octo-org/hello-world/git/trees", 503, times=1)
    run = act("issues", labeled(github), replay="replays")
    assert run.returncode == 0, run.log
    assert len(github.pulls(DEFAULT_REPO)) == 1
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "/pull/" in comment.body


def test_a_502_after_github_made_the_pull_request_leaves_exactly_one(
    act: RunAction, github: FakeGitHub
) -> None:
    fault = github.fail("POST", "/repos/octo-org/hello-world/pulls", 502, after_apply=True)
    run = act("issues", labeled(github), replay="replays")
    assert run.returncode == 0, run.log
    assert fault.hits == 1
    assert len(github.pulls(DEFAULT_REPO)) == 1
    assert run.outputs["pr-url"].endswith("/pull/2")


def test_an_outage_that_outlasts_the_retries_is_said_on_the_issue(
    act: RunAction, github: FakeGitHub
) -> None:
    github.fail("POST", "/repos/octo-org/hello-world/pulls", 500, times=50)
    run = act("issues", labeled(github), replay="replays")
    assert run.returncode == 3, run.log
    assert github.pulls(DEFAULT_REPO) == []
    last = github.comments(DEFAULT_REPO, 1)[-1]
    assert "could not finish" in last.body and "500" in last.body
    assert len(github.comments(DEFAULT_REPO, 1)) == 1  # the live comment, replaced
