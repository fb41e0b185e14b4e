"""What the action tells people outside the run itself: refusals and spec problems as
comments, annotations in the job log and on the diff, the step outputs and the job summary.
Comments carry hidden markers and are edited rather than repeated."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.problems import Problem, parse_problem, parse_problems
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.task_run import TaskOutcome
from selfcorrect_action.action.workflow_commands import (
    annotate as _annotate,
)
from selfcorrect_action.action.workflow_commands import (
    append_summary,
    set_outputs,
)
from selfcorrect_action.action.writes.plan import path_problem
from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.github.events import MARKER_PREFIX
from selfcorrect_action.github.forge import CheckAnnotation, CheckRunOutput
from selfcorrect_action.github.naming import (
    VALIDATE_CHECK,
    VALIDATE_MARKER,
    approval_marker,
)
from selfcorrect_action.loop.state import Status
from selfcorrect_action.redact import redact
from selfcorrect_action.report.audit import summary_markdown
from selfcorrect_action.templating import render

log = logging.getLogger(__name__)
# Spec problems marked on the diff by the validate check run (GitHub takes 50 a request; a
# spec with more problems than this has its first ones marked, and all listed in the log).
MAX_CHECK_ANNOTATIONS = 500
MAX_ANNOTATION_CHARS = 4_000


def annotate(env: ActionEnv, level: str, message: str, *, file: str | None = None,
             line: int | None = None, col: int | None = None, title: str | None = None
             ) -> None:
    _annotate(level, message, file=file, line=line, col=col, title=title,
              secrets_=env.secrets)


def annotate_error(env: ActionEnv, message: str, *, file: str | None = None,
                   title: str | None = None) -> None:
    annotate(env, "error", message, file=file, title=title)


def annotate_problems(env: ActionEnv, problems: Sequence[str]) -> None:
    """Each problem inline on the file (and so on the pull request's diff)."""
    for problem in parse_problems(list(problems)):
        text = problem.message + (f" (hint: {problem.hint})" if problem.hint else "")
        annotate(env, "error", text, file=problem.file, line=problem.line, col=problem.col,
                 title="selfcorrect validate")


def refuse(env: ActionEnv, number: int, why: str, reason: str, fix: str) -> None:
    marker = f"{MARKER_PREFIX}refusal {why} run={env.context.run_key} -->"
    body = render("reports/refusal.md.j2", marker=marker, reason=reason, fix=fix)
    annotate(env, "notice", f"selfcorrect did not run: {reason}")
    _comment(env, number, marker, body)


def spec_problems(env: ActionEnv, number: int, problems: Sequence[str]) -> None:
    for problem in parse_problems(list(problems)):
        annotate(env, "error", f"{problem.where} {problem.message}".strip(),
                 title="selfcorrect: the task in the issue")
    marker = f"{MARKER_PREFIX}spec-problems #{number} -->"
    body = render("reports/spec_problems.md.j2", marker=marker,
                  problems=parse_problems(list(problems)), label=env.inputs.trigger_label)
    _comment(env, number, marker, body, failed_label=True)


def validate_comment(problems: Sequence[str], files: Sequence[str]) -> str:
    return render("reports/validate_comment.md.j2", marker=VALIDATE_MARKER,
                  problems=parse_problems(list(problems)), files=list(files))


def validate_check(env: ActionEnv, problems: Sequence[str], files: Sequence[str]
                   ) -> CheckRunOutput:
    """The validate check run: red with each located problem marked on its spec's line,
    or green when every changed spec is valid."""
    parsed = [parse_problem(text) for text in problems[:MAX_CHECK_ANNOTATIONS]]
    annotations = [_annotation(problem, env.secrets) for problem in parsed
                   if problem.file and problem.line and not path_problem(problem.file)]
    count = len(problems)
    title = (f"{count} problem{'s' if count != 1 else ''} in {len(files)} task "
             f"spec{'s' if len(files) != 1 else ''}" if problems
             else f"{len(files)} task spec{'s' if len(files) != 1 else ''} valid")
    summary = render("reports/validate_check.md.j2", problems=parse_problems(list(problems)),
                     files=list(files), annotated=len(annotations))
    return CheckRunOutput(
        name=VALIDATE_CHECK, conclusion="failure" if problems else "success", title=title,
        summary=redact(summary, secrets=env.secrets), details_url=env.context.run_url,
        external_id=f"selfcorrect validate {env.context.run_key}", annotations=annotations)


def _annotation(problem: Problem, secrets: Sequence[str]) -> CheckAnnotation:
    assert problem.file is not None and problem.line is not None
    message = problem.message + (f" (hint: {problem.hint})" if problem.hint else "")
    return CheckAnnotation(path=problem.file, start_line=problem.line, end_line=problem.line,
                           start_column=problem.col, end_column=problem.col,
                           message=redact(message, secrets=secrets)[:MAX_ANNOTATION_CHARS],
                           title="selfcorrect validate")


def task_failed(env: ActionEnv, task: Task, exc: SelfcorrectError, marker: str) -> None:
    """An error that stopped a task before its plan was applied (the sandbox, the model
    API, GitHub): said in the log, and in the task's live comment when it has one, so no
    run ends silently."""
    annotate(env, "error", f"{task.label}: {exc}")
    if task.comment_on is not None:
        # The approval the run was started under stays in the comment: the retry
        # this comment suggests is checked against it (issue 16, item 2).
        body = render("reports/action_error.md.j2", marker=marker, task=task.label,
                      message=exc.message, hint=exc.hint or "", run_url=env.context.run_url,
                      approval=approval_marker(task.approval)
                      if task.approval and env.door.approves else "")
        _comment(env, task.comment_on, marker, body, failed_label=True)


def finish(env: ActionEnv, outcomes: Sequence[TaskOutcome], *, failed_tasks: int) -> None:
    for outcome in outcomes:
        check = outcome.applied.check if outcome.applied else None
        if check is not None and check.problem:
            check_warning(env, outcome.task.label, check.problem)
        append_summary(env.context.summary_file, render(
            "reports/job_summary.md.j2",
            summary=summary_markdown(outcome.state, secrets=env.secrets),
            pr_url=outcome.pr_url, audit=_relative(env, outcome),
            viewer=_relative_viewer(env, outcome),
            held_back=outcome.applied.held_back if outcome.applied else None,
            no_pull=outcome.applied.no_pull_request if outcome.applied else None,
            planned=outcome.applied is None, check=check), secrets_=env.secrets)
    passed = all(o.state.status is Status.PASSED for o in outcomes) and not failed_tasks
    status = (outcomes[0].state.status.value if len(outcomes) == 1 and not failed_tasks
              else "passed" if passed and outcomes else "failed" if outcomes else "error")
    usage = [o.state.usage for o in outcomes]
    outputs(env, status=status,
            pr_url="\n".join(o.pr_url for o in outcomes if o.pr_url),
            attempts=str(sum(len(o.state.attempts) for o in outcomes)),
            tokens=str(sum(u.tokens for u in usage)),
            cost_usd=f"{sum(u.cost_usd for u in usage):.6f}" if all(u.cost_known for u in usage)
            else "unknown",
            audit_path="\n".join(_relative(env, o) for o in outcomes),
            viewer_path="\n".join(_relative_viewer(env, o) for o in outcomes if o.viewer_path),
            results=json.dumps([_result(env, o) for o in outcomes]))


def check_warning(env: ActionEnv, task: str, problem: str) -> None:
    """A check run GitHub would not take: a warning, never the run's failure."""
    annotate(env, "warning", f"{task}: {problem}", title="selfcorrect check run")


def outputs(env: ActionEnv, **values: str) -> None:
    set_outputs(env.context.output_file,
                {name.replace("_", "-"): value for name, value in values.items()},
                secrets_=env.secrets)


def _result(env: ActionEnv, outcome: TaskOutcome) -> dict[str, object]:
    state = outcome.state
    return {"task": outcome.task.label, "status": state.status.value,
            "pr_url": outcome.pr_url or None, "attempts": len(state.attempts),
            "tokens": state.usage.tokens,
            "cost_usd": state.usage.cost_usd if state.usage.cost_known else None,
            "audit_path": _relative(env, outcome),
            "viewer_path": _relative_viewer(env, outcome) or None,
            "held_back": outcome.applied.held_back if outcome.applied else None,
            "no_pull_request": outcome.applied.no_pull_request if outcome.applied else None,
            "check_run_url": _check_url(outcome)}


def _check_url(outcome: TaskOutcome) -> str | None:
    check = outcome.applied.check.check if outcome.applied else None
    return (check.html_url or None) if check is not None else None


def _relative(env: ActionEnv, outcome: TaskOutcome) -> str:
    try:
        return outcome.audit_path.relative_to(env.context.workspace).as_posix()
    except ValueError:
        return str(outcome.audit_path)


def comment(env: ActionEnv, number: int, marker: str, body: str) -> None:
    """One comment of ours on #number, found again (and edited) by its marker."""
    _comment(env, number, marker, body)


def _relative_viewer(env: ActionEnv, outcome: TaskOutcome) -> str:
    if outcome.viewer_path is None:
        return ""
    try:
        return outcome.viewer_path.relative_to(env.context.workspace).as_posix()
    except ValueError:
        return str(outcome.viewer_path)


def _comment(env: ActionEnv, number: int, marker: str, body: str,
             *, failed_label: bool = False) -> None:
    env.door.comment(number, marker, redact(body, secrets=env.secrets),
                     failed_label=failed_label)
