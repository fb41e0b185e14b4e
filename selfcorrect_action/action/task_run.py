"""Running one task as the action: the same run as `selfcorrect run` (runs/), with the
live comment as its view, the reports written into the workspace, and every GitHub write
planned, then applied (mode run) or saved for a later job (mode plan)."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from selfcorrect_action.action.checkpoints import CheckpointKeeper
from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.task import Task
from selfcorrect_action.action.writes.apply import Applied
from selfcorrect_action.action.writes.batch import Member
from selfcorrect_action.action.writes.build import build_plan
from selfcorrect_action.action.writes.door import Door
from selfcorrect_action.action.writes.live import LiveComment
from selfcorrect_action.action.writes.plan import WritePlan
from selfcorrect_action.fileio import write_atomically
from selfcorrect_action.github.forge import Forge
from selfcorrect_action.github.naming import (
    BRANCH_PREFIX,
    LABEL_RUNNING,
    approval_marker,
    report_marker,
)
from selfcorrect_action.history.artifacts import KeptArtifact
from selfcorrect_action.loop.given import starting_from
from selfcorrect_action.loop.state import Origin, RunState, Status
from selfcorrect_action.records import evolve
from selfcorrect_action.report.run_json import RUN_JSON, RUNS_DIR
from selfcorrect_action.runs import pipeline
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.pipeline import Connections, Finished
from selfcorrect_action.runs.published import RecordTarget
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import (
    ENV_MLFLOW,
    ENV_MLFLOW_EXPERIMENT,
    ENV_MLFLOW_TRACES,
    SETTING,
    Given,
    Resolved,
    RunSettings,
    described,
    resolve,
)
from selfcorrect_action.spec import Budget, LoadedSpec
from selfcorrect_action.viewer.page import render_page

log = logging.getLogger(__name__)
Say = Callable[[str, str], None]
Collect = Callable[[Member], None]


@dataclass(frozen=True)
class TaskOutcome:
    task: Task
    state: RunState
    plan: WritePlan | None  # None: one run of a batch, published with the others
    applied: Applied | None
    audit_path: Path
    exit_code: int
    viewer_path: Path | None = None

    @property
    def pr_url(self) -> str:
        pull = self.applied.pull_request if self.applied else None
        return pull.html_url if pull else ""


def run_task(task: Task, *, context: ActionContext, inputs: ActionInputs, forge: Forge,
             door: Door, environ: Mapping[str, str], secrets: Sequence[str], say: Say,
             cancel: CancelToken | None = None,
             connections: Connections | None = None,
             collect: Collect | None = None) -> TaskOutcome:
    """`collect`: the run is one of a batch (action/writes/batch.py): its finished reports
    go there, and the batch publishes them all at once; nothing is published here."""
    with _checkpoint_root(task) as root:
        return _run_task(task, context=context, inputs=inputs, forge=forge, door=door,
                         environ=environ, secrets=secrets, say=say, cancel=cancel,
                         connections=connections, collect=collect, checkpoint_root=root)


def _run_task(task: Task, *, context: ActionContext, inputs: ActionInputs, forge: Forge,
              door: Door, environ: Mapping[str, str], secrets: Sequence[str], say: Say,
              cancel: CancelToken | None, connections: Connections | None,
              collect: Collect | None, checkpoint_root: Path | None) -> TaskOutcome:
    resolved = resolve_task_settings(task, inputs, environ)
    settings = with_checkpoints(resolved.settings, task, checkpoint_root)
    if chosen := described(resolved):
        say("settings", chosen)
    prepared = pipeline.prepare(_with_budget_caps(task.loaded, inputs), settings,
                                environ=environ, secrets=secrets,
                                replay_shown=_replay_shown(task, context))
    prepared = replace(prepared, state=evolve(prepared.state, {"origin": origin(context)}))
    if task.given_code is not None:
        prepared = replace(prepared, state=starting_from(prepared.state, task.given_code))
    live = _live_comment(task, context, door, secrets)
    keeper = _keeper(task, context, door, checkpoint_root, say)
    if live is not None:
        live.set_notes(intro=task.notice)
        live.start()
        door.labels(live.number, add=[LABEL_RUNNING])

    def on_event(step: str, message: str) -> None:
        say(step, message)
        if live is not None:
            live.on_event(step, message)

    def on_state(state: RunState) -> None:
        if keeper is not None:  # first: the comment then says where the checkpoint is
            keeper.on_state(state)
        if live is not None:
            live.set_notes(checkpoint=keeper.comment_note() if keeper else "")
            live.on_state(state)

    def finish(state: RunState) -> None:
        if keeper is not None:
            keeper.finish(state)
            if live is not None:
                live.set_notes(checkpoint=keeper.comment_note())

    def publish(done: Finished) -> tuple[WritePlan | None, Applied | None]:
        finish(done.state)
        if collect is not None:
            collect(Member(task, done.state, done.reports.audit_md, done.reports.run_json,
                           done.verified))
            return None, None
        plan = build_plan(
            task, done.state, repository=context.repository,
            base_branch=inputs.base_branch or task.base_branch or forge.default_branch(),
            audit_md=done.reports.audit_md, run_json=done.reports.run_json,
            summary_md=done.reports.summary_md, server_url=context.server_url,
            comment_body=live.final_body(done.state) if live else None,
            comment_marker=live.marker if live else None,
            draft_on_failure=inputs.draft_on_failure, secrets=secrets,
            run_url=context.run_url, verified=done.verified)
        return plan, _publish(plan, door, done.state, say)

    events = RunEvents(on_event=on_event, on_state=on_state)
    # Into the workspace too, at the path the commit uses: a later step can upload them.
    reports_dir = context.workspace / RUNS_DIR / prepared.state.run_id
    outcome = pipeline.run(prepared, environ=environ, secrets=secrets, events=events,
                           cancel=cancel, reports_dir=reports_dir,
                           publish=publish, connections=connections,
                           record=record_target(task, prepared.state.run_id))
    viewer = write_viewer(reports_dir, task, outcome.state, outcome.artifacts, secrets, say)
    if outcome.interruption is not None:
        # Not published (a cancelled job's run is not a result), but its checkpoint is kept
        # and the comment says how it ended, and its reports are in the workspace.
        finish(outcome.state)
        if live is not None:
            live.cancelled(outcome.state)
            # Neither passed nor failed: no longer running.
            door.labels(live.number, remove=[LABEL_RUNNING])
        outcome.raise_if_interrupted()
    assert outcome.published is not None and outcome.report_paths is not None
    plan, applied = outcome.published
    code = outcome.exit_code
    if applied is not None and applied.held_back and code == 0:
        code = 1  # passed, but not published: a person's commit is in the way
    return TaskOutcome(task, outcome.state, plan, applied, outcome.report_paths.audit_md, code,
                       viewer)


@contextmanager
def _checkpoint_root(task: Task) -> Iterator[Path | None]:
    """Where the core keeps this task's checkpoint folder while it runs (issue 37); None
    for a task whose checkpoint is not kept."""
    if task.checkpoint_key is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="selfcorrect-checkpoint-") as root:
        yield Path(root)


def with_checkpoints(settings: RunSettings, task: Task, root: Path | None) -> RunSettings:
    """The run keeps its checkpoint in `root`, bound to the issue text approved (the core
    refuses to resume it for another); a resumed task goes on from its download."""
    resume = task.resume
    return settings.model_copy(update={
        "checkpoint_dir": root, "approval_sha256": task.approval,
        "resume": str(resume.folder) if resume else None,
        "more_attempts": resume.more_attempts if resume else 0,
        "more_tokens": resume.more_tokens if resume else 0,
        "more_usd": resume.more_usd if resume else 0.0})


def _keeper(task: Task, context: ActionContext, door: Door, root: Path | None,
            say: Say) -> CheckpointKeeper | None:
    key = task.checkpoint_key
    if key is None or root is None:
        return None
    slot = door.checkpoints(key, start_from=task.resume.sha if task.resume else None)
    return CheckpointKeeper(slot, root, key=key, label=task.label,
                            public=origin(context).visibility == "public", say=say)


def record_target(task: Task, run_id: str) -> RecordTarget | None:
    """How a script's header and record name its spec: its path in the repository, or
    `issue #12` for an issue's, whose spec is in no file the commit carries but in the
    committed run.json the record points at (issue 36). A repair has no record."""
    if task.loaded.spec.kind not in ("script", "function"):
        return None
    return RecordTarget(spec=task.label, run_record=f"{RUNS_DIR}/{run_id}/{RUN_JSON}")


def origin(context: ActionContext) -> Origin:
    """The repository as the event describes it. Where the payload does not say how
    visible it is, it counts as private: `view --site` then asks before publishing it."""
    repository = context.event.get("repository")
    described = repository if isinstance(repository, dict) else {}
    visibility = described.get("visibility")
    if visibility not in ("public", "private", "internal"):
        visibility = "public" if described.get("private") is False else "private"
    return Origin.model_validate({"repository": context.repository, "visibility": visibility})


def write_viewer(folder: Path, task: Task, state: RunState,
                 artifacts: Sequence[KeptArtifact], secrets: Sequence[str], say: Say
                 ) -> Path:
    """The run's page beside its reports: a Docker action cannot upload it, a later step
    can (the `viewer-path` output). Named for the task and the run, as an artifact
    uploaded alone is named after its file, and names must differ within a workflow run."""
    name = f"selfcorrect-{task.branch.removeprefix(BRANCH_PREFIX).replace('/', '-')}-" \
        f"{state.run_id}.html"
    path = folder / name
    write_atomically(path, render_page(state, artifacts, secrets=secrets))
    say("viewer", f"attempt viewer: {path}")
    return path


def _replay_shown(task: Task, context: ActionContext) -> str | None:
    """Reports (comments, the PR) name the recording by its path in the repository, not by
    where the runner happened to check it out."""
    if task.replay is None:
        return None
    try:
        return task.replay.relative_to(context.workspace).as_posix()
    except ValueError:
        return task.replay.name


def _publish(plan: WritePlan, door: Door, state: RunState, say: Say) -> Applied | None:
    applied = door.publish(plan)
    if applied is None:  # recorded for a later job
        return None
    if applied.held_back or applied.no_pull_request:
        say("publish", applied.held_back or applied.no_pull_request or "")
    elif applied.pull_request is not None:
        say("publish", f"pull request: {applied.pull_request.html_url}")
    elif state.status is not Status.PASSED:
        say("publish", "no pull request: the run did not pass (draft-on-failure is off)")
    say("publish", check_line(applied))
    return applied


def check_line(applied: Applied) -> str:
    """What became of the check run, for the job log."""
    check = applied.check
    if check.check is not None:
        return (f"check run {check.check.name!r}: {check.check.conclusion} on "
                f"{check.check.head_sha[:7]} {check.check.html_url}").rstrip()
    return check.problem or check.note or "no check run was planned"


def resolve_task_settings(task: Task, inputs: ActionInputs, environ: Mapping[str, str]
                          ) -> Resolved:
    """The action's inputs are its flags: each wins over its SELFCORRECT_* variable, as a
    flag does for the CLI (runs/settings.py holds the one table)."""
    given: dict[str, Given | None] = {
        "replay": Given(task.replay, "input replay") if task.replay else None,
        "guidance": Given(task.guidance, "the retry comment") if task.guidance else None,
    }
    given |= {name: Given(value, f"input {SETTING[name].action_input}")
              for name, value in inputs.run_settings().items() if value is not None}
    # The action has no MLflow tracking (its image leaves the mlflow extra out, and nothing
    # would keep the store): a job that sets MLFLOW_TRACKING_URI for its own steps must not
    # make the action refuse to run.
    return resolve({name: value for name, value in environ.items()
                    if name not in ACTION_IGNORES}, given)


ACTION_IGNORES = (ENV_MLFLOW, ENV_MLFLOW_EXPERIMENT, ENV_MLFLOW_TRACES)


def _with_budget_caps(loaded: LoadedSpec, inputs: ActionInputs) -> LoadedSpec:
    """The action's budget inputs are the repository's caps: a field the spec left out
    takes the input's value, one it wrote is held to it (the smaller wins), so an issue
    author cannot raise what a maintainer capped."""
    budget = loaded.spec.budget
    written = budget.model_fields_set
    caps = {"patch_attempts": inputs.patch_attempts, "rethink_attempts": inputs.rethink_attempts,
            "tokens": inputs.max_tokens, "cost_usd": inputs.max_cost_usd}
    changes: dict[str, object] = {}
    for name, cap in caps.items():
        if cap is None:
            continue
        current = getattr(budget, name)
        changes[name] = min(current, cap) if name in written and current is not None else cap
    if not changes:
        return loaded
    capped = Budget.model_validate({**budget.model_dump(exclude_unset=True), **changes})
    spec = evolve(loaded.spec, {"budget": capped})
    return LoadedSpec(spec, loaded.source, loaded.root, loaded.path, loaded.document)


def _live_comment(task: Task, context: ActionContext, door: Door,
                  secrets: Sequence[str]) -> LiveComment | None:
    if task.comment_on is None:
        return None
    marker = report_marker(f"run={context.run_key} task={task.branch}")
    # A plan carries no approval: the publishing job refuses one in a plan and writes it
    # itself (action/writes/publish.py), so a forged plan cannot approve a text.
    approval = approval_marker(task.approval) if task.approval and door.approves else ""
    return door.live_comment(task.comment_on, marker, task=task.label,
                             run_url=context.run_url, guidance=task.guidance,
                             secrets=secrets, approval=approval)
