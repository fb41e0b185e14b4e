"""The one door every write of the action to GitHub goes through (issue 35).

Comments, labels, check runs and a finished run's plan (commit, branch, pull request, its
check run, the final comment and labels) are all asked of a `Door`. Which door a job gets is
decided once, where the job starts (`open_door`, called by commands/action_cmd.py): in
`mode: run` the writes are applied at once (`ApplyNow`), in `mode: plan` they are recorded
as write plans for a later `mode: publish` job (`RecordPlan`), whose token may write. No
caller asks which mode it runs in.

The split recipe's rules hold whatever the door (docs/action.md): a plan never carries an
approval, the live comment is never planned, labels other than the status labels are never
planned, and `mode: publish` applies only what its own event allows (publish.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from selfcorrect_action import __version__
from selfcorrect_action.action.writes.apply import Applied, apply_plan
from selfcorrect_action.action.writes.checkpoints import (
    CheckpointSlot,
    NoCheckpoints,
    RefCheckpoints,
)
from selfcorrect_action.action.writes.live import LiveComment
from selfcorrect_action.action.writes.plan import PlannedComment, WritePlan, status_labels
from selfcorrect_action.action.writes.store import save_plan
from selfcorrect_action.github.check_runs import CheckResult, guarded, write_check_run
from selfcorrect_action.github.forge import CheckRunOutput, Forge, ForgeError
from selfcorrect_action.github.naming import LABEL_FAILED, STATUS_LABELS

log = logging.getLogger(__name__)
Warn = Callable[[str], None]


class Door(Protocol):
    """Every write the action makes; what each one leaves behind when it cannot be made is
    said in the job log, never the end of a run (a comment or a label is a report of what
    the run did, not the run)."""

    def comment(self, number: int, marker: str, body: str, *, failed_label: bool = False,
                create: bool = True, plannable: bool = True, why: str = "",
                then: str = "") -> None:
        """One comment of ours on #number, found again by `marker` and edited; made only
        when `create` (else only an existing one is edited). `failed_label`: the issue is
        labelled failed too. `plannable`: False for a comment no publishing job applies
        (the validate comment of a pull request event), which a plan leaves out. `why` and
        `then`: what the warning says before and after GitHub's answer when it cannot be
        written."""
        ...

    def labels(self, number: int, *, add: Sequence[str] = (),
               remove: Sequence[str] = ()) -> None:
        """A courtesy: status labels (made in the repository if missing) added, any label
        removed."""
        ...

    def check_run(self, head_sha: str, output: CheckRunOutput) -> CheckResult:
        """A completed check run on a commit the event names (the validate check)."""
        ...

    def live_comment(self, number: int, marker: str, *, task: str, run_url: str,
                     guidance: str, secrets: Sequence[str], approval: str) -> LiveComment:
        """The live attempt report. Never planned: where it cannot be posted as the run
        goes, it only renders the final comment, which the plan carries."""
        ...

    def publish(self, plan: WritePlan) -> Applied | None:
        """A finished run's writes: applied (what became of them) or recorded (None)."""
        ...

    def checkpoints(self, key: str, *, start_from: str | None = None) -> CheckpointSlot:
        """Where a run's checkpoint is kept as it goes (action/writes/checkpoints.py):
        `refs/selfcorrect/checkpoints/<key>`; nowhere in a plan (a read-only token).
        `start_from`: the checkpoint commit a resumed run was downloaded from."""
        ...

    def outputs(self) -> dict[str, str]:
        """What the step's outputs say of this door's writes (`has-plan`)."""
        ...

    @property
    def approves(self) -> bool:
        """Whether a comment may carry an approval (the digest of the issue text a person
        with write access labelled): never in a plan, which only the publishing job may
        give one (publish.py)."""
        ...


