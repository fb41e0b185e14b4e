"""The WritePlan for a finished run: which files go into the commit, and the pull request,
check run, comment and labels, rendered from the templates. Pure, given the rendered
reports.

The check run is green (`success`) only for a run that passed: every layer passed for the
script it commits. Any other end is `failure`, whatever stopped it (budget spent, no
progress, an error outside the script): GitHub counts `neutral` as passing for a required
check, and a run that verified nothing must not let a pull request merge."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from selfcorrect_action.action.task import Task
from selfcorrect_action.action.writes.plan import (
    AUDIT_SLOT,
    PlannedCheckRun,
    PlannedComment,
    PlannedCommit,
    PlannedPullRequest,
    WritePlan,
    run_files,
    status_labels,
)
from selfcorrect_action.github import naming
from selfcorrect_action.github.forge import MAX_CHECK_TEXT, CheckRunOutput, Conclusion, FileChange
from selfcorrect_action.github.naming import origin_marker
from selfcorrect_action.loop.state import Attempt, RunState, Status
from selfcorrect_action.markdown import no_closing_keywords
from selfcorrect_action.redact import redact
from selfcorrect_action.report.audit import check_run_markdown, check_run_title
from selfcorrect_action.report.run_json import RUNS_DIR
from selfcorrect_action.runs.published import VerifiedScript
from selfcorrect_action.templating import render
from selfcorrect_action.verified.reproduce import verify_command

MAX_TITLE_CHARS = 200
# The summary keeps room for the AUDIT.md line put in where AUDIT_SLOT is.
MAX_CHECK_SUMMARY_CHARS = MAX_CHECK_TEXT - 2_000
CONCLUSIONS: dict[Status, Conclusion] = {Status.PASSED: "success",
                                         Status.CANCELLED: "cancelled"}


def conclusion_for(status: Status) -> Conclusion:
    return CONCLUSIONS.get(status, "failure")


def check_name(task: Task) -> str:
    return naming.check_name(task.label)


def build_plan(task: Task, state: RunState, *, repository: str, base_branch: str,
               audit_md: str, run_json: str, summary_md: str, server_url: str,
               comment_body: str | None, comment_marker: str | None,
               draft_on_failure: bool, secrets: Sequence[str] = (),
               run_url: str = "", verified: VerifiedScript | None = None) -> WritePlan:
    """Every text the plan writes for people (title, body, message, comment) is redacted
    here, whatever went into it: an issue title quoting a token included. `verified`: a
    passing script with its header and record (runs/published.py), which the commit
    carries instead of the script as the loop wrote it."""
    def clean(text: str) -> str:
        return redact(text, secrets=secrets)

    passed = state.status is Status.PASSED
    verified = verified if passed else None
    changed = changed_files(task, state, passed=passed, draft_on_failure=draft_on_failure,
                             verified=verified)
    commit = pull = None
    if changed:
        files = [*changed, *planned_tests(state),
                 *run_files(state.run_id, audit_md=audit_md, run_json=run_json)]
        commit = PlannedCommit(branch=task.branch, base_branch=base_branch,
                               message=clean(_commit_message(task, state)), files=files,
                               allowed_files=list(state.spec.files),
                               expected_head=task.expected_head, pull_number=task.pull_number)
    if changed and task.pull_number is None:
        pull = PlannedPullRequest(
            # The title becomes a squash merge's commit message: it must close nothing.
            title=clean(f"selfcorrect: {no_closing_keywords(task.title)}")[:MAX_TITLE_CHARS],
            body=clean(_pull_body(task, state, summary_md=summary_md, repository=repository,
                                  server_url=server_url, passed=passed,
                                  record_path=verified.lock if verified else None)),
            draft=not passed,
        )
    comment = labels = None
    if task.comment_on is not None and comment_body is not None and comment_marker:
        comment = PlannedComment(number=task.comment_on, marker=comment_marker,
                                 body=clean(comment_body))
        labels = status_labels(task.comment_on, passed=passed)
    check = planned_check_run(task, state, secrets=secrets, run_url=run_url,
                       audit_link=audit_link(task, state, repository=repository,
                                              server_url=server_url) if commit else "")
    return WritePlan(repository=repository, task=task.label, status=state.status.value,
                     run_id=state.run_id, commit=commit, pull_request=pull, comment=comment,
                     labels=labels, check_run=check)


def planned_check_run(task: Task, state: RunState, *, secrets: Sequence[str], run_url: str,
               audit_link: str) -> PlannedCheckRun:
    conclusion = conclusion_for(state.status)
    summary = check_run_markdown(state, secrets=secrets, conclusion=conclusion,
                                 audit_slot=AUDIT_SLOT)
    if len(summary) > MAX_CHECK_SUMMARY_CHARS:  # a run of hundreds of attempts
        summary = (summary[:MAX_CHECK_SUMMARY_CHARS - 200].rstrip() + "\n\n[... cut to "
                   f"GitHub's limit: AUDIT.md has everything ...]\n\n{AUDIT_SLOT}\n")
    output = CheckRunOutput(
        name=redact(check_name(task), secrets=secrets), conclusion=conclusion,
        title=check_run_title(state, secrets=secrets)[:MAX_TITLE_CHARS],
        summary=summary, details_url=run_url, external_id=f"selfcorrect run {state.run_id}")
    return PlannedCheckRun(branch=task.branch, output=output, audit_link=audit_link,
                           pull_number=task.pull_number)


def audit_link(task: Task, state: RunState, *, repository: str, server_url: str) -> str:
    return (f"{server_url}/{repository}/blob/{task.branch}/{RUNS_DIR}/{state.run_id}/"
            "AUDIT.md")


def changed_files(task: Task, state: RunState, *, passed: bool, draft_on_failure: bool,
                   verified: VerifiedScript | None = None) -> list[FileChange]:
    """What the commit changes in the repository: the script (with its header and its
    record, for a passing one), or a repair's rewritten files. A failed fix is never
    pushed onto the pull request it was asked on."""
    if state.spec.kind == "repair":
        shown = state.last if passed else (
            None if task.pull_number is not None or not draft_on_failure else _best_ran(state))
        files = shown.files if shown is not None else {}
        return [FileChange(path=path, content=text) for path, text in sorted(files.items())]
    output = str(task.loaded.spec.output)
    if verified is not None:
        return [FileChange(path=output, content=verified.script),
                FileChange(path=verified.lock, content=verified.record_text)]
    code = _code_to_commit(state, passed=passed, draft_on_failure=draft_on_failure)
    return [] if code is None else [FileChange(path=output, content=code)]


def _best_ran(state: RunState) -> Attempt | None:
    best = state.best()
    return best if best is not None and best.execution is not None else None


def _code_to_commit(state: RunState, *, passed: bool, draft_on_failure: bool) -> str | None:
    if passed and state.last is not None:
        return state.last.code
    if not draft_on_failure:
        return None
    best: Attempt | None = state.best()
    return best.code if best is not None and best.code.strip() else None


def tests_folder(run_id: str) -> str:
    return f"{RUNS_DIR}/{run_id}/tests"


def planned_tests(state: RunState) -> list[FileChange]:
    """Tests the plan step wrote (the user's own are in the repository already)."""
    if not state.tests_written_by_plan:
        return []
    folder = tests_folder(state.run_id)
    return [FileChange(path=f"{folder}/{PurePosixPath(name).name}", content=text)
            for name, text in sorted(state.tests.items())]


def _commit_message(task: Task, state: RunState) -> str:
    return render("reports/commit_message.txt.j2", title=task.title, run_id=state.run_id,
                  origin=task.origin, status_line=state.stop_reason or state.status.value)


def _pull_body(task: Task, state: RunState, *, summary_md: str, repository: str,
               server_url: str, passed: bool, record_path: str | None = None) -> str:
    changed = sorted(state.last.files) if state.last is not None and passed else []
    return render(
        "reports/pull_request.md.j2", origin_marker=origin_marker(task.origin),
        summary=summary_md, passed=passed, output=str(task.loaded.spec.output),
        repair=state.spec.kind == "repair", changed=changed,
        network_open=state.contract.network != "none", has_tests=bool(state.tests),
        judged=state.spec.judge, audit_path=f"{RUNS_DIR}/{state.run_id}/AUDIT.md",
        audit_link=audit_link(task, state, repository=repository, server_url=server_url),
        run_json_path=f"{RUNS_DIR}/{state.run_id}/run.json",
        tests_path=tests_folder(state.run_id) if state.tests_written_by_plan else None,
        in_process=bool(state.tests) and state.spec.isolation == "in-process",
        replayed=state.replayed, closes=task.closes, record_path=record_path,
        verify=verify_command(record_path) if record_path else None,
    )
