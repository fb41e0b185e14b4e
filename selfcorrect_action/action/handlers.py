"""One handler per trigger. Each checks who asked (write access, from the permission
endpoint), reads the task, and runs it through task_run; every refusal is explained where
the person who asked will see it, with how to fix it."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

from selfcorrect_action.action import reporting
from selfcorrect_action.action.autoupdate import on_update
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.fix import fix_task
from selfcorrect_action.action.pull_check import FAILING, reverify_pull_request, reverify_push
from selfcorrect_action.action.regenerate import on_regenerate
from selfcorrect_action.action.resume import offer_resume, replaced_checkpoint, resume_task
from selfcorrect_action.action.retry import allowed, issue_spec, retry_task
from selfcorrect_action.action.specs import (
    matches,
    replay_for,
    spec_paths,
)
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.task_run import TaskOutcome, run_task
from selfcorrect_action.crash import ACTION_CRASH_DIR
from selfcorrect_action.errors import SelfcorrectError, SpecError, UsageError
from selfcorrect_action.github.events import (
    Dispatch,
    FixComment,
    IssueLabeled,
    Pushed,
    ResumeComment,
    RetryComment,
    Scheduled,
    SpecsChanged,
    Trigger,
)
from selfcorrect_action.github.naming import (
    VALIDATE_MARKER,
    body_digest,
    issue_branch,
    report_marker,
    task_branch,
)
from selfcorrect_action.loop.state import Status
from selfcorrect_action.spec import load_repo_spec

log = logging.getLogger(__name__)
EXIT_OK, EXIT_FAILED = 0, 1


def dispatch(trigger: Trigger, env: ActionEnv) -> int:
    """The handler of each kind of trigger."""
    if trigger.kind == "issue":
        return on_issue_labeled(trigger, env)
    if trigger.kind == "retry":
        return on_retry(trigger, env)
    if trigger.kind == "resume":
        return on_resume(trigger, env)
    if trigger.kind == "schedule":
        return on_update(trigger, env)
    if trigger.kind == "push":
        return on_push(trigger, env)
    if trigger.kind == "dispatch":
        if env.inputs.update is not None:  # the scheduled update, started by hand
            return on_update(Scheduled(repository=trigger.repository, actor=trigger.actor),
                             env)
        return on_dispatch(trigger, env)
    if trigger.kind == "validate":
        return on_specs_changed(trigger, env)
    if trigger.kind == "fix":
        return on_fix(trigger, env)
    if trigger.kind == "regenerate":
        if not allowed(trigger.actor, trigger.number, env, fix="Ask someone with write "
                        "access to comment `/selfcorrect regenerate`."):
            return EXIT_OK
        return on_regenerate(trigger, env)
    raise AssertionError(f"no handler for {trigger.kind}")


def on_issue_labeled(trigger: IssueLabeled, env: ActionEnv) -> int:
    label = env.inputs.trigger_label
    if not allowed(trigger.actor, trigger.number, env,
                    fix=f"Someone with write access can add the `{label}` label instead."):
        env.door.labels(trigger.number, remove=[label])
        return EXIT_OK
    loaded = issue_spec(trigger.number, trigger.body, env)
    if loaded is None:
        return EXIT_FAILED
    task = Task(loaded, origin=f"issue {trigger.number}", label=f"issue #{trigger.number}",
                title=trigger.title or f"issue #{trigger.number}",
                branch=issue_branch(trigger.number), comment_on=trigger.number,
                closes=trigger.number,
                replay=replay_for(env.context.workspace, env.inputs.replay,
                                  f"issue-{trigger.number}", count=1),
                # The labeler, who has write access, approved this text of the issue.
                approval=body_digest(trigger.body))
    if offer_resume(task, env):  # an interrupted run of this text can go on instead
        return EXIT_OK
    return _run_all([task], env)


def on_retry(trigger: RetryComment, env: ActionEnv) -> int:
    if not allowed(trigger.actor, trigger.number, env,
                   fix="Ask someone with write access to comment `/selfcorrect retry`."):
        return EXIT_OK
    task = retry_task(trigger, env)
    if task is None:
        return EXIT_OK
    return _run_all([replaced_checkpoint(task, env)], env)


def on_resume(trigger: ResumeComment, env: ActionEnv) -> int:
    """`/selfcorrect resume`: the task's checkpoint, downloaded for the run's length only."""
    if not allowed(trigger.actor, trigger.number, env,
                   fix="Ask someone with write access to comment `/selfcorrect resume`."):
        return EXIT_OK
    with tempfile.TemporaryDirectory(prefix="selfcorrect-resume-") as scratch:
        task = resume_task(trigger, env, Path(scratch))
        return EXIT_OK if task is None else _run_all([task], env)


def on_fix(trigger: FixComment, env: ActionEnv) -> int:
    if not allowed(trigger.actor, trigger.number, env,
                    fix="Ask someone with write access to comment `/selfcorrect fix`."):
        return EXIT_OK
    task = fix_task(trigger, env)
    return EXIT_OK if task is None else _run_all([task], env)


def on_dispatch(trigger: Dispatch, env: ActionEnv) -> int:
    pattern = env.inputs.tasks  # the workflow passes a dispatch form's glob in as `tasks`
    paths = spec_paths(env.context.workspace, pattern)
    if not paths:
        reporting.annotate_error(env, f"no task spec matches {pattern!r}", title="selfcorrect")
        return EXIT_FAILED
    tasks, failed = [], False
    branches = [task_branch(path) for path in paths]
    for path, branch in zip(paths, branches, strict=True):
        if branches.count(branch) > 1:
            # Two specs on one branch would commit over each other and share one PR.
            twins = [p for p, b in zip(paths, branches, strict=True) if b == branch]
            reporting.annotate_error(env, f"{path}: its branch name {branch} is also that of "
                                     f"{', '.join(p for p in twins if p != path)}; rename one "
                                     "of them", file=path)
            failed = True
    for path in [p for p, b in zip(paths, branches, strict=True) if branches.count(b) == 1]:
        try:
            loaded = load_repo_spec(env.context.workspace, path)
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
        # The spec was read from the dispatched branch: its PR goes there too, where its
        # inputs and tests are.
        tasks.append(Task(loaded, origin=f"spec {path}", label=path, title=path,
                          branch=task_branch(path), replay=replay,
                          base_branch=trigger.ref.removeprefix("refs/heads/")
                          if trigger.ref.startswith("refs/heads/") else None))
    code = _run_all(tasks, env) if tasks else EXIT_FAILED
    return max(code, EXIT_FAILED if failed else EXIT_OK)


def on_specs_changed(trigger: SpecsChanged, env: ActionEnv) -> int:
    """A pull request: the task specs it changes validated, then the generated scripts it
    touches re-verified against the base branch's records (action/pull_check.py)."""
    files = env.forge.pull_request_files(trigger.number)
    problems = _validate_specs(trigger, env, [path for path in files
                                              if matches(path, env.inputs.tasks)])
    failing = [result for result in reverify_pull_request(env, trigger, files)
               if result.status in FAILING]
    status = "invalid-spec" if problems else "failed" if failing else "valid"
    reporting.outputs(env, status=status)
    return EXIT_FAILED if problems or failing else EXIT_OK


