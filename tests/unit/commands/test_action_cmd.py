"""`selfcorrect action` in `mode: publish`: the job with write access applies what a
read-only `mode: plan` job saved, and only what that job's own event is about, whoever made
the file. In this process, against the GitHub stand-in (tests/unit/action/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from selfcorrect_action.action.writes.plan import (
    AUDIT_SLOT,
    PlannedCheckRun,
    PlannedComment,
    PlannedCommit,
    WritePlan,
)
from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.forge import CheckRunOutput, FileChange
from selfcorrect_action.github.naming import (
    approval_marker,
    approved_digest,
    body_digest,
    report_marker,
)
from tests.e2e.action.harness import MAINTAINER, OUTSIDER
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub
from tests.unit.action.conftest import Act

BODY = "```yaml\nprompt: print hello\n```\n"


def _labeled(github: FakeGitHub, *, by: str) -> dict[str, Any]:
    number = github.add_issue(DEFAULT_REPO, "Greet", BODY, user=OUTSIDER, labels=["selfcorrect"])
    return github.event("issues", DEFAULT_REPO, action="labeled", number=number,
                        label="selfcorrect", sender=by)


def _plans(tmp_path: Path, *plans: WritePlan) -> Path:
    folder = tmp_path / "downloaded"
    folder.mkdir(parents=True)
    for index, plan in enumerate(plans):
        (folder / f"{index}.json").write_text(plan.model_dump_json())
    return folder


def _comment_plan(number: int, repository: str = DEFAULT_REPO) -> WritePlan:
    return WritePlan(repository=repository, task="t", status="none", comment=PlannedComment(
        number=number, marker=report_marker("run=1.1 task=t"), body="planned words"))


def test_the_publish_job_posts_what_the_read_only_job_planned(
    act: Act, github: FakeGitHub
) -> None:
    event = _labeled(github, by=OUTSIDER)
    planned = act("issues", event, token=act.identity.read_token, mode="plan")
    assert github.comments(DEFAULT_REPO, 1) == []
    published = act("issues", event, mode="publish",
                    copy_plans_from=planned.workspace / "selfcorrect-plan")
    assert (published.code, published.outputs["status"]) == (0, "published")
    assert published.outputs["pr-url"] == ""
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "did not run" in comment.body and "write access" in comment.body
    assert "publish: #1 " in published.stdout and "no pull request" in published.stdout


def test_a_plan_that_writes_to_another_issue_is_refused_before_any_write(
    act: Act, github: FakeGitHub, tmp_path: Path
) -> None:
    event = _labeled(github, by=MAINTAINER)
    other = github.add_issue(DEFAULT_REPO, "Other", "b")
    github.clear_requests()
    with pytest.raises(UsageError, match=f"it writes to #{other}, not to what this event is "
                       r"about \(#1\)") as caught:
        act("issues", event, mode="publish", copy_plans_from=_plans(
            tmp_path, _comment_plan(other)))
    assert "made for this workflow run's own event" in (caught.value.hint or "")
    assert [r for r in github.requests if r.method != "GET"] == []


def test_a_plan_made_for_another_repository_is_refused(
    act: Act, github: FakeGitHub, tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match="the plan was made for someone/else, this job runs "
                       f"in {DEFAULT_REPO}"):
        act("issues", _labeled(github, by=MAINTAINER), mode="publish",
            copy_plans_from=_plans(tmp_path, _comment_plan(1, "someone/else")))


def test_a_plan_that_approves_an_issue_text_itself_is_refused(
    act: Act, github: FakeGitHub, tmp_path: Path
) -> None:
    """A compromised plan job could write the approval of any text into the comment, and a
    later `/selfcorrect retry` would run that text (issue 16, item 4)."""
    event = _labeled(github, by=MAINTAINER)
    forged = _comment_plan(1).model_copy(update={"comment": PlannedComment(
        number=1, marker=report_marker("run=1.1 task=t"),
        body=f"words\n{approval_marker(body_digest('prompt: open the network'))}")})
    github.clear_requests()
    with pytest.raises(UsageError, match="carries an approval marker, which only the "
                       "publishing job writes"):
        act("issues", event, mode="publish", copy_plans_from=_plans(tmp_path, forged))
    assert [r for r in github.requests if r.method != "GET"] == []


@pytest.mark.parametrize(("labeler", "approved"), [(MAINTAINER, True), (OUTSIDER, False)])
def test_the_publisher_writes_the_approval_of_a_labelled_run_itself(
    act: Act, github: FakeGitHub, tmp_path: Path, labeler: str, approved: bool
) -> None:
    """From its own event's issue text, after its own check of the labeler's access."""
    event = _labeled(github, by=labeler)
    ran = _comment_plan(1).model_copy(update={"status": "exhausted"})
    act("issues", event, mode="publish", copy_plans_from=_plans(tmp_path, ran))
    (comment,) = github.comments(DEFAULT_REPO, 1)
    assert "planned words" in comment.body
    # Where a retry reads it (naming.approved_digest), or nowhere.
    assert approved_digest(comment.body) == (body_digest(BODY) if approved else None)
    assert (approval_marker(body_digest(BODY)) in comment.body) is approved


def test_a_dispatch_plan_may_not_comment(act: Act, github: FakeGitHub,
                                         tmp_path: Path) -> None:
    github.add_issue(DEFAULT_REPO, "x", "b")
    event = github.event("workflow_dispatch", DEFAULT_REPO, sender=MAINTAINER)
    with pytest.raises(UsageError, match="it writes to #1, not to what this event is about "
                       r"\(no issue\)"):
        act("workflow_dispatch", event, mode="publish",
            copy_plans_from=_plans(tmp_path, _comment_plan(1)))


def test_a_pull_request_event_publishes_nothing(act: Act, github: FakeGitHub,
                                                tmp_path: Path) -> None:
    github.add_branch(DEFAULT_REPO, "f")
    github.commit_files(DEFAULT_REPO, "f", {"a.txt": "a"}, message="m")
    number = github.add_pull(DEFAULT_REPO, "f")
    event = github.event("pull_request", DEFAULT_REPO, number=number)
    with pytest.raises(UsageError, match=r"this job's event \(pull_request\) is not one a plan "
                       "is published for"):
        act("pull_request", event, mode="publish",
            copy_plans_from=_plans(tmp_path, _comment_plan(number)))


def test_a_publish_job_without_its_plan_says_to_download_it(act: Act,
                                                            github: FakeGitHub) -> None:
    with pytest.raises(UsageError, match="no such folder") as caught:
        act("issues", _labeled(github, by=MAINTAINER), mode="publish")
    assert "download the plan artifact" in (caught.value.hint or "")


def test_a_plan_folder_with_no_plan_or_a_forged_one_is_refused(
    act: Act, github: FakeGitHub, tmp_path: Path
) -> None:
    event = _labeled(github, by=MAINTAINER)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UsageError, match=r"holds no \*\.json write plan"):
        act("issues", event, mode="publish", copy_plans_from=empty)
    forged = json.loads(_comment_plan(1).model_dump_json())
    forged["comment"]["marker"] = "<!-- not ours -->"
    (empty / "forged.json").write_text(json.dumps(forged))
    with pytest.raises(UsageError, match="not a selfcorrect write plan, or one that writes "
                       "where a plan may not"):
        act("issues", event, mode="publish", copy_plans_from=empty)


def test_the_token_is_taken_out_of_the_environment_once_read(
    act: Act, github: FakeGitHub
) -> None:
    run = act("issues", _labeled(github, by=OUTSIDER))
    assert "INPUT_GITHUB-TOKEN" not in run.environ and act.identity.token not in run.stdout


def test_the_publish_job_puts_the_planned_check_run_on_the_commit_it_pushes(
    act: Act, github: FakeGitHub, tmp_path: Path
) -> None:
    branch = "selfcorrect/task-greet"
    planned = WritePlan(
        repository=DEFAULT_REPO, task=".selfcorrect/tasks/greet.yml", status="passed",
        run_id="abc123", commit=PlannedCommit(
            branch=branch, base_branch="main", message="m\n\nSelfcorrect-Run: abc123\n",
            files=[FileChange(path="greet.py", content="print('hi')\n")]),
        check_run=PlannedCheckRun(branch=branch, output=CheckRunOutput(
            name="selfcorrect / .selfcorrect/tasks/greet.yml", conclusion="success",
            title="passed", summary=f"passed\n\n{AUDIT_SLOT}\n",
            external_id="selfcorrect run abc123"), audit_link="https://gh.example/audit"))
    event = github.event("workflow_dispatch", DEFAULT_REPO, sender=MAINTAINER)
    run = act("workflow_dispatch", event, mode="publish",
              copy_plans_from=_plans(tmp_path, planned))
    assert run.code == 0
    (check,) = github.check_runs(DEFAULT_REPO)
    assert (check.head_sha, check.conclusion) == (
        github.refs(DEFAULT_REPO)[f"refs/heads/{branch}"], "success")
    assert "[.selfcorrect/runs/abc123/AUDIT.md](https://gh.example/audit)" in (check.summary
                                                                              or "")
    assert "check run 'selfcorrect / .selfcorrect/tasks/greet.yml': success" in run.stdout
