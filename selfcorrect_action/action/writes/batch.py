"""One WritePlan for several runs (plan version 4): `/selfcorrect regenerate` pushes the
scripts it regenerated as **one** commit on the pull request's branch, as pre-commit.ci
pushes one autofix commit, each spec with its own check run on that commit (a commit made
with the workflow's token starts no workflow, so nothing else would check it). Pure, given
the runs' rendered reports.

A run that did not pass commits nothing: its check run says why on the pull request's head,
and the comment lists it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from selfcorrect_action.action.task import Task
from selfcorrect_action.action.writes.build import (
    audit_link,
    changed_files,
    planned_check_run,
    planned_tests,
)
from selfcorrect_action.action.writes.plan import (
    PlannedCheckRun,
    PlannedComment,
    PlannedCommit,
    PlannedPullRequest,
    PlannedRun,
    WritePlan,
    run_files,
)
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.redact import redact
from selfcorrect_action.runs.published import VerifiedScript
from selfcorrect_action.templating import render, shorten


@dataclass(frozen=True)
class Member:
    """A finished run of the batch, its reports rendered."""

    task: Task
    state: RunState
    audit_md: str
    run_json: str
    verified: VerifiedScript | None = None

    @property
    def passed(self) -> bool:
        return self.state.status is Status.PASSED and self.verified is not None


def batch_plan(members: Sequence[Member], *, label: str, repository: str, base_branch: str,
               server_url: str, run_url: str, comment_number: int | None,
               comment_marker: str | None, comment_body: str | None,
               secrets: Sequence[str] = (), pull_request: PlannedPullRequest | None = None,
               checked: Sequence[PlannedRun] = (),
               checked_runs: Sequence[PlannedCheckRun] = ()) -> WritePlan:
    """The batch's plan. Every member goes to the same branch (the pull request's, on top
    of the head the runs started from; or the scheduled update's, with `pull_request`).
    `checked`, `checked_runs`: specs only re-verified (no run), each with its check run;
    with no member, the commit is empty and the pull request says what broke."""
    if not members and not checked:
        raise ValueError("a batch has at least one run")
    branch = members[0].task.branch if members else (checked_runs[0].branch if checked_runs
                                                      else "")
    first = members[0].task if members else None
    if any((m.task.branch, m.task.expected_head, m.task.pull_number)
           != (branch, first.expected_head if first else None,
               first.pull_number if first else None) for m in members):
        raise ValueError("a batch's runs all go to one branch, on one head")
    files = [change for member in members if member.passed for change in (
        *changed_files(member.task, member.state, passed=True, draft_on_failure=False,
                       verified=member.verified),
        *planned_tests(member.state),
        *run_files(member.state.run_id, audit_md=member.audit_md, run_json=member.run_json))]
    passed = [member for member in members if member.passed]
    commit = None
    if files or pull_request is not None:
        message = render("reports/batch_commit_message.txt.j2", label=label,
                         members=passed, failed=[m for m in members if not m.passed],
                         checked=list(checked))
        commit = PlannedCommit(branch=branch, base_branch=base_branch,
                               message=redact(message, secrets=secrets), files=files,
                               expected_head=first.expected_head if first else None,
                               pull_number=first.pull_number if first else None)
    checks = [planned_check_run(member.task, member.state, secrets=secrets, run_url=run_url,
                                audit_link=audit_link(member.task, member.state,
                                                      repository=repository,
                                                      server_url=server_url)
                                if commit is not None and member.passed else "")
              for member in members] + list(checked_runs)
    comment = None
    if comment_number is not None and comment_marker and comment_body is not None:
        comment = PlannedComment(number=comment_number, marker=comment_marker,
                                 body=redact(comment_body, secrets=secrets))
    return WritePlan(
        repository=repository, task=label, status="passed" if len(passed) == len(members)
        and not checked else "failed", commit=commit, comment=comment, check_runs=checks,
        pull_request=pull_request,
        runs=[*planned_runs(members), *checked])


def planned_runs(members: Sequence[Member]) -> list[PlannedRun]:
    """What a plan keeps of each run: enough to say in a pull request's body."""
    return [PlannedRun(task=m.task.label, run_id=m.state.run_id, status=m.state.status.value,
                       script=str(m.task.loaded.spec.output) if m.passed else None,
                       attempts=len(m.state.attempts), tokens=m.state.usage.tokens,
                       note="" if m.passed else shorten(m.state.stop_reason, 400))
            for m in members]
