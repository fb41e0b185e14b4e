"""Retry comments, dispatch over spec files, pull request validation, and the split
plan/publish recipe, end to end in the action's image."""

from __future__ import annotations

import pytest

from selfcorrect_action.github.naming import approval_marker, body_digest
from tests.e2e.action.harness import BODY, MAINTAINER, OUTSIDER, SPEC, RunAction, labeled
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub

pytestmark = pytest.mark.docker
BRANCH = "selfcorrect/issue-1"


def _first_run(act: RunAction, github: FakeGitHub) -> int:
    run = act("issues", labeled(github), replay="replays")
    assert run.returncode == 0, run.log
    (pull,) = github.pulls(DEFAULT_REPO)
    return pull.number


def test_a_retry_on_the_bots_pull_request_pushes_a_new_commit_there(
    act: RunAction, github: FakeGitHub
) -> None:
    number = _first_run(act, github)
    first_head = github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    comment = github.add_comment(DEFAULT_REPO, number, "/selfcorrect retry label the axes",
                                 user=MAINTAINER)
    event = github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)
    run = act("issue_comment", event, replay="replays")
    assert run.returncode == 0, run.log
    assert len(github.pulls(DEFAULT_REPO)) == 1, "the same pull request, not another"
    head = github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    assert head != first_head
    assert github.git(DEFAULT_REPO, "rev-parse", f"{head}^").strip() == first_head  # no force
    reports = [c for c in github.comments(DEFAULT_REPO, number) if c.user == act.identity.login]
    assert reports and "label the axes" in reports[-1].body


def test_the_bots_own_comment_is_ignored_without_a_write(
    act: RunAction, github: FakeGitHub
) -> None:
    number = github.add_issue(DEFAULT_REPO, "x", BODY)
    comment = github.add_comment(DEFAULT_REPO, number, "/selfcorrect retry",
                                 user=act.identity.login)
    event = github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)
    github.clear_requests()
    run = act("issue_comment", event)
    assert run.returncode == 0, run.log
    assert "nothing to do" in run.stdout and run.outputs["status"] == "ignored"
    assert [r for r in github.requests if r.method != "GET"] == []


def test_a_retry_from_someone_without_write_access_is_refused(
    act: RunAction, github: FakeGitHub
) -> None:
    number = _first_run(act, github)
    comment = github.add_comment(DEFAULT_REPO, number, "/selfcorrect retry", user=OUTSIDER)
    event = github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)
    head = github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    run = act("issue_comment", event, replay="replays")
    assert run.returncode == 0 and run.outputs["status"] == "refused", run.log
    assert github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == head


def test_a_human_commit_on_the_bots_branch_is_never_overwritten(
    act: RunAction, github: FakeGitHub
) -> None:
    number = _first_run(act, github)
    human = github.commit_files(DEFAULT_REPO, BRANCH, {"scripts/sales_chart.py": "# mine\n"},
                                message="my own fix", author=MAINTAINER)
    comment = github.add_comment(DEFAULT_REPO, number, "/selfcorrect retry", user=MAINTAINER)
    event = github.event("issue_comment", DEFAULT_REPO, number=number, comment_id=comment)
    run = act("issue_comment", event, replay="replays")
    assert run.returncode == 1, run.log
    assert github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == human
    assert github.read_file(DEFAULT_REPO, BRANCH, "scripts/sales_chart.py") == b"# mine\n"
    last = github.comments(DEFAULT_REPO, number)[-1]
    assert "Not committed" in last.body and "did not make" in last.body


def test_dispatch_opens_one_pull_request_per_spec(act: RunAction, github: FakeGitHub) -> None:
    event = github.event("workflow_dispatch", DEFAULT_REPO, sender=MAINTAINER)
    run = act("workflow_dispatch", event, replay="replays")
    assert run.returncode == 0, run.log
    (pull,) = github.pulls(DEFAULT_REPO)
    assert pull.head.endswith(":selfcorrect/task-bar_chart")
    assert github.read_file(DEFAULT_REPO, "selfcorrect/task-bar_chart", "scripts/sales_chart.py")
    assert run.outputs["status"] == "passed"


