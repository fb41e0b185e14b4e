"""Applying write plans through the real adapter against the GitHub stand-in: the commit,
the branch rules, the pull request made once, the comment found again, the labels."""

from __future__ import annotations

from selfcorrect_action.action.writes.apply import apply_plan
from selfcorrect_action.action.writes.plan import (
    AUDIT_SLOT,
    PR_LINK_SLOT,
    PlannedCheckRun,
    PlannedComment,
    PlannedCommit,
    PlannedPullRequest,
    WritePlan,
    status_labels,
)
from selfcorrect_action.github.forge import CheckRunOutput, FileChange
from selfcorrect_action.github.naming import TREE_TRAILER, report_marker
from selfcorrect_action.github.pygithub_forge import PyGithubForge
from selfcorrect_action.records import evolve
from tests.fakes.github_server import APP_LOGIN, APP_TOKEN, BOT_LOGIN, DEFAULT_REPO, FakeGitHub
from tests.unit.github.conftest import MakeForge

BRANCH = "selfcorrect/issue-1"
MARKER = report_marker("run=1.1 task=x")


def plan(content: str = "print('hi')\n", *, comment: bool = True) -> WritePlan:
    return WritePlan(
        repository=DEFAULT_REPO, task="issue #1", status="passed", run_id="a1b2c3",
        commit=PlannedCommit(branch=BRANCH, base_branch="main",
                             message="selfcorrect: x\n\nSelfcorrect-Run: a1b2c3\n",
                             files=[FileChange(path="scripts/x.py", content=content),
                                    FileChange(path=".selfcorrect/runs/a1b2c3/AUDIT.md",
                                               content="# audit\n")]),
        pull_request=PlannedPullRequest(title="selfcorrect: x", body="Closes #1"),
        comment=PlannedComment(number=1, marker=MARKER, body=f"{MARKER}\ndone\n{PR_LINK_SLOT}")
        if comment else None,
        labels=status_labels(1, passed=True) if comment else None,
    )


