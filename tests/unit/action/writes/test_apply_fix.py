"""`/selfcorrect fix`'s commit through the real adapter against the GitHub stand-in: pushed
onto the pull request's own branch on top of the head the baseline was taken at, never
forced; held back when that head moved (the comment on the pull request says why), or the
pull request is not one of this repository's open ones; its check run on the new commit."""

from __future__ import annotations

from selfcorrect_action.action.writes.apply import apply_plan
from selfcorrect_action.action.writes.plan import (
    PR_LINK_SLOT,
    PlannedCheckRun,
    PlannedComment,
    PlannedCommit,
    WritePlan,
)
from selfcorrect_action.github.forge import CheckRunOutput, FileChange
from selfcorrect_action.github.naming import TREE_TRAILER, report_marker
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from tests.fakes.github_server import DEFAULT_REPO, FakeGitHub

BRANCH = "feature/parse"
MARKER = report_marker("run=1.1 task=pull")


def pull_request(github: FakeGitHub) -> tuple[int, str]:
    github.add_branch(DEFAULT_REPO, BRANCH, files={"src/pkg/core.py": "x = 1\n"})
    number = github.add_pull(DEFAULT_REPO, BRANCH, title="parse")
    return number, github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]


def fix_plan(number: int, head: str, content: str = "x = 2\n", *,
             comment: bool = False) -> WritePlan:
    output = CheckRunOutput(name=f"selfcorrect / pull request #{number}", conclusion="success",
                            title="passed", summary="green", external_id="selfcorrect run r1")
    return WritePlan(
        repository=DEFAULT_REPO, task=f"pull request #{number}", status="passed", run_id="a1b2",
        commit=PlannedCommit(branch=BRANCH, base_branch="main", message="selfcorrect: fix",
                             files=[FileChange(path="src/pkg/core.py", content=content),
                                    FileChange(path=".selfcorrect/runs/a1b2/AUDIT.md",
                                               content="# audit\n")],
                             allowed_files=["src/pkg/*.py"], expected_head=head,
                             pull_number=number),
        check_run=PlannedCheckRun(branch=BRANCH, output=output, pull_number=number),
        # As the action plans it (action/fix.py: the report goes on the pull request).
        comment=PlannedComment(number=number, marker=MARKER,
                               body=f"{MARKER}\n**Passed.**\n\n{PR_LINK_SLOT}\n")
        if comment else None)


def test_the_fix_is_a_new_commit_on_top_of_the_pull_requests_head(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number, head = pull_request(fake_github)

    applied = apply_plan(fix_plan(number, head), forge)

    assert applied.held_back is None and applied.commit_sha is not None
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == applied.commit_sha
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{applied.commit_sha}^").strip() == head
    assert fake_github.read_file(DEFAULT_REPO, BRANCH, "src/pkg/core.py") == b"x = 2\n"
    assert TREE_TRAILER in fake_github.git(DEFAULT_REPO, "log", "-1", "--format=%B", BRANCH)
    assert len(fake_github.pulls(DEFAULT_REPO)) == 1  # no new pull request
    (check,) = fake_github.check_runs(DEFAULT_REPO)
    assert (check.head_sha, check.conclusion) == (applied.commit_sha, "success")


def test_a_head_that_moved_since_the_baseline_gets_nothing_pushed(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number, head = pull_request(fake_github)
    pushed = fake_github.commit_files(DEFAULT_REPO, BRANCH, {"src/pkg/core.py": "x = 3\n"},
                                      message="the author pushed meanwhile")

    applied = apply_plan(fix_plan(number, head, comment=True), forge)

    assert applied.commit_sha is None and applied.held_back is not None
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == pushed
    assert fake_github.read_file(DEFAULT_REPO, BRANCH, "src/pkg/core.py") == b"x = 3\n"
    # The run stops there and says so on the pull request: why nothing was pushed, and what
    # to do about it.
    (comment,) = fake_github.comments(DEFAULT_REPO, number)
    assert applied.comment_url and PR_LINK_SLOT not in comment.body
    assert (f"**Not committed:** the pull request's head moved ({head[:7]} when the "
            f"baseline was taken, {pushed[:7]} now): the fix was not pushed; comment "
            in comment.body)
    # Its words are quoted as data (the message holds the API's and the branch's words):
    # a command in backticks came out as escaped backticks, so it is written plainly.
    assert "comment /selfcorrect fix again to repair the new head." in comment.body


def test_a_closed_pull_request_gets_nothing_pushed(
        fake_github: FakeGitHub, forge: PyGithubForge) -> None:
    number, head = pull_request(fake_github)
    fake_github.close_pull(DEFAULT_REPO, number)

    applied = apply_plan(fix_plan(number, head), forge)

    assert applied.commit_sha is None and applied.held_back is not None
    assert "no longer an open pull request" in applied.held_back
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == head
