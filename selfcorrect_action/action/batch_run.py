"""Running several tasks as one batch (action/writes/batch.py): each run to its end, its
reports collected instead of published; then the batch's one plan published, and what it
wrote handed back to each run for the job's summary and outputs. `/selfcorrect regenerate`
and the scheduled update both publish this way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from selfcorrect_action.action import reporting
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.task_run import TaskOutcome, run_task
from selfcorrect_action.action.writes.apply import Applied
from selfcorrect_action.action.writes.batch import Member
from selfcorrect_action.action.writes.plan import WritePlan
from selfcorrect_action.errors import SelfcorrectError
from selfcorrect_action.github.check_runs import CheckResult
from selfcorrect_action.github.naming import report_marker
from selfcorrect_action.loop.state import Status

EXIT_OK = 0


@dataclass
class BatchRun:
    members: list[Member] = field(default_factory=list)
    outcomes: list[TaskOutcome] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # tasks an error stopped before the end
    code: int = EXIT_OK


def run_members(tasks: Sequence[Task], env: ActionEnv, *, step: str) -> BatchRun:
    """Each task run to its end, collected; a task an error stopped is said in the log and
    the next one runs. A cancel stops the batch (the outputs say so)."""
    batch = BatchRun()
    try:
        for task in tasks:
            env.cancel.check()
            env.say(step, f"{task.label}: from "
                    f"{'its committed script' if task.given_code is not None else 'scratch'}")
            try:
                outcome = run_task(task, context=env.context, inputs=env.inputs,
                                   forge=env.forge, door=env.door, environ=env.environ,
                                   secrets=env.secrets, say=env.say, cancel=env.cancel,
                                   connections=env.connections, collect=batch.members.append)
            except SelfcorrectError as exc:
                reporting.task_failed(env, task, exc, report_marker(
                    f"run={env.context.run_key} task={task.branch}"))
                batch.failed.append(task.label)
                batch.code = max(batch.code, exc.exit_code)
                continue
            batch.outcomes.append(outcome)
            batch.code = max(batch.code, outcome.exit_code)
    except KeyboardInterrupt:
        reporting.outputs(env, status=Status.CANCELLED.value)
        raise
    return batch


def publish_batch(plan: WritePlan, batch: BatchRun, env: ActionEnv, *, step: str,
                  finish: Callable[[list[TaskOutcome]], None] | None = None) -> Applied | None:
    """The batch's plan through the door; each run's outcome then carries the commit and
    its own check run. `finish`: the job's summary and outputs (reporting.finish unless
    given)."""
    applied = env.door.publish(plan)
    if applied is not None:
        batch.outcomes = [replace(outcome, applied=of(applied, outcome.task.label))
                          for outcome in batch.outcomes]
        if applied.held_back and batch.code == EXIT_OK:
            batch.code = 1  # passed, but not pushed
        branch = plan.commit.branch if plan.commit else ""
        env.say(step, applied.held_back or (
            f"pushed {applied.commit_sha[:7]} to {branch}" if applied.commit_sha
            else "nothing passed: nothing was pushed"))
        for task, check in applied.checks.items():
            if check.problem:
                reporting.check_warning(env, task, check.problem)
    if finish is not None:
        finish(batch.outcomes)
    else:
        reporting.finish(env, batch.outcomes, failed_tasks=len(batch.failed))
    return applied


def of(applied: Applied, task: str) -> Applied:
    """What the batch's writes were for one of its runs: the commit, and its check run."""
    return replace(applied, check=applied.checks.get(task, CheckResult()), checks={})