def test_a_plan_makes_branch_commit_pull_request_comment_and_labels(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body", labels=["selfcorrect:running"])
    applied = apply_plan(plan(), forge)
    assert applied.pull_request is not None and applied.held_back is None
    assert fake_github.read_file(DEFAULT_REPO, BRANCH, "scripts/x.py") == b"print('hi')\n"
    assert fake_github.read_file(DEFAULT_REPO, BRANCH, "README.md")  # on top of main
    (pull,) = fake_github.pulls(DEFAULT_REPO)
    assert pull.body == "Closes #1" and pull.user == BOT_LOGIN
    (comment,) = fake_github.comments(DEFAULT_REPO, 1)
    assert f"/pull/{pull.number}" in comment.body and PR_LINK_SLOT not in comment.body
    assert sorted(fake_github.labels(DEFAULT_REPO, 1)) == ["selfcorrect:passed"]


def test_applying_again_updates_the_same_pull_request_and_comment(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    apply_plan(plan(), forge)
    first = fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    applied = apply_plan(plan("print('better')\n"), forge)
    assert applied.commit_sha is not None
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{applied.commit_sha}^").strip() == first
    assert len(fake_github.pulls(DEFAULT_REPO)) == 1
    assert len(fake_github.comments(DEFAULT_REPO, 1)) == 1


def test_a_persons_commit_on_the_branch_holds_the_plan_back(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    fake_github.add_user("maria")
    apply_plan(plan(), forge)
    human = fake_github.commit_files(DEFAULT_REPO, BRANCH, {"scripts/x.py": "# mine\n"},
                                     message="my fix", author="maria")
    applied = apply_plan(plan("print('again')\n"), forge)
    assert applied.commit_sha is None and applied.held_back
    assert "did not make" in applied.held_back
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == human
    (comment,) = fake_github.comments(DEFAULT_REPO, 1)
    assert "Not committed" in comment.body


def test_a_missing_base_branch_is_a_clear_error(fake_github: FakeGitHub,
                                                forge: PyGithubForge) -> None:
    import pytest

    from selfcorrect_action.github.forge import ForgeError

    bad = plan(comment=False).model_copy(update={"commit": plan().commit.model_copy(  # type: ignore[union-attr]
        update={"base_branch": "nope"})})
    with pytest.raises(ForgeError, match="base branch 'nope' does not exist"):
        apply_plan(bad, forge)
    assert fake_github.pulls(DEFAULT_REPO) == []


def test_a_persons_commit_that_keeps_our_trailers_is_still_theirs(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    """`git commit --amend` on our commit keeps every trailer, the tree's too; but the
    files changed, so the tree it names is no longer the commit's."""
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    fake_github.add_user("maria")
    apply_plan(plan(), forge)
    ours = fake_github.git(DEFAULT_REPO, "log", "-1", "--format=%B", BRANCH)
    assert f"{TREE_TRAILER}: " in ours
    amended = fake_github.commit_files(
        DEFAULT_REPO, BRANCH, {"scripts/x.py": "# mine\n"}, author="maria", message=ours)
    applied = apply_plan(plan("print('again')\n"), forge)
    assert applied.held_back and "@maria" in applied.held_back
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == amended


def test_a_reworded_commit_of_ours_is_built_on(fake_github: FakeGitHub,
                                               forge: PyGithubForge) -> None:
    """A person who only rewords our commit changed no file: nothing of theirs is lost by
    committing on top, so the run is not held back."""
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    apply_plan(plan(), forge)
    ours = fake_github.git(DEFAULT_REPO, "log", "-1", "--format=%B", BRANCH)
    reworded = fake_github.commit_files(DEFAULT_REPO, BRANCH, {}, author="maria",
                                        message="A better title\n\n" + ours)
    applied = apply_plan(plan("print('again')\n"), forge)
    assert applied.held_back is None and applied.commit_sha is not None
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{applied.commit_sha}^").strip() == (
        reworded)


def test_an_apps_own_branch_is_moved_on_its_next_run(fake_github: FakeGitHub,
                                                     make_forge: MakeForge) -> None:
    """A GitHub App's installation token: GET /user is refused, its commits carry its own
    bot account. Its second run on the branch it made is not held back as a person's."""
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    app = make_forge(token=APP_TOKEN)
    first = apply_plan(plan(), app)
    second = apply_plan(plan("print('again')\n"), app)
    assert second.held_back is None and second.commit_sha is not None
    assert fake_github.git(DEFAULT_REPO, "rev-parse", f"{second.commit_sha}^").strip() == (
        first.commit_sha)
    (comment,) = fake_github.comments(DEFAULT_REPO, 1)  # found again, not made twice
    assert comment.user == APP_LOGIN
    (pull,) = fake_github.pulls(DEFAULT_REPO)
    assert pull.user == APP_LOGIN


def test_a_failed_draft_is_never_pushed_over_a_passing_pull_request(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    apply_plan(plan(), forge)  # passed: a ready pull request
    head = fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    failed = plan("print('worse')\n")
    failed = failed.model_copy(update={"pull_request": failed.pull_request.model_copy(  # type: ignore[union-attr]
        update={"draft": True})})
    applied = apply_plan(failed, forge)
    assert applied.held_back and "holds a version that passed" in applied.held_back
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == head
    (comment,) = fake_github.comments(DEFAULT_REPO, 1)
    assert "Not committed" in comment.body and "Remove or move" not in comment.body


def _failed(content: str = "print('best try')\n") -> WritePlan:
    failed = plan(content)
    return failed.model_copy(update={"status": "exhausted", "pull_request":
                                     failed.pull_request.model_copy(  # type: ignore[union-attr]
                                         update={"draft": True}),
                                     "labels": status_labels(1, passed=False)})


def test_a_draft_github_refuses_leaves_no_half_made_branch_and_says_why(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    """A private repository on GitHub Free: drafts are refused only once the branch exists.
    The branch made for the draft goes again; the comment says why there is no PR."""
    fake_github.set_visibility(DEFAULT_REPO, private=True, plan="free")
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    applied = apply_plan(_failed(), forge)
    assert applied.pull_request is None and applied.commit_sha is None
    assert applied.held_back and "refuses draft pull requests" in applied.held_back
    assert f"refs/heads/{BRANCH}" not in fake_github.refs(DEFAULT_REPO)
    assert fake_github.pulls(DEFAULT_REPO) == []
    (comment,) = fake_github.comments(DEFAULT_REPO, 1)
    assert "refuses draft pull requests" in comment.body and "was removed" in comment.body
    assert "selfcorrect:failed" in fake_github.labels(DEFAULT_REPO, 1)


def test_a_refused_draft_keeps_a_branch_that_was_there_before(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    # An earlier run's commit on the branch, its pull request gone.
    apply_plan(plan().model_copy(update={"pull_request": None}), forge)
    fake_github.set_visibility(DEFAULT_REPO, private=True, plan="pro")
    applied = apply_plan(_failed(), forge)
    assert applied.held_back is None and applied.pull_request is None
    assert applied.no_pull_request and f"it is on the branch {BRANCH}" in (
        applied.no_pull_request)
    assert fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"] == applied.commit_sha
    (comment,) = fake_github.comments(DEFAULT_REPO, 1)
    assert "**No pull request:** GitHub refuses draft pull requests" in comment.body


def test_drafts_on_a_team_plan_are_opened(fake_github: FakeGitHub,
                                          forge: PyGithubForge) -> None:
    fake_github.set_visibility(DEFAULT_REPO, private=True, plan="team")
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    applied = apply_plan(_failed(), forge)
    assert applied.pull_request is not None and applied.pull_request.draft


# -- the check run: which commit it marks, and never a false green --------------------------

def checked(content: str = "print('hi')\n", *, status: str = "passed",
            commit: bool = True) -> WritePlan:
    base = plan(content)
    output = CheckRunOutput(
        name="selfcorrect / issue #1", conclusion="success" if status == "passed" else "failure",
        title=status, summary=f"**selfcorrect: {status}**\n\n{AUDIT_SLOT}\n",
        details_url="https://gh.example/actions/runs/9", external_id=f"selfcorrect run {content}")
    return evolve(base, {  # validated: a plan GitHub would get
        "status": status, "commit": base.commit if commit else None,
        "pull_request": base.pull_request if commit else None,
        "check_run": PlannedCheckRun(branch=BRANCH, output=output,
                                     audit_link=f"https://gh.example/{DEFAULT_REPO}/blob/x")})


def test_a_passing_plan_marks_the_commit_it_pushed_green(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    applied = apply_plan(checked(), forge)
    assert applied.check.check is not None and applied.commit_sha is not None
    (run,) = fake_github.check_runs(DEFAULT_REPO)
    assert (run.head_sha, run.conclusion, run.name) == (
        applied.commit_sha, "success", "selfcorrect / issue #1")
    assert f"(https://gh.example/{DEFAULT_REPO}/blob/x)" in (run.summary or "")
    assert AUDIT_SLOT not in (run.summary or "")


def test_a_failed_retry_that_pushed_nothing_marks_the_pull_requests_head_red(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    draft = checked("print('draft')\n", status="exhausted")
    assert draft.pull_request is not None
    apply_plan(evolve(draft, {"pull_request": evolve(draft.pull_request, {"draft": True})}),
               forge)
    head = fake_github.refs(DEFAULT_REPO)[f"refs/heads/{BRANCH}"]
    applied = apply_plan(checked("print('retry')\n", status="stopped", commit=False), forge)
    assert applied.commit_sha is None
    runs = fake_github.check_runs(DEFAULT_REPO, head)
    assert [(r.conclusion, r.external_id) for r in runs] == [
        ("failure", "selfcorrect run print('draft')\n"),
        ("failure", "selfcorrect run print('retry')\n")]
    assert "was not committed" in (runs[-1].summary or "")  # its AUDIT.md is not on a branch


def test_a_failed_retry_leaves_a_head_that_passed_green(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    apply_plan(checked(), forge)
    applied = apply_plan(checked("print('worse')\n", status="exhausted", commit=False), forge)
    assert applied.check.check is None and "stays green" in applied.check.note
    assert [r.conclusion for r in fake_github.check_runs(DEFAULT_REPO)] == ["success"]


def test_a_run_with_no_commit_and_no_pull_request_marks_nothing(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    applied = apply_plan(checked(status="stopped", commit=False), forge)
    assert applied.check.check is None and "no pull request is open" in applied.check.note
    assert fake_github.check_runs(DEFAULT_REPO) == []


def test_a_passing_run_held_back_marks_no_commit_green(
    fake_github: FakeGitHub, forge: PyGithubForge
) -> None:
    """The head is a person's commit: this run's script is on no commit at all."""
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    fake_github.add_user("maria")
    apply_plan(checked(), forge)
    human = fake_github.commit_files(DEFAULT_REPO, BRANCH, {"scripts/x.py": "# mine\n"},
                                     message="my fix", author="maria")
    applied = apply_plan(checked("print('again')\n"), forge)
    assert applied.held_back and applied.check.check is None
    assert "not committed" in applied.check.note
    assert fake_github.check_runs(DEFAULT_REPO, human) == []


def test_a_token_without_checks_write_publishes_the_rest_and_says_how_to_fix_it(
    fake_github: FakeGitHub, make_forge: MakeForge
) -> None:
    fake_github.add_issue(DEFAULT_REPO, "x", "body")
    fake_github.add_token("ghs_no_checks", without={"checks"})
    applied = apply_plan(checked(), make_forge(token="ghs_no_checks"))
    assert applied.pull_request is not None and applied.check.check is None
    assert "`checks: write`" in applied.check.problem
    (comment,) = fake_github.comments(DEFAULT_REPO, 1)
    assert "**Check run:** no check run: the token may not write checks" in comment.body
    assert "selfcorrect:passed" in fake_github.labels(DEFAULT_REPO, 1)
    assert fake_github.check_runs(DEFAULT_REPO) == []
