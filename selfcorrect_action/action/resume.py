"""`/selfcorrect resume [more attempts N]` and what a fresh start says of a checkpoint (issue
37, item 4). A resume is a retry that goes on: the same checks (write access, the issue's
text as approved), then the task's checkpoint downloaded from the repository and handed to
the core, which plays its recording back and goes live at the first call it had not made.

A re-label after an interruption starts nothing while a usable checkpoint of the same
approved text is kept: it says what resuming would save and lets the person choose
(`/selfcorrect resume`, or `/selfcorrect retry`, which starts afresh), so a run is never
paid for twice by default. A retry starts afresh, and its comment says which checkpoint it
replaces.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from selfcorrect_action.action import reporting
from selfcorrect_action.action.checkpoints import look_up
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.retry import retry_task
from selfcorrect_action.action.task import ResumeFrom, Task
from selfcorrect_action.action.task_run import origin
from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.checkpoint_refs import download
from selfcorrect_action.github.events import ResumeComment, RetryComment
from selfcorrect_action.github.naming import approval_marker, report_marker
from selfcorrect_action.templating import render

RETRY_INSTEAD = ("Comment `/selfcorrect retry` to run it afresh (write access needed), or "
                 "label the issue again.")


def resume_task(trigger: ResumeComment, env: ActionEnv, scratch: Path) -> Task | None:
    """The task to go on with, its checkpoint downloaded under `scratch`; None when there
    is nothing to resume (said on the issue or pull request, with what to do)."""
    if trigger.problem:
        reporting.refuse(env, trigger.number, "resume", trigger.problem, RETRY_INSTEAD)
        return None
    task = retry_task(RetryComment(repository=trigger.repository, actor=trigger.actor,
                                   number=trigger.number,
                                   on_pull_request=trigger.on_pull_request,
                                   comment_id=trigger.comment_id, guidance=""),
                      env, verb="resume")
    if task is None:
        return None
    key = task.checkpoint_key
    assert key is not None  # an issue's or a spec's task: both keep checkpoints
    lookup = look_up(env, key, approval=task.approval)
    if lookup.found is None or lookup.found.note is None:
        reporting.refuse(env, trigger.number, "resume",
                         f"{task.label} has nothing to resume: {lookup.why_not}",
                         RETRY_INSTEAD)
        return None
    found, note = lookup.found, lookup.found.note
    try:
        folder = download(env.forge, found, scratch / "checkpoint")
    except UsageError as exc:
        reporting.refuse(env, trigger.number, "resume", str(exc), RETRY_INSTEAD)
        return None
    env.say("resume", f"{task.label}: going on from {found.ref} ({found.commit.sha[:7]}), "
            f"after {note.saved()}")
    more = [f"{n} more {what}" for n, what in ((trigger.more_attempts, "attempts"),
                                               (trigger.more_tokens, "tokens"),
                                               (trigger.more_usd, "USD")) if n]
    intro = (f"Resumed from the checkpoint `{found.ref}` ({found.commit.sha[:7]}), after "
             f"{note.saved()}: only the calls not yet made are paid for"
             + (f"; with {', '.join(more)}" if more else "") + ".")
    return replace(task, notice=intro, resume=ResumeFrom(
        folder, found.commit.sha, note, more_attempts=trigger.more_attempts,
        more_tokens=trigger.more_tokens, more_usd=trigger.more_usd))


def offer_resume(task: Task, env: ActionEnv) -> bool:
    """A labelled issue whose interrupted run left a usable checkpoint of the same text:
    the choice said on the issue instead of a run started over. Whether it was."""
    key = task.checkpoint_key
    if key is None or task.comment_on is None:
        return False
    found = look_up(env, key, approval=task.approval).found
    if found is None or found.note is None:
        return False
    marker = report_marker(f"run={env.context.run_key} task={task.branch}")
    approval = approval_marker(task.approval) if task.approval and env.door.approves else ""
    body = render("reports/resume_offer.md.j2", marker=marker, approval=approval,
                  task=task.label, status=found.note.status, ref=found.ref,
                  saved=found.note.saved(), run_url=env.context.run_url,
                  public=origin(env.context).visibility == "public")
    env.door.comment(task.comment_on, marker, body)
    env.say("resume", f"{task.label}: not started over; {found.ref} can be resumed "
            f"(after {found.note.saved()})")
    reporting.outputs(env, status="resumable")
    return True


def replaced_checkpoint(task: Task, env: ActionEnv) -> Task:
    """A retry starts afresh; its comment says which checkpoint that replaces."""
    key = task.checkpoint_key
    found = look_up(env, key, approval=task.approval).found if key else None
    if found is None or found.note is None:
        return task
    return replace(task, notice=(
        f"This run starts afresh, as `/selfcorrect retry` does, and replaces the checkpoint "
        f"`{found.ref}` of an earlier run (after {found.note.saved()}); "
        "`/selfcorrect resume` would have gone on from it."))