class ApplyNow:
    """`mode: run`: each write goes to GitHub as it is asked."""

    approves = True

    def __init__(self, forge: Forge, *, warn: Warn) -> None:
        self.forge = forge
        self._warn = warn

    def comment(self, number: int, marker: str, body: str, *, failed_label: bool = False,
                create: bool = True, plannable: bool = True, why: str = "",
                then: str = "") -> None:
        try:
            existing = self.forge.find_comment(number, marker)
            if existing is not None:
                self.forge.edit_comment(existing.id, body)
            elif create:
                self.forge.create_comment(number, body)
            if failed_label:
                labels = status_labels(number, passed=False)
                self._ensure(LABEL_FAILED)
                self.forge.add_labels(number, labels.add)
                for name in labels.remove:
                    self.forge.remove_label(number, name)
        except ForgeError as exc:
            self._warn(f"could not comment on #{number}{why}: {exc.message}{then}")

    def labels(self, number: int, *, add: Sequence[str] = (),
               remove: Sequence[str] = ()) -> None:
        try:
            for name in add:
                self._ensure(name)
            if add:
                self.forge.add_labels(number, list(add))
            for name in remove:
                self.forge.remove_label(number, name)
        except ForgeError as exc:  # a label is a courtesy: the run goes on without it
            log.warning("could not label #%s: %s", number, exc.message)

    def check_run(self, head_sha: str, output: CheckRunOutput) -> CheckResult:
        return guarded(lambda: CheckResult(write_check_run(self.forge, head_sha, output)))

    def live_comment(self, number: int, marker: str, *, task: str, run_url: str,
                     guidance: str, secrets: Sequence[str], approval: str) -> LiveComment:
        return LiveComment(self.forge, number, marker, task=task, run_url=run_url,
                           guidance=guidance, secrets=secrets, approval=approval)

    def publish(self, plan: WritePlan) -> Applied | None:
        return apply_plan(plan, self.forge)

    def checkpoints(self, key: str, *, start_from: str | None = None) -> CheckpointSlot:
        return RefCheckpoints(self.forge, key, start_from=start_from, warn=self._warn,
                              version=__version__)

    def outputs(self) -> dict[str, str]:
        return {}

    def _ensure(self, name: str) -> None:
        if name in STATUS_LABELS:
            color, description = STATUS_LABELS[name]
            self.forge.ensure_label(name, color=color, description=description)


class RecordPlan:
    """`mode: plan`: the job's token is read-only, so nothing is written; each write that a
    later job may make is saved as a write plan in `folder`."""

    approves = False

    def __init__(self, folder: Path, repository: str, *, say: Callable[[str, str], None]
                 ) -> None:
        self.folder = folder
        self.repository = repository
        self._say = say

    def comment(self, number: int, marker: str, body: str, *, failed_label: bool = False,
                create: bool = True, plannable: bool = True, why: str = "",
                then: str = "") -> None:
        if not plannable:
            # No publishing job applies it (publish.py refuses a pull request event's plan):
            # said in the log, the problems are the job's annotations.
            self._say("plan", f"the comment on #{number} is not written: mode plan writes "
                      "nothing, and no publishing job applies it")
            return
        if not create:
            # Only an edit of a comment an earlier job wrote: nothing new to say.
            return
        save_plan(WritePlan(
            repository=self.repository, task=f"#{number} {marker}", status="none",
            comment=PlannedComment(number=number, marker=marker, body=body),
            labels=status_labels(number, passed=False) if failed_label else None),
            self.folder)

    def labels(self, number: int, *, add: Sequence[str] = (),
               remove: Sequence[str] = ()) -> None:
        # The running label, the trigger label taken off a refused run: a read-only job
        # cannot, and a plan only sets the final status labels (with its comment).
        log.info("labels of #%s not changed: mode plan writes none but a plan's own", number)

    def check_run(self, head_sha: str, output: CheckRunOutput) -> CheckResult:
        return CheckResult(note=f"no check run on {head_sha[:7]}: mode plan writes nothing, "
                           "and a plan's check run goes only on the branch it commits to")

    def live_comment(self, number: int, marker: str, *, task: str, run_url: str,
                     guidance: str, secrets: Sequence[str], approval: str) -> LiveComment:
        # The read-only job cannot post it (forge None): it renders the final text, which
        # the plan carries, and never an approval.
        return LiveComment(None, number, marker, task=task, run_url=run_url,
                           guidance=guidance, secrets=secrets, approval="")

    def publish(self, plan: WritePlan) -> Applied | None:
        path = save_plan(plan, self.folder)
        self._say("publish", f"write plan saved to {path} (mode: plan; a later job applies it)")
        return None

    def checkpoints(self, key: str, *, start_from: str | None = None) -> CheckpointSlot:
        return NoCheckpoints(lambda message: self._say("checkpoint", message))

    def outputs(self) -> dict[str, str]:
        return {"has_plan": "true" if any(self.folder.glob("*.json")) else "false"}


def open_door(mode: str, forge: Forge, *, plan_dir: Path, repository: str, warn: Warn,
              say: Callable[[str, str], None]) -> Door:
    """The door of this job: the only place its mode decides how the action writes. `run`
    and `publish` write (publish applies what a plan job saved), `plan` records."""
    if mode == "plan":
        return RecordPlan(plan_dir, repository, say=say)
    return ApplyNow(forge, warn=warn)


def applies_saved_plans(mode: str) -> bool:
    """`mode: publish`: the job applies the plans a `mode: plan` job saved (publish.py)
    instead of handling its event."""
    return mode == "publish"
