"""One handler per trigger. Each checks who asked (write access, from the permission
endpoint), reads the task, and runs it through task_run; every refusal is explained where
the person who asked will see it, with how to fix it."""

from __future__ import annotations

import logging
from collections.abc import Callable

from selfcorrect_action.action import reporting
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.specs import (
    load_workspace_spec,
    matches,
    replay_for,
    spec_paths,
)
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.task_run import TaskOutcome, run_task
from selfcorrect_action.errors import SelfcorrectError, SpecError, UsageError
from selfcorrect_action.github.events import (
    Dispatch,
    IssueLabeled,
    RetryComment,
    SpecsChanged,
)
from selfcorrect_action.github.forge import ForgeError
from selfcorrect_action.github.issue_spec import spec_from_issue
from selfcorrect_action.github.naming import (
    LABEL_FAILED,
    VALIDATE_MARKER,
    is_ours,
    issue_branch,
    origin_in,
    report_marker,
    task_branch,
)
from selfcorrect_action.github.permissions import may_trigger
from selfcorrect_action.spec import LoadedSpec

log = logging.getLogger(__name__)
EXIT_OK, EXIT_FAILED = 0, 1


def on_issue_labeled(trigger: IssueLabeled, env: ActionEnv) -> int:
    label = env.inputs.trigger_label
    if not _allowed(trigger.actor, trigger.number, env,
                    fix=f"Someone with write access can add the `{label}` label instead."):
        _quietly(lambda: env.forge.remove_label(trigger.number, label))
        return EXIT_OK
    loaded = _issue_spec(trigger.number, trigger.body, env)
    if loaded is None:
        return EXIT_FAILED
    task = Task(loaded, origin=f"issue {trigger.number}", label=f"issue #{trigger.number}",
                title=trigger.title or f"issue #{trigger.number}",
                branch=issue_branch(trigger.number), comment_on=trigger.number,
                closes=trigger.number,
                replay=replay_for(env.context.workspace, env.inputs.replay,
                                  f"issue-{trigger.number}", count=1))
    return _run_all([task], env)


def on_retry(trigger: RetryComment, env: ActionEnv) -> int:
    if not _allowed(trigger.actor, trigger.number, env,
                    fix="Ask someone with write access to comment `/selfcorrect retry`."):
        return EXIT_OK
    task = (_retry_on_pull_request(trigger, env) if trigger.on_pull_request
            else _retry_on_issue(trigger, env))
    return EXIT_OK if task is None else _run_all([task], env)


def on_dispatch(trigger: Dispatch, env: ActionEnv) -> int:
    pattern = trigger.tasks or env.inputs.tasks
    paths = spec_paths(env.context.workspace, pattern)
    if not paths:
        reporting.annotate_error(env, f"no task spec matches {pattern!r}", title="selfcorrect")
        return EXIT_FAILED
    tasks, failed = [], False
    for path in paths:
        try:
            loaded = load_workspace_spec(env.context.workspace, path)
            replay = replay_for(env.context.workspace, env.inputs.replay, path,
                                count=len(paths))
        except SpecError as exc:
            reporting.annotate_problems(env, exc.problems)
            failed = True
            continue
        except UsageError as exc:
            reporting.annotate_error(env, str(exc), file=path)
            failed = True
            continue
        tasks.append(Task(loaded, origin=f"spec {path}", label=path, title=path,
                          branch=task_branch(path), replay=replay))
    code = _run_all(tasks, env) if tasks else EXIT_FAILED
    return max(code, EXIT_FAILED if failed else EXIT_OK)


def on_specs_changed(trigger: SpecsChanged, env: ActionEnv) -> int:
    changed = [path for path in env.forge.pull_request_files(trigger.number)
               if matches(path, env.inputs.tasks)]
    if not changed:
        env.say("validate", f"no task spec ({env.inputs.tasks}) changed in #{trigger.number}")
        # A push that undid the spec changes must not leave an old list of problems up.
        _update_validate_comment(env, trigger, [], [], create=False)
        reporting.outputs(env, status="valid")
        return EXIT_OK
    problems: list[str] = []
    for path in changed:
        try:
            load_workspace_spec(env.context.workspace, path)
        except SpecError as exc:
            problems.extend(exc.problems)
    reporting.annotate_problems(env, problems)
    _update_validate_comment(env, trigger, problems, changed, create=True)
    env.say("validate", f"{len(changed)} spec(s), {len(problems)} problem(s)")
    reporting.outputs(env, status="invalid-spec" if problems else "valid")
    return EXIT_FAILED if problems else EXIT_OK


