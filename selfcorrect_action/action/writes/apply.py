"""Carrying out a WritePlan: the one place the action writes to GitHub.

Order matters for what a failure leaves behind: the commit and the branch first, then the
pull request, then the check run (so the comment can say what became of it), then the
comment and labels. A branch whose newest commit is not one of ours (a person pushed to it)
is never moved: the plan's commit is not made and the comment says why, so nobody's work is
overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from selfcorrect_action.action.writes.plan import (
    AUDIT_SLOT,
    PR_LINK_SLOT,
    PlannedCheckRun,
    PlannedCommit,
    WritePlan,
)
from selfcorrect_action.github.branch_lock import DEFAULT_TIMING, LockTiming, branch_lock
from selfcorrect_action.github.check_runs import CheckResult, guarded, write_check_run
from selfcorrect_action.github.forge import (
    Commit,
    DraftsRefused,
    Forge,
    ForgeError,
    PullRequest,
)
from selfcorrect_action.github.naming import (
    STATUS_LABELS,
    check_name,
    seal_holds,
    sealed,
)
from selfcorrect_action.records import evolve
from selfcorrect_action.report.run_json import RUNS_DIR
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
    # Why a commit was made but no pull request opened (GitHub refused a draft); else None.
    no_pull_request: str | None = None
    # A batch's check runs, one per run, by task.
    checks: dict[str, CheckResult] = field(default_factory=dict)


# Said when GitHub refuses the draft of a run that did not pass (draft-on-failure).
DRAFTS_REFUSED = ("GitHub refuses draft pull requests in this repository (a private repository "
                  "has them on GitHub Team and up), so the best attempt of this run, which "
                  "did not pass, was not opened as one")


def apply_plan(plan: WritePlan, forge: Forge, *,
               lock_timing: LockTiming = DEFAULT_TIMING) -> Applied:
    if plan.labels is not None:
        for name, (color, description) in STATUS_LABELS.items():
            forge.ensure_label(name, color=color, description=description)
    held_back = _over_a_passing_version(plan, forge)
    commit_sha, pull, no_pull = None, None, None
    if plan.commit and plan.commit.expected_head is not None:
        commit_sha, held_back, pull = _push_fix(plan, plan.commit, forge,
                                                lock_timing=lock_timing)
    elif plan.commit and held_back is None:
        base = forge.branch_head(plan.commit.base_branch)
        if base is None:
            raise ForgeError(f"the base branch {plan.commit.base_branch!r} does not exist",
                             hint="set the action's base-branch input to an existing branch, "
                             "or leave it empty for the repository's default branch")
        # Another run (a retry on the pull request, a new label on its issue) may be
        # writing this branch right now: one after the other, each on the other's commit.
        with branch_lock(forge, plan.commit.branch, anchor_sha=base.sha,
                         holder=f"{plan.task}, run {plan.run_id or '?'}", timing=lock_timing):
            commit_sha, held_back, pull, no_pull = _publish_branch(plan, base.sha, forge)
    check = CheckResult()
    if plan.check_run is not None:
        check = guarded(lambda: _check_run(plan, plan.check_run, forge, commit_sha))
    moved = plan.runs and plan.commit is not None and plan.commit.expected_head is not None \
        and commit_sha is None
    # A pull request's head that moved while a batch ran is not what it checked: no mark.
    checks = {run.task: CheckResult(note="no check run: the pull request's head moved, and "
                                    "nothing was pushed") if moved else
              _batch_check(plan, run.task, forge, commit_sha) for run in plan.runs}
    comment_url = ""
    if plan.comment is not None:
        wanted_draft = plan.pull_request.draft if plan.pull_request else False
        body = plan.comment.body.replace(PR_LINK_SLOT, render(
            "reports/publish_result.md.j2", pull=pull, held_back=held_back, no_pull=no_pull,
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
    return Applied(pull, commit_sha, held_back, comment_url, check, no_pull, checks)


def _batch_check(plan: WritePlan, task: str, forge: Forge, commit_sha: str | None
                 ) -> CheckResult:
    name = check_name(task)
    planned = next((check for check in plan.check_runs if check.output.name == name), None)
    if planned is None:
        return CheckResult(note=f"no check run was planned for {task}")
    return guarded(lambda: _check_run(plan, planned, forge, commit_sha))


def _check_run(plan: WritePlan, planned: PlannedCheckRun | None, forge: Forge,
               commit_sha: str | None) -> CheckResult:
    """The verdict goes on the commit it is about: the one this plan pushed. A run that
    pushed nothing (it did not pass, or its commit was held back) marks the head of its
    branch's open pull request instead, where reviewers look, but never green (that commit
    is not what it checked), and never over a green mark an earlier run gave that commit
    (its script passed; this run's attempts are not on it)."""
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
    # A batch's check run is one of its runs': its AUDIT.md is that run's.
    run_id = plan.run_id or next((run.run_id for run in plan.runs
                                  if check_name(run.task) == planned.output.name), "")
    return render("reports/check_run_audit.md.j2",
                  link=planned.audit_link if committed else "",
                  path=f"{RUNS_DIR}/{run_id}/AUDIT.md",
                  run_url=planned.output.details_url).strip()


def _publish_branch(plan: WritePlan, base_sha: str, forge: Forge
                    ) -> tuple[str | None, str | None, PullRequest | None, str | None]:
    """The commit and the pull request: the commit's sha, why it was held back, the pull
    request, and why there is none although the commit was made."""
    assert plan.commit is not None
    if plan.runs and plan.pull_request is not None:
        _start_over(plan.commit.branch, forge)
    commit_sha, held_back, created = _commit(plan.commit, base_sha, forge)
    if commit_sha is None or plan.pull_request is None:
        return commit_sha, held_back, None, None
    try:
        return commit_sha, None, _pull_request(plan, forge), None
    except DraftsRefused:
        if created and forge.delete_ref(f"refs/heads/{plan.commit.branch}", commit_sha):
            # A branch made for this draft alone would be a half-made result that no pull
            # request explains.
            return None, f"{DRAFTS_REFUSED}; the branch made for it was removed again", \
                None, None
        return commit_sha, None, None, f"{DRAFTS_REFUSED}; it is on the branch " \
            f"{plan.commit.branch}"


def _start_over(branch: str, forge: Forge) -> None:
    """The scheduled update's branch, when no pull request is open from it (the last one
    was merged or closed, and GitHub kept its branch): built again from the base, so that
    neither what was merged nor what a person turned down comes back. Only a branch whose
    newest commit is ours is removed (a person's is held back by _commit), and only at the
    commit read (a push meanwhile keeps it)."""
    if forge.find_open_pull_request(branch) is not None:
        return
    head = forge.branch_head(branch)
    if head is not None and made_by_us(head):
        forge.delete_ref(f"refs/heads/{branch}", head.sha)


def _commit(planned: PlannedCommit, base_sha: str, forge: Forge
            ) -> tuple[str | None, str | None, bool]:
    """The commit's sha (None when held back), why it was held back, and whether the
    branch was created for it."""
    head = forge.branch_head(planned.branch)
    if head is not None and not made_by_us(head):
        who = (f"@{head.committer_login or head.author_login}"
               if head.committer_login or head.author_login else "someone")
        return None, (f"{planned.branch} has a newer commit by {who} ({head.sha[:7]}) that "
                      "selfcorrect did not make; it was left untouched and this run's "
                      "script was not committed"), False
    if head is None:
        sha = _write(forge, base_sha, planned)
        forge.create_branch(planned.branch, sha)
        return sha, None, True
    sha = _write(forge, head.sha, planned)
    forge.move_branch(planned.branch, sha)
    return sha, None, False


def _push_fix(plan: WritePlan, planned: PlannedCommit, forge: Forge, *,
              lock_timing: LockTiming) -> tuple[str | None, str | None, PullRequest | None]:
    """`/selfcorrect fix`: a new commit on the pull request's own branch, as pre-commit.ci
    pushes its fixes: only while the pull request is open, from this repository, and its
    head is still the commit the run's baseline was taken at; on top of it, never forced.
    The commit's sha, or why it was not made, and the pull request."""
    assert planned.pull_number is not None and planned.expected_head is not None
    pull = forge.pull_request(planned.pull_number)
    if (pull.head_branch != planned.branch or pull.state != "open"
            or pull.head_repository.lower() != forge.repository.lower()):
        return None, (f"pull request #{pull.number} is no longer an open pull request from "
                      f"{planned.branch} in this repository: nothing was pushed"), pull
    with branch_lock(forge, planned.branch, anchor_sha=planned.expected_head,
                     holder=f"{plan.task}, run {plan.run_id or '?'}", timing=lock_timing):
        head = forge.branch_head(planned.branch)
        if head is None or head.sha != planned.expected_head:
            now = head.sha[:7] if head else "gone"
            if plan.runs:
                return None, (f"the pull request's head moved ({planned.expected_head[:7]} "
                              f"when the regeneration started, {now} now): nothing was "
                              "pushed; comment /selfcorrect regenerate again to regenerate "
                              "on the new head"), pull
            return None, (f"the pull request's head moved ({planned.expected_head[:7]} when "
                          f"the baseline was taken, {now} now): the fix was not pushed; "
                          "comment /selfcorrect fix again to repair the new head"), pull
        sha = _write(forge, planned.expected_head, planned)
        try:
            forge.move_branch(planned.branch, sha)
        except ForgeError as exc:  # moved between the check and the push: not forced
            return None, (f"the pull request's head moved while the fix was pushed "
                          f"({exc.message}): nothing was pushed"), pull
    return sha, None, pull


def _write(forge: Forge, parent_sha: str, planned: PlannedCommit) -> str:
    tree = forge.write_tree(parent_sha, planned.files)
    return forge.write_commit(parent_sha, tree, sealed(planned.message, tree))


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


def made_by_us(commit: Commit) -> bool:
    """Whether the branch's newest commit holds what selfcorrect committed, so a new commit
    on top overwrites no person's work. Not by who committed it: a GitHub App's commits
    through the Git Data API may be recorded under another account than the one its token
    comments as, and a person's amend keeps our trailers. The tree trailer binds the
    message to the content: any change to a file since (an amend, a rebase onto a moved
    base, a merge, a pushed commit) leaves a commit whose tree is not the sealed one."""
    return seal_holds(commit.message, commit.tree_sha)


def _pull_request(plan: WritePlan, forge: Forge) -> PullRequest:
    assert plan.commit is not None and plan.pull_request is not None
    wanted = plan.pull_request
    existing = forge.find_open_pull_request(plan.commit.branch)
    if existing is not None:
        return forge.edit_pull_request(existing.number, title=wanted.title, body=wanted.body)
    return forge.create_pull_request(head_branch=plan.commit.branch,
                                     base_branch=plan.commit.base_branch, title=wanted.title,
                                     body=wanted.body, draft=wanted.draft)