def test_a_pull_request_with_a_bad_spec_fails_with_inline_problems(
    act: RunAction, github: FakeGitHub
) -> None:
    github.add_branch(DEFAULT_REPO, "edit-spec")
    github.commit_files(DEFAULT_REPO, "edit-spec", {
        ".selfcorrect/tasks/bar_chart.yml": SPEC.replace("timeout_s: 60", "timeout_s: -1")},
        message="break the spec", author=MAINTAINER)
    number = github.add_pull(DEFAULT_REPO, "edit-spec", title="tweak the chart task")
    event = github.event("pull_request", DEFAULT_REPO, number=number, action="opened")
    run = act("pull_request", event, ref="edit-spec")
    assert run.returncode == 1, run.log
    assert "::error file=.selfcorrect/tasks/bar_chart.yml,line=" in run.stdout
    (comment,) = github.comments(DEFAULT_REPO, number)
    assert "1 problem" in comment.body and "greater than 0; got -1" in comment.body
    github.commit_files(DEFAULT_REPO, "edit-spec", {".selfcorrect/tasks/bar_chart.yml": SPEC},
                        message="fix it", author=MAINTAINER)
    event = github.event("pull_request", DEFAULT_REPO, number=number, action="synchronize")
    run = act("pull_request", event, ref="edit-spec")
    assert run.returncode == 0, run.log
    (comment,) = github.comments(DEFAULT_REPO, number)  # updated, not repeated
    assert "no problems" in comment.body


def test_a_fork_pull_request_gets_annotations_when_it_cannot_get_a_comment(
    act: RunAction, github: FakeGitHub
) -> None:
    github.add_repo(f"{OUTSIDER}/hello-world", fork_of=DEFAULT_REPO)
    github.commit_files(f"{OUTSIDER}/hello-world", "main", {
        ".selfcorrect/tasks/bar_chart.yml": "prompt: x\ncolour: red\n"}, message="m")
    number = github.add_pull(DEFAULT_REPO, f"{OUTSIDER}:main", title="from a fork",
                             user=OUTSIDER)
    event = github.event("pull_request", DEFAULT_REPO, number=number, action="opened")
    ref = f"refs/pull/{number}/head"
    github.git(DEFAULT_REPO, "branch", "-f", "fork-head", github.refs(DEFAULT_REPO)[ref])
    run = act("pull_request", event, token=act.identity.read_token, ref="fork-head")
    assert run.returncode == 1, run.log
    assert "::error file=.selfcorrect/tasks/bar_chart.yml" in run.stdout
    assert "read-only token" in run.stdout
    assert github.comments(DEFAULT_REPO, number) == []


def test_the_split_recipe_plans_read_only_then_publishes(
    act: RunAction, github: FakeGitHub
) -> None:
    event = labeled(github)
    planned = act("issues", event, token=act.identity.read_token, replay="replays", mode="plan")
    assert planned.returncode == 0, planned.log
    assert github.pulls(DEFAULT_REPO) == [] and github.comments(DEFAULT_REPO, 1) == []
    assert "write plan saved" in planned.stdout
    # The publish job: a fresh workspace with only the downloaded plan in it.
    plan_files = sorted((act.last_workspace / "selfcorrect-plan").glob("*.json"))
    assert plan_files
    published = act("issues", event, mode="publish", plan_dir="selfcorrect-plan",
                    copy_in={"selfcorrect-plan": act.last_workspace / "selfcorrect-plan"})
    assert published.returncode == 0, published.log
    (pull,) = github.pulls(DEFAULT_REPO)
    assert published.outputs["pr-url"].endswith(f"/pull/{pull.number}")
    assert "selfcorrect:passed" in github.labels(DEFAULT_REPO, 1)
    assert [(c.head_sha, c.conclusion) for c in github.check_runs(DEFAULT_REPO)] == [
        (pull.head_sha, "success")]
    # The plan held no approval; the publisher wrote it, so a later retry is held to it.
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert approval_marker(body_digest(BODY)) in comment.body
