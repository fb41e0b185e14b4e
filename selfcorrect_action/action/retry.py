"""What a comment asks to run again (`/selfcorrect retry`, `/selfcorrect resume`): who may,
and the task it names, read again from the issue (its text only as it was approved) or from
the spec a selfcorrect pull request was made from. Every refusal is said where the person
who asked will see it, with how to fix it."""

from __future__ import annotations

from pathlib import PurePosixPath

from selfcorrect_action.action import reporting
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.specs import replay_for
from selfcorrect_action.action.task import Task
from selfcorrect_action.errors import SpecError
from selfcorrect_action.github.events import RetryComment
from selfcorrect_action.github.issue_spec import spec_from_issue
from selfcorrect_action.github.naming import (
    APPROVAL_PREFIX,
    approved_digest,
    body_digest,
    is_ours,
    issue_branch,
    origin_in,
)
from selfcorrect_action.github.permissions import may_trigger
from selfcorrect_action.spec import LoadedSpec, load_repo_spec


def retry_task(trigger: RetryComment, env: ActionEnv, *, verb: str = "retry") -> Task | None:
    """The task a comment on an issue or on selfcorrect's pull request runs again; None
    when it was refused (and the refusal said)."""
    return (_on_pull_request(trigger, env, verb) if trigger.on_pull_request
            else _on_issue(trigger, env))


def _on_pull_request(trigger: RetryComment, env: ActionEnv, verb: str) -> Task | None:
    pull = env.forge.pull_request(trigger.number)
    ours = is_ours(pull.head_branch) and pull.head_repository.lower() == (
        env.context.repository.lower())
    origin = origin_in(pull.body) if ours else None
    if origin is None:
        if ours:
            why = "this pull request's description lost the hidden note of what it was made from"
            fix = "Label the issue it came from again, or run its spec by workflow_dispatch."
        elif pull.head_repository.lower() != env.context.repository.lower():
            why = (f"`/selfcorrect {verb}` works on pull requests selfcorrect opened, and this "
                   f"one comes from a fork ({pull.head_repository})")
            fix = "Comment it on a selfcorrect pull request, or on the issue it came from."
        else:
            why = (f"`/selfcorrect {verb}` works on pull requests selfcorrect opened (this "
                   f"one's branch is {pull.head_branch})")
            fix = "Comment it on a selfcorrect pull request, or on the issue it came from."
        reporting.refuse(env, trigger.number, verb, why, fix)
        return None
    kind, _, value = origin.partition(" ")
    approval = None
    if kind == "issue" and value.isascii() and value.isdigit():  # not "²": int() refuses it
        issue = env.forge.issue(int(value))
        if not still_approved(issue.number, issue.body, env, answer_on=trigger.number,
                               also_on=trigger.number):
            return None
        loaded = issue_spec(issue.number, issue.body, env, comment_on=trigger.number)
        label, closes = f"issue #{issue.number}", issue.number
        title, approval = issue.title or label, body_digest(issue.body)
    elif kind == "spec" and _inside_repository(value):
        loaded = workspace_spec(value, trigger.number, env)
        label, closes, title = value, None, value
    else:
        reporting.refuse(env, trigger.number, verb, f"this pull request's origin "
                         f"({origin!r}) is not a task selfcorrect can run again",
                         "Label the issue again, or run the spec by workflow_dispatch.")
        return None
    if loaded is None:
        return None
    return Task(loaded, origin=origin, label=label, title=title, branch=pull.head_branch,
                comment_on=trigger.number, closes=closes, guidance=trigger.guidance,
                replay=replay_for(env.context.workspace, env.inputs.replay,
                                  value if kind == "spec" else f"issue-{value}", count=1),
                approval=approval)


def _on_issue(trigger: RetryComment, env: ActionEnv) -> Task | None:
    issue = env.forge.issue(trigger.number)
    if not still_approved(issue.number, issue.body, env, answer_on=issue.number):
        return None
    loaded = issue_spec(issue.number, issue.body, env)
    if loaded is None:
        return None
    return Task(loaded, origin=f"issue {issue.number}", label=f"issue #{issue.number}",
                title=issue.title or f"issue #{issue.number}", branch=issue_branch(issue.number),
                comment_on=issue.number, closes=issue.number, guidance=trigger.guidance,
                replay=replay_for(env.context.workspace, env.inputs.replay,
                                  f"issue-{issue.number}", count=1),
                approval=body_digest(issue.body))


def still_approved(issue: int, body: str, env: ActionEnv, *, answer_on: int,
                    also_on: int | None = None) -> bool:
    """A retry runs the issue's text only as it was when someone with write access added
    the label: anyone can edit their own issue afterwards (to open the network, point
    inputs at other files, or rewrite the task), and the retry's author did not review
    that edit. The approved text's digest is in our comment of the labelled run."""
    digests = [approved_digest(comment.body) for number in {issue, also_on or issue}
               if (comment := env.forge.find_comment(number, APPROVAL_PREFIX)) is not None]
    if body_digest(body) in digests:
        return True
    reporting.refuse(
        env, answer_on, "approval",
        f"the text of issue #{issue} changed after its `{env.inputs.trigger_label}` label "
        "was added" if any(digests) else f"issue #{issue} has no run started by its label",
        f"Someone with write access must read the issue as it is now and add the "
        f"`{env.inputs.trigger_label}` label again (remove it first); then retry.")
    return False


def _inside_repository(path: str) -> bool:
    pure = PurePosixPath(path)
    return bool(path) and not pure.is_absolute() and ".." not in pure.parts


def allowed(actor: str, number: int, env: ActionEnv, *, fix: str) -> bool:
    decision = may_trigger(env.forge.permission(actor))
    env.say("permission", decision.reason)
    if not decision.allowed:
        reporting.refuse(env, number, "permission", decision.reason, fix)
        reporting.outputs(env, status="refused")
    return decision.allowed


def issue_spec(number: int, body: str, env: ActionEnv, *, comment_on: int | None = None
                ) -> LoadedSpec | None:
    try:
        return spec_from_issue(number, body, root=env.context.workspace)
    except SpecError as exc:
        # The comment labels the issue failed (spec_problems), in a plan too.
        reporting.spec_problems(env, comment_on or number, exc.problems)
        reporting.outputs(env, status="invalid-spec")
        return None


def workspace_spec(path: str, number: int, env: ActionEnv) -> LoadedSpec | None:
    try:
        return load_repo_spec(env.context.workspace, path)
    except SpecError as exc:
        reporting.spec_problems(env, number, exc.problems)
        reporting.outputs(env, status="invalid-spec")
        return None
