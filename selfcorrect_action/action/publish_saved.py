"""mode publish: applying the write plans a read-only `mode: plan` job saved, and nothing
else: a plan may only write to what this job's own event is about (its issue or pull
request, and the branch selfcorrect uses for it), whoever made the file."""

from __future__ import annotations

from selfcorrect_action.action import reporting
from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.plan_store import load_plans
from selfcorrect_action.action.publish_targets import publish_targets
from selfcorrect_action.errors import UsageError
from selfcorrect_action.github.apply import apply_plan
from selfcorrect_action.github.events import Trigger


def publish_saved(env: ActionEnv, trigger: Trigger) -> int:
    """mode publish: apply what a `mode: plan` job saved, and nothing else: a plan may
    only write to what this job's own event is about (its issue or pull request, and the
    branch selfcorrect uses for it), whoever made the file."""
    folder = env.context.workspace / env.inputs.plan_dir
    urls = []
    targets = publish_targets(trigger, env)
    for path, plan in load_plans(folder):
        if plan.repository.lower() != env.context.repository.lower():
            raise UsageError(f"{path}: the plan was made for {plan.repository}, this job runs "
                             f"in {env.context.repository}",
                             hint="apply a plan in the repository whose run made it")
        if problem := targets.problem_with(plan):
            raise UsageError(f"{path}: {problem}", hint="apply only plans that `mode: plan` "
                             "made for this workflow run's own event")
        applied = apply_plan(plan, env.forge)
        if applied.pull_request is not None:
            urls.append(applied.pull_request.html_url)
        env.say("publish", f"{plan.task}: " + (applied.held_back or (
            applied.pull_request.html_url if applied.pull_request else "no pull request")))
    reporting.outputs(env, status="published", pr_url="\n".join(urls))
    return 0