def _update_validate_comment(env: ActionEnv, trigger: SpecsChanged, problems: list[str],
                             files: list[str], *, create: bool) -> None:
    """The pull request's one validate comment, updated on every push (made only when
    there is something to say)."""
    body = reporting.validate_comment(problems, files)
    try:
        existing = env.forge.find_comment(trigger.number, VALIDATE_MARKER)
        if existing is not None:
            env.forge.edit_comment(existing.id, body)
        elif create:
            env.forge.create_comment(trigger.number, body)
    except ForgeError as exc:
        why = (" (a pull request from a fork gets a read-only token)" if trigger.from_fork
               else "")
        reporting.annotate(env, "warning", f"could not comment on #{trigger.number}{why}: "
                           f"{exc.message}; the problems are the annotations above")


def _retry_on_pull_request(trigger: RetryComment, env: ActionEnv) -> Task | None:
    pull = env.forge.pull_request(trigger.number)
    ours = is_ours(pull.head_branch) and pull.head_repository.lower() == (
        env.context.repository.lower())
    origin = origin_in(pull.body) if ours else None
    if origin is None:
        reporting.refuse(env, trigger.number, "retry",
                         "`/selfcorrect retry` works on pull requests selfcorrect opened"
                         + ("" if ours else f" (this one's branch is {pull.head_branch})"),
                         "Comment it on a selfcorrect pull request, or on the issue it came "
                         "from." if ours or not is_ours(pull.head_branch) else
                         "The pull request body lost its hidden origin marker.")
        return None
    kind, _, value = origin.partition(" ")
    if kind == "issue" and value.isdigit():
        issue = env.forge.issue(int(value))
        loaded = _issue_spec(issue.number, issue.body, env, comment_on=trigger.number)
        label, closes = f"issue #{issue.number}", issue.number
        title = issue.title or label
    else:
        loaded = _workspace_spec(value, trigger.number, env)
        label, closes, title = value, None, value
    if loaded is None:
        return None
    return Task(loaded, origin=origin, label=label, title=title, branch=pull.head_branch,
                comment_on=trigger.number, closes=closes, guidance=trigger.guidance,
                replay=replay_for(env.context.workspace, env.inputs.replay,
                                  value if kind == "spec" else f"issue-{value}", count=1))


def _retry_on_issue(trigger: RetryComment, env: ActionEnv) -> Task | None:
    issue = env.forge.issue(trigger.number)
    loaded = _issue_spec(issue.number, issue.body, env)
    if loaded is None:
        return None
    return Task(loaded, origin=f"issue {issue.number}", label=f"issue #{issue.number}",
                title=issue.title or f"issue #{issue.number}", branch=issue_branch(issue.number),
                comment_on=issue.number, closes=issue.number, guidance=trigger.guidance,
                replay=replay_for(env.context.workspace, env.inputs.replay,
                                  f"issue-{issue.number}", count=1))


def _allowed(actor: str, number: int, env: ActionEnv, *, fix: str) -> bool:
    decision = may_trigger(env.forge.permission(actor))
    env.say("permission", decision.reason)
    if not decision.allowed:
        reporting.refuse(env, number, "permission", decision.reason, fix)
        reporting.outputs(env, status="refused")
    return decision.allowed


def _issue_spec(number: int, body: str, env: ActionEnv, *, comment_on: int | None = None
                ) -> LoadedSpec | None:
    try:
        return spec_from_issue(number, body, root=env.context.workspace)
    except SpecError as exc:
        reporting.spec_problems(env, comment_on or number, exc.problems)
        _quietly(lambda: env.forge.add_labels(comment_on or number, [LABEL_FAILED]))
        reporting.outputs(env, status="invalid-spec")
        return None


def _workspace_spec(path: str, number: int, env: ActionEnv) -> LoadedSpec | None:
    try:
        return load_workspace_spec(env.context.workspace, path)
    except SpecError as exc:
        reporting.spec_problems(env, number, exc.problems)
        reporting.outputs(env, status="invalid-spec")
        return None


def _run_all(tasks: list[Task], env: ActionEnv) -> int:
    outcomes: list[TaskOutcome] = []
    code = EXIT_OK
    for task in tasks:
        env.say("task", f"{task.label} -> {task.branch}")
        try:
            outcome = run_task(task, context=env.context, inputs=env.inputs, forge=env.forge,
                               environ=env.environ, secrets=env.secrets, say=env.say)
        except SelfcorrectError as exc:
            reporting.task_failed(env, task, exc,
                                  report_marker(f"run={env.context.run_key} task={task.branch}"))
            code = max(code, exc.exit_code)
            continue
        outcomes.append(outcome)
        code = max(code, outcome.exit_code)
    reporting.finish(env, outcomes, failed_tasks=len(tasks) - len(outcomes))
    return code


def _quietly(write: Callable[[], None]) -> None:
    """A courtesy write (a label): its failure is logged, never the end of the run."""
    try:
        write()
    except ForgeError as exc:
        log.warning("%s", exc.message)