def on_push(trigger: Pushed, env: ActionEnv) -> int:
    """A push to the default branch: the generated scripts it touches re-verified against
    the records as they were before it, a check run per spec on the pushed commit. A push
    to another branch is its pull request's to check."""
    default = env.forge.default_branch()
    if trigger.ref != f"refs/heads/{default}":
        env.say("check", f"{trigger.ref} is not the default branch ({default}): its pull "
                "request re-verifies what it changes")
        reporting.outputs(env, status="ignored")
        return EXIT_OK
    failing = [result for result in reverify_push(env, trigger) if result.status in FAILING]
    reporting.outputs(env, status="failed" if failing else "valid")
    return EXIT_FAILED if failing else EXIT_OK


def _validate_specs(trigger: SpecsChanged, env: ActionEnv, changed: list[str]) -> list[str]:
    if not changed:
        env.say("validate", f"no task spec ({env.inputs.tasks}) changed in #{trigger.number}")
        # A push that undid the spec changes must not leave an old list of problems up.
        _update_validate_comment(env, trigger, [], [], create=False)
        return []
    problems: list[str] = []
    for path in changed:
        try:
            load_repo_spec(env.context.workspace, path)
        except SpecError as exc:
            problems.extend(exc.problems)
    reporting.annotate_problems(env, problems)
    _update_validate_comment(env, trigger, problems, changed, create=True)
    _validate_check_run(env, trigger, problems, changed)
    env.say("validate", f"{len(changed)} spec(s), {len(problems)} problem(s)")
    return problems


