"""What a `mode: publish` job may write, from its own event: a plan from another job is
checked against it (tests/unit/commands/test_action_cmd.py applies plans end to end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.env import ActionEnv, open_env
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.writes.plan import PlannedCheckRun, PlannedCommit, WritePlan
from selfcorrect_action.action.writes.targets import publish_targets
from selfcorrect_action.github.events import Dispatch, RetryComment
from selfcorrect_action.github.forge import CheckRunOutput, FileChange
from tests.e2e.action.harness import OUTSIDER
from tests.fakes.github_server import BOT_LOGIN, DEFAULT_REPO, FakeGitHub
from tests.unit.github.conftest import MakeForge


@pytest.fixture
def env(tmp_path: Path, make_forge: MakeForge, fake_github: FakeGitHub) -> ActionEnv:
    context = ActionContext(event_name="issue_comment", event={}, repository=DEFAULT_REPO,
                            api_url=fake_github.api_url, server_url="https://gh.example",
                            workspace=tmp_path, run_id="9", run_attempt="1", output_file=None,
                            summary_file=None)
    return open_env(context, ActionInputs(github_token="t"), make_forge(), {}, [],
                     lambda step, message: None)


def _commit_to(branch: str) -> WritePlan:
    return WritePlan(repository=DEFAULT_REPO, task="t", status="passed", commit=PlannedCommit(
        branch=branch, base_branch="main", message="m",
        files=[FileChange(path="greet.py", content="print('hi')\n")]))


def _retry(number: int, *, on_pr: bool) -> RetryComment:
    return RetryComment(repository=DEFAULT_REPO, actor="maria", number=number,
                        on_pull_request=on_pr, comment_id=1, guidance="")


def test_a_retry_on_an_issue_may_commit_to_that_issues_branch_only(env: ActionEnv) -> None:
    targets = publish_targets(_retry(3, on_pr=False), env)
    assert targets.problem_with(_commit_to("selfcorrect/issue-3")) is None
    assert targets.problem_with(_commit_to("selfcorrect/issue-4")) == \
        "it commits to selfcorrect/issue-4, which is not this event's branch"


def test_a_retry_on_a_pull_request_may_commit_to_its_head_unless_a_fork(
    env: ActionEnv, fake_github: FakeGitHub
) -> None:
    fake_github.add_branch(DEFAULT_REPO, "selfcorrect/issue-1")
    fake_github.commit_files(DEFAULT_REPO, "selfcorrect/issue-1", {"a.py": "1\n"}, message="m")
    ours = fake_github.add_pull(DEFAULT_REPO, "selfcorrect/issue-1", user=BOT_LOGIN)
    assert publish_targets(_retry(ours, on_pr=True), env).problem_with(
        _commit_to("selfcorrect/issue-1")) is None
    fake_github.add_user(OUTSIDER)
    fork = f"{OUTSIDER}/hello-world"
    fake_github.add_repo(fork, fork_of=DEFAULT_REPO)
    fake_github.add_branch(fork, "selfcorrect/issue-9")
    fake_github.commit_files(fork, "selfcorrect/issue-9", {"b.py": "1\n"}, message="m")
    theirs = fake_github.add_pull(DEFAULT_REPO, f"{OUTSIDER}:selfcorrect/issue-9", user=OUTSIDER)
    assert "not this event's branch" in (publish_targets(_retry(theirs, on_pr=True), env)
                                         .problem_with(_commit_to("selfcorrect/issue-9")) or "")


def test_a_dispatch_may_commit_to_task_branches_only(env: ActionEnv) -> None:
    targets = publish_targets(Dispatch(repository=DEFAULT_REPO, actor="maria",
                                       ref="refs/heads/main"), env)
    assert targets.problem_with(_commit_to("selfcorrect/task-report")) is None
    assert "not this event's branch" in (targets.problem_with(
        _commit_to("selfcorrect/issue-1")) or "")


def test_a_check_run_goes_only_on_this_events_branch(env: ActionEnv) -> None:
    """A failed run commits nothing: its check run still names the branch whose pull
    request head it may mark, and that branch must be this event's."""
    def check_for(branch: str) -> WritePlan:
        return WritePlan(repository=DEFAULT_REPO, task="t", status="stopped", run_id="abc",
                         check_run=PlannedCheckRun(branch=branch, output=CheckRunOutput(
                             name="selfcorrect / issue #3", conclusion="failure", title="t",
                             summary="s", external_id="selfcorrect run abc")))

    targets = publish_targets(_retry(3, on_pr=False), env)
    assert targets.problem_with(check_for("selfcorrect/issue-3")) is None
    assert targets.problem_with(check_for("selfcorrect/issue-4")) == (
        "it writes a check run for selfcorrect/issue-4, which is not this event's branch")
