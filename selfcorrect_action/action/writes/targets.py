"""What a plan applied in `mode: publish` may write to, from the publishing job's own event:
the issue or pull request the event is about and the branch selfcorrect uses for it (a
dispatch: task branches, no comments). A check run goes on that branch too: on the commit
the plan pushes there, or the head of its open pull request (action/writes/apply.py), never on a
commit the plan names. The plan file came from another job; it is data to check, not a list
of orders."""

from __future__ import annotations

from dataclasses import dataclass

from selfcorrect_action.action.env import ActionEnv
from selfcorrect_action.action.writes.plan import WritePlan
from selfcorrect_action.github.events import (
    Dispatch,
    FixComment,
    IssueLabeled,
    RegenerateComment,
    RetryComment,
    Scheduled,
    Trigger,
)
from selfcorrect_action.github.naming import BRANCH_PREFIX, UPDATE_BRANCH, issue_branch


@dataclass(frozen=True)
class Targets:
    numbers: frozenset[int] = frozenset()
    branches: frozenset[str] = frozenset()
    branch_prefix: str | None = None  # dispatch: any task branch
    reason: str = ""  # why nothing may be written, when the event allows nothing

    def problem_with(self, plan: WritePlan) -> str | None:
        if self.reason:
            return self.reason
        numbers = {item.number for item in (plan.comment, plan.labels) if item is not None}
        if not numbers <= self.numbers:
            return (f"it writes to #{', #'.join(map(str, sorted(numbers - self.numbers)))}, "
                    f"not to what this event is about ({self._about()})")
        if plan.commit is not None and not self._allows(plan.commit.branch):
            return f"it commits to {plan.commit.branch}, which is not this event's branch"
        for check in [*([plan.check_run] if plan.check_run else []), *plan.check_runs]:
            if not self._allows(check.branch):
                return (f"it writes a check run for {check.branch}, which is not this "
                        "event's branch")
        return None

    def _allows(self, branch: str) -> bool:
        return branch in self.branches or (
            self.branch_prefix is not None and branch.startswith(self.branch_prefix))

    def _about(self) -> str:
        return ", ".join(f"#{n}" for n in sorted(self.numbers)) or "no issue"


def _own_branch(number: int, env: ActionEnv) -> frozenset[str]:
    """The pull request's head branch, when it is its own: of this repository, and neither
    the default branch nor a protected one (as the run job checked, again here)."""
    pull = env.forge.pull_request(number)
    if pull.head_repository.lower() != env.context.repository.lower():
        return frozenset()
    if (pull.head_branch == env.forge.default_branch()
            or env.forge.branch_protected(pull.head_branch)):
        return frozenset()
    return frozenset({pull.head_branch})


def publish_targets(trigger: Trigger, env: ActionEnv) -> Targets:
    if isinstance(trigger, IssueLabeled):
        return Targets(frozenset({trigger.number}), frozenset({issue_branch(trigger.number)}))
    if isinstance(trigger, FixComment | RegenerateComment):
        return Targets(frozenset({trigger.number}), _own_branch(trigger.number, env))
    if isinstance(trigger, RetryComment):
        if not trigger.on_pull_request:
            return Targets(frozenset({trigger.number}),
                           frozenset({issue_branch(trigger.number)}))
        return Targets(frozenset({trigger.number}), _own_branch(trigger.number, env))
    if isinstance(trigger, Scheduled) or (isinstance(trigger, Dispatch)
                                           and env.inputs.update is not None):
        return Targets(branches=frozenset({UPDATE_BRANCH}))  # the scheduled update's one
    if isinstance(trigger, Dispatch):
        return Targets(branch_prefix=f"{BRANCH_PREFIX}task-")
    return Targets(reason=f"this job's event ({env.context.event_name}) is not one a plan "
                   "is published for")
