"""Running one task as the action: the same run as `selfcorrect run` (runs/), with the
live comment as its view, the reports written into the workspace, and every GitHub write
planned, then applied (mode run) or saved for a later job (mode plan)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.action.context import ActionContext
from selfcorrect_action.action.inputs import ActionInputs
from selfcorrect_action.action.live import LiveComment
from selfcorrect_action.action.plan_builder import build_plan
from selfcorrect_action.action.plan_store import save_plan
from selfcorrect_action.action.task import Task
from selfcorrect_action.github.apply import Applied, apply_plan
from selfcorrect_action.github.forge import Forge, ForgeError
from selfcorrect_action.github.naming import (
    LABEL_RUNNING,
    STATUS_LABELS,
    approval_marker,
    report_marker,
)
from selfcorrect_action.github.plan import RUNS_DIR, WritePlan
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.records import evolve
from selfcorrect_action.report.audit import audit_markdown, summary_markdown
from selfcorrect_action.report.run_json import run_json
from selfcorrect_action.report.writer import write_atomically
from selfcorrect_action.runs.outcome import exit_code
from selfcorrect_action.runs.prepare import (
    check_models,
    check_replay_fits,
    initial_state,
    resolve_models,
)
from selfcorrect_action.runs.session import RunEvents, RunSession
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import Budget, LoadedSpec

log = logging.getLogger(__name__)
Say = Callable[[str, str], None]


@dataclass(frozen=True)
class TaskOutcome:
    task: Task
    state: RunState
    plan: WritePlan
    applied: Applied | None
    audit_path: Path
    exit_code: int

    @property
    def pr_url(self) -> str:
        pull = self.applied.pull_request if self.applied else None
        return pull.html_url if pull else ""


def run_task(task: Task, *, context: ActionContext, inputs: ActionInputs, forge: Forge,
             environ: Mapping[str, str], secrets: Sequence[str], say: Say) -> TaskOutcome:
    settings = _settings(task, inputs, environ)
    loaded = _with_budget_caps(task.loaded, inputs)
    models = _models(loaded, settings, inputs, environ)
    check_models(models, settings)
    if settings.replay is not None:
        check_replay_fits(settings.replay, loaded.spec.prompt, secrets=secrets)
    live = _live_comment(task, context, forge, secrets)
    # mode plan runs with a read-only token: the comment is only planned, never posted live.
    posting = live if live is not None and inputs.mode != "plan" else None
    if posting is not None:
        posting.start()
        _set_running(forge, task)

    def on_event(step: str, message: str) -> None:
        say(step, message)
        if posting is not None:
            posting.on_event(step, message)

    events = RunEvents(on_event=on_event,
                       on_state=posting.on_state if posting else _no_state)
    with RunSession(loaded, models, settings, environ=environ, secrets=secrets,
                    events=events) as session:
        state = session.run(_started(task, context, loaded, models, settings))
    audit_md, run_data = audit_markdown(state, secrets=secrets), run_json(state, secrets=secrets)
    audit_path = _write_reports(context.workspace, state.run_id, audit_md, run_data)
    plan = build_plan(
        task, state, repository=context.repository,
        base_branch=inputs.base_branch or task.base_branch or forge.default_branch(),
        audit_md=audit_md,
        run_json=run_data, summary_md=summary_markdown(state, secrets=secrets),
        server_url=context.server_url,
        comment_body=live.final_body(state) if live else None,
        comment_marker=live.marker if live else None, draft_on_failure=inputs.draft_on_failure,
        secrets=secrets)
    applied = _publish(plan, inputs, context, forge, state, say)
    code = exit_code(state)
    if applied is not None and applied.held_back and code == 0:
        code = 1  # passed, but not published: a person's commit is in the way
    return TaskOutcome(task, state, plan, applied, audit_path, code)


def _started(task: Task, context: ActionContext, loaded: LoadedSpec, models: ModelTiers,
             settings: RunSettings) -> RunState:
    state = initial_state(loaded, models, settings)
    if task.replay is None:
        return state
    # Reports (comments, the PR) name the recording by its path in the repository, not by
    # where the runner happened to check it out.
    try:
        shown = task.replay.relative_to(context.workspace).as_posix()
    except ValueError:
        shown = task.replay.name
    return evolve(state, {"replay_file": shown})


def _publish(plan: WritePlan, inputs: ActionInputs, context: ActionContext, forge: Forge,
             state: RunState, say: Say) -> Applied | None:
    if inputs.mode == "plan":
        path = save_plan(plan, context.workspace / inputs.plan_dir)
        say("publish", f"write plan saved to {path} (mode: plan; a later job applies it)")
        return None
    applied = apply_plan(plan, forge)
    if applied.held_back:
        say("publish", applied.held_back)
    elif applied.pull_request is not None:
        say("publish", f"pull request: {applied.pull_request.html_url}")
    elif state.status is not Status.PASSED:
        say("publish", "no pull request: the run did not pass (draft-on-failure is off)")
    return applied


def _settings(task: Task, inputs: ActionInputs, environ: Mapping[str, str]) -> RunSettings:
    return RunSettings(
        model=inputs.model, api_base=inputs.api_base, replay=task.replay,
        runtime=inputs.sandbox_runtime, guidance=task.guidance,
        llm_timeout_s=inputs.llm_timeout_s or RunSettings().llm_timeout_s,
        llm_retries=inputs.llm_retries if inputs.llm_retries is not None
        else RunSettings().llm_retries,
        sandbox_image=inputs.sandbox_image,
        structured_output=inputs.structured_output,
        fallback_model=environ.get("SELFCORRECT_MODEL") or None,
    )


def _models(loaded: LoadedSpec, settings: RunSettings, inputs: ActionInputs,
            environ: Mapping[str, str]) -> ModelTiers:
    tiers = resolve_models(loaded, settings, environ)
    return ModelTiers(cheap=tiers.cheap, strong=inputs.strong_model or tiers.strong,
                      judge=inputs.judge_model or tiers.judge)


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


def _live_comment(task: Task, context: ActionContext, forge: Forge,
                  secrets: Sequence[str]) -> LiveComment | None:
    if task.comment_on is None:
        return None
    marker = report_marker(f"run={context.run_key} task={task.branch}")
    return LiveComment(forge, task.comment_on, marker, task=task.label,
                       run_url=context.run_url, guidance=task.guidance, secrets=secrets,
                       approval=approval_marker(task.approval) if task.approval else "")


def _set_running(forge: Forge, task: Task) -> None:
    assert task.comment_on is not None
    try:
        color, description = STATUS_LABELS[LABEL_RUNNING]
        forge.ensure_label(LABEL_RUNNING, color=color, description=description)
        forge.add_labels(task.comment_on, [LABEL_RUNNING])
    except ForgeError as exc:  # a label is a courtesy: the run goes on without it
        log.warning("could not label #%s as running: %s", task.comment_on, exc.message)


def _write_reports(workspace: Path, run_id: str, audit_md: str, run_data: str) -> Path:
    """Into the workspace too, at the path the commit uses: a later step can upload them."""
    folder = workspace / RUNS_DIR / run_id
    folder.mkdir(parents=True, exist_ok=True)
    write_atomically(folder / "AUDIT.md", audit_md)
    write_atomically(folder / "run.json", run_data)
    return folder / "AUDIT.md"


def _no_state(state: RunState) -> None:
    return None
