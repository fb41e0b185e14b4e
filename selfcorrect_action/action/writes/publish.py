"""mode publish: applying the write plans a read-only `mode: plan` job saved, and nothing
else: a plan may only write to what this job's own event is about (its issue or pull
request, and the branch selfcorrect uses for it), whoever made the file.

An approval (the hidden digest of the issue text a person with write access labelled,
which later retries are held to) is never taken from a plan: one in a planned comment is
refused, and the publisher writes it itself for a labelled issue's run, from this job's own
event and a permission check of its own."""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.action import reporting
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.task_run import check_line
from selfcorrect_action.action.writes.plan import WritePlan
from selfcorrect_action.action.writes.store import load_plans
from selfcorrect_action.action.writes.targets import publish_targets
from selfcorrect_action.action.writes.update import is_update, merge_updates
from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.github.events import IssueLabeled, Trigger
from selfcorrect_action.github.naming import APPROVAL_PREFIX, body_digest, with_approval
from selfcorrect_action.github.permissions import may_trigger
from selfcorrect_action.records import evolve
from selfcorrect_action.spec import load_spec_text


def publish_saved(env: ActionEnv, trigger: Trigger) -> int:
    """mode publish: apply what a `mode: plan` job saved, and nothing else: a plan may
    only write to what this job's own event is about (its issue or pull request, and the
    branch selfcorrect uses for it), whoever made the file."""
    folder = env.context.workspace / env.inputs.plan_dir
    urls = []
    targets = publish_targets(trigger, env)
    saved = load_plans(folder)
    # A matrix of scheduled-update jobs saved one batch each: one commit and one pull
    # request for all of them (action/writes/update.py), applied where the first one was.
    updates = [path for path, plan in saved if is_update(plan)]
    if len(updates) > 1:
        merged = next(plan for plan in merge_updates([plan for _, plan in saved],
                                                     run_url=env.context.run_url)
                      if is_update(plan))
        env.say("publish", f"{len(updates)} scheduled-update plans merged into one commit "
                "and one pull request")
        saved = [(path, merged if path == updates[0] else plan) for path, plan in saved
                 if not is_update(plan) or path == updates[0]]
    for path, plan in saved:
        if plan.repository.lower() != env.context.repository.lower():
            raise UsageError(f"{path}: the plan was made for {plan.repository}, this job runs "
                             f"in {env.context.repository}",
                             hint="apply a plan in the repository whose run made it")
        if problem := targets.problem_with(plan) or scripts_problem(plan, env):
            raise UsageError(f"{path}: {problem}", hint="apply only plans that `mode: plan` "
                             "made for this workflow run's own event")
        applied = env.door.publish(_approved(path, plan, trigger, env))
        if applied is None:
            raise UsageError("mode publish applies plans, and this job's door records them",
                             hint="set `mode: publish` in the job that applies the plans")
        if applied.pull_request is not None:
            urls.append(applied.pull_request.html_url)
        env.say("publish", f"{plan.task}: " + (applied.held_back or (
            applied.pull_request.html_url if applied.pull_request else "no pull request")))
        if plan.check_run is not None:
            env.say("publish", f"{plan.task}: {check_line(applied)}")
        if applied.check.problem:
            reporting.check_warning(env, plan.task, applied.check.problem)
        for task, check in applied.checks.items():  # a batch's, one per run
            if check.problem:
                reporting.check_warning(env, task, check.problem)
    reporting.outputs(env, status="published", pr_url="\n".join(urls))
    return 0


def scripts_problem(plan: WritePlan, env: ActionEnv) -> str | None:
    """A batch commits each run's script at its spec's `output:` and nowhere else: the spec
    is read at the commit the plan goes on top of (the pull request's head, or the base
    branch's), not taken from the plan."""
    if not plan.runs or plan.commit is None:
        return None
    ref = plan.commit.expected_head or plan.commit.base_branch
    for run in plan.runs:
        if run.script is None:
            continue
        text = env.forge.read_file(run.task, ref)
        try:
            output = str(load_spec_text(text, run.task, check_files=False).spec.output) \
                if text is not None else None
        except SpecError:
            output = None
        if output != run.script:
            return (f"it commits {run.script} for {run.task}, whose output at {ref[:12]} is "
                    f"{output or 'not a spec this version reads'}")
    return None


def _approved(path: Path, plan: WritePlan, trigger: Trigger, env: ActionEnv) -> WritePlan:
    comment = plan.comment
    if comment is None:
        return plan
    if APPROVAL_PREFIX in comment.body:
        raise UsageError(f"{path}: the planned comment carries an approval marker, which only "
                         "the publishing job writes",
                         hint="apply only plans made by `mode: plan` of this version; a plan "
                         "that approves an issue text itself was not")
    # A labelled issue's run: the approval is of the issue text in this job's own event,
    # given by the labeler, whose access this job checks again.
    if (not isinstance(trigger, IssueLabeled) or comment.number != trigger.number
            or plan.status == "none"):
        return plan
    decision = may_trigger(env.forge.permission(trigger.actor))
    if not decision.allowed:
        return plan
    body = with_approval(comment.body, comment.marker, body_digest(trigger.body))
    return evolve(plan, {"comment": evolve(comment, {"body": body})})