def _update_validate_comment(env: ActionEnv, trigger: SpecsChanged, problems: list[str],
                             files: list[str], *, create: bool) -> None:
    """The pull request's one validate comment, updated on every push (made only when
    there is something to say)."""
    body = reporting.validate_comment(problems, files)
    env.door.comment(
        trigger.number, VALIDATE_MARKER, body, create=create, plannable=False,
        why=" (a pull request from a fork gets a read-only token)" if trigger.from_fork else "",
        then="; the problems are the annotations above")


def _validate_check_run(env: ActionEnv, trigger: SpecsChanged, problems: list[str],
                        files: list[str]) -> None:
    """The verdict on the pull request's head commit, its problems marked on the diff."""
    if not trigger.head_sha:
        return
    output = reporting.validate_check(env, problems, files)
    result = env.door.check_run(trigger.head_sha, output)
    if result.check is not None:
        env.say("validate", f"check run {output.name!r}: {output.conclusion} on "
                f"{trigger.head_sha[:7]}")
    elif result.problem:
        reporting.check_warning(env, f"#{trigger.number}", result.problem + (
            "; this pull request comes from a fork" if trigger.from_fork else ""))
    else:
        env.say("validate", result.note)


def _run_all(tasks: list[Task], env: ActionEnv) -> int:
    try:
        return _run_each(tasks, env)
    except KeyboardInterrupt:
        # A cancelled job (SIGTERM) or a Ctrl-C: the outputs say so, not a missing status
        # (issue 34); cli.main still exits 130 or 143.
        reporting.outputs(env, status=Status.CANCELLED.value)
        raise


def _run_each(tasks: list[Task], env: ActionEnv) -> int:
    outcomes: list[TaskOutcome] = []
    code = EXIT_OK
    for task in tasks:
        env.cancel.check()  # a cancelled job starts no further task
        env.say("task", f"{task.label} -> {task.branch}")
        try:
            outcome = run_task(task, context=env.context, inputs=env.inputs, forge=env.forge,
                               door=env.door, environ=env.environ, secrets=env.secrets,
                               say=env.say, cancel=env.cancel, connections=env.connections)
        except SelfcorrectError as exc:
            reporting.task_failed(env, task, exc,
                                  report_marker(f"run={env.context.run_key} task={task.branch}"))
            code = max(code, exc.exit_code)
            continue
        except Exception as exc:
            # Our bug: the issue says so first instead of showing a run that went silent,
            # then it propagates to cli.main's last resort (crash.py), which prints one line
            # (no traceback in a log that is often public), writes the redacted traceback
            # to .selfcorrect/runs/crash-*.log and exits 3.
            reporting.task_failed(env, task, SelfcorrectError(
                f"an internal error ({type(exc).__name__}) stopped the run",
                hint="this is a bug in selfcorrect: please report it with the crash log the "
                     f"job's log names ({ACTION_CRASH_DIR}/crash-*.log, in the job's "
                     "uploaded artifacts)"),
                report_marker(f"run={env.context.run_key} task={task.branch}"))
            raise
        outcomes.append(outcome)
        code = max(code, outcome.exit_code)
    reporting.finish(env, outcomes, failed_tasks=len(tasks) - len(outcomes))
    return code
