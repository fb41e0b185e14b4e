"""Carrying out a WritePlan: the one place the action writes to GitHub.

Order matters for what a failure leaves behind: the commit and the branch first, then the
pull request, then the check run (so the comment can say what became of it), then the
comment and labels. A branch whose newest commit is not one of ours (a person pushed to it)
is never moved: the plan's commit is not made and the comment says why, so nobody's work is
overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from selfcorrect_action.github.check_runs import CheckResult, guarded, write_check_run
from selfcorrect_action.github.forge import Commit, Forge, ForgeError, PullRequest
from selfcorrect_action.github.naming import RUN_TRAILER, STATUS_LABELS
from selfcorrect_action.github.plan import (
    AUDIT_SLOT,
    PR_LINK_SLOT,
    RUNS_DIR,
    PlannedCheckRun,
    PlannedCommit,
    WritePlan,
)
from selfcorrect_action.records import evolve
from selfcorrect_action.templating import render


@dataclass(frozen=True)
class Applied:
    pull_request: PullRequest | None = None
    commit_sha: str | None = None
    # Why the commit was not made, e.g. a person's commit on the branch; None when it was
    # (or when the plan had none).
    held_back: str | None = None
    comment_url: str = ""
    check: CheckResult = field(default_factory=CheckResult)


def apply_plan(plan: WritePlan, forge: Forge) -> Applied:
    if plan.labels is not None:
        for name, (color, description) in STATUS_LABELS.items():
            forge.ensure_label(name, color=color, description=description)
    held_back = _over_a_passing_version(plan, forge)
    commit_sha = None
    if plan.commit and held_back is None:
        commit_sha, held_back = _commit(plan.commit, forge)
    pull = None
    if plan.commit and plan.pull_request and commit_sha is not None:
        pull = _pull_request(plan, forge)
    check = CheckResult()
    if plan.check_run is not None:
        check = guarded(lambda: _check_run(plan, forge, commit_sha))
    comment_url = ""
    if plan.comment is not None:
        wanted_draft = plan.pull_request.draft if plan.pull_request else False
        body = plan.comment.body.replace(PR_LINK_SLOT, render(
            "reports/publish_result.md.j2", pull=pull, held_back=held_back,
            stale_draft=pull is not None and pull.draft and not wanted_draft,
            check=check).strip())
        existing = forge.find_comment(plan.comment.number, plan.comment.marker)
        comment = (forge.edit_comment(existing.id, body) if existing
                   else forge.create_comment(plan.comment.number, body))
        comment_url = comment.html_url
    if plan.labels is not None:
        forge.add_labels(plan.labels.number, plan.labels.add)
        for name in plan.labels.remove:
            forge.remove_label(plan.labels.number, name)
    return Applied(pull, commit_sha, held_back, comment_url, check)


def _check_run(plan: WritePlan, forge: Forge, commit_sha: str | None) -> CheckResult:
    """The verdict goes on the commit it is about: the one this plan pushed. A run that
    pushed nothing (it did not pass, or its commit was held back) marks the head of its
    branch's open pull request instead, where reviewers look, but never green (that commit
    is not what it checked), and never over a green mark an earlier run gave that commit
    (its script passed; this run's attempts are not on it)."""
    planned = plan.check_run
    assert planned is not None
    output = evolve(planned.output, {"summary": planned.output.summary.replace(
        AUDIT_SLOT, _audit_line(plan, planned, committed=commit_sha is not None))})
    if commit_sha is not None:
        return CheckResult(write_check_run(forge, commit_sha, output))
    if output.conclusion == "success":
        return CheckResult(note="no check run: the run passed, but no commit holds its script "
                           "(it was not committed)")
    pull = forge.find_open_pull_request(planned.branch)
    if pull is None:
        return CheckResult(note=f"no check run: the run pushed no commit, and no pull request "
                           f"is open from {planned.branch}")
    earlier = forge.find_check_run(pull.head_sha, output.name)
    if earlier is not None and earlier.conclusion == "success":
        return CheckResult(note=f"the check on pull request #{pull.number}'s head "
                           f"({pull.head_sha[:7]}) stays green: that commit passed an earlier "
                           "run, and this run's attempts were not pushed over it")
    return CheckResult(write_check_run(forge, pull.head_sha, output))


def _audit_line(plan: WritePlan, planned: PlannedCheckRun, *, committed: bool) -> str:
    return render("reports/check_run_audit.md.j2",
                  link=planned.audit_link if committed else "",
                  path=f"{RUNS_DIR}/{plan.run_id}/AUDIT.md",
                  run_url=planned.output.details_url).strip()


def _commit(planned: PlannedCommit, forge: Forge) -> tuple[str | None, str | None]:
    head = forge.branch_head(planned.branch)
    if head is not None and not made_by_us(head, forge.identity()):
        who = (f"@{head.committer_login or head.author_login}"
               if head.committer_login or head.author_login else "someone")
        return None, (f"{planned.branch} has a newer commit by {who} ({head.sha[:7]}) that "
                      "selfcorrect did not make; it was left untouched and this run's "
                      "script was not committed")
    if head is None:
        base = forge.branch_head(planned.base_branch)
        if base is None:
            raise ForgeError(f"the base branch {planned.base_branch!r} does not exist",
                             hint="set the action's base-branch input to an existing branch, "
                             "or leave it empty for the repository's default branch")
        sha = forge.commit_files(base.sha, planned.files, planned.message)
        forge.create_branch(planned.branch, sha)
        return sha, None
    sha = forge.commit_files(head.sha, planned.files, planned.message)
    forge.move_branch(planned.branch, sha)
    return sha, None


def _over_a_passing_version(plan: WritePlan, forge: Forge) -> str | None:
    """A failed run's draft (draft-on-failure) is never pushed onto a pull request that
    holds a passing version: the reviewers of that one would get failing code."""
    if plan.commit is None or plan.pull_request is None or not plan.pull_request.draft:
        return None
    existing = forge.find_open_pull_request(plan.commit.branch)
    if existing is None or existing.draft:
        return None
    return (f"pull request #{existing.number} holds a version that passed; this run did "
            "not pass, so its best attempt was not pushed over it")


def made_by_us(commit: Commit, identity: str) -> bool:
    """Our trailer alone is not enough: `git commit --amend` on our commit keeps it. The
    commit must also have been committed by the token's own account (an amend, rebase or
    cherry-pick is committed by whoever ran it)."""
    return (f"{RUN_TRAILER}:" in commit.message
            and commit.committer_login.lower() == identity.lower())


def _pull_request(plan: WritePlan, forge: Forge) -> PullRequest:
    assert plan.commit is not None and plan.pull_request is not None
    wanted = plan.pull_request
    existing = forge.find_open_pull_request(plan.commit.branch)
    if existing is not None:
        return forge.edit_pull_request(existing.number, title=wanted.title, body=wanted.body)
    return forge.create_pull_request(head_branch=plan.commit.branch,
                                     base_branch=plan.commit.base_branch, title=wanted.title,
                                     body=wanted.body, draft=wanted.draft)

