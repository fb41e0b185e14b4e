"""The one path a run takes, whatever started it: a prepared task, a session (model client,
engine, sandbox), the loop, the reports, then the front end's own publishing, and how it
ended. `selfcorrect run`, the action and the benchmark's model mode are views on it: they
choose the settings' source, what to show while it runs and where the result goes.

The order is the guarantee: the reports are written, and the run recorded in the history
(history/), before anything is published, always, even when the run was interrupted (they
hold what was spent); an interrupted run is never published, and its interruption is
raised to the caller once the reports are safe, so every front end exits 130 or 143 the
same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from selfcorrect_action.errors import Interrupted, interruption
from selfcorrect_action.history.artifacts import KeptArtifact, keep_artifacts
from selfcorrect_action.history.entry import SOURCE_RUN
from selfcorrect_action.history.record import record_run
from selfcorrect_action.history.store import HistoryError
from selfcorrect_action.llm.base import LLM
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.llm.server_probe import ServerInfo
from selfcorrect_action.loop.deps import Executor
from selfcorrect_action.loop.state import RunState
from selfcorrect_action.records import evolve
from selfcorrect_action.repair.repository import Snapshot
from selfcorrect_action.report.writer import ReportPaths, Reports, render_reports, write_rendered
from selfcorrect_action.runs import resume
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.orchestration import check_orchestrator
from selfcorrect_action.runs.outcome import exit_code
from selfcorrect_action.runs.prepare import (
    check_models,
    check_replay_fits,
    initial_state,
    resolve_models,
)
from selfcorrect_action.runs.published import (
    RecordTarget,
    VerifiedScript,
    publishes,
    verify_published,
)
from selfcorrect_action.runs.repair_prepare import repair_inputs
from selfcorrect_action.runs.resume import Keeping
from selfcorrect_action.runs.session import (
    RunEvents,
    RunSession,
    first_preload,
    spec_inputs,
    spec_limits,
)
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox.egress.policy import require_credentials, secret_values
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.models import InputFile, Limits
from selfcorrect_action.spec import LoadedSpec
from selfcorrect_action.tracking.session import tracking

P = TypeVar("P")


@dataclass(frozen=True)
class PreparedRun:
    """A run checked and ready, nothing spent yet: its first state (the task, the models,
    the budget) and what its sandbox needs."""

    state: RunState
    settings: RunSettings
    limits: Limits
    inputs: tuple[InputFile, ...] = ()
    loaded: LoadedSpec | None = None  # None for tasks that are not spec files (a benchmark)
    priced: bool = True  # False: calls stay unpriced (a replay whose tiers name no model)
    # kind repair: the repository as read once, and the requirements' text (derived image)
    repository: Snapshot | None = None
    requirements: str | None = None
    # Where the run keeps its checkpoint and recording (None: nowhere, it cannot be
    # resumed), and a resumed run's earlier recording (runs/resume.py).
    keeping: Keeping | None = None

    @property
    def models(self) -> ModelTiers:
        return self.state.models


def prepare(loaded: LoadedSpec, settings: RunSettings, *, environ: Mapping[str, str],
            secrets: Sequence[str], replay_shown: str | None = None) -> PreparedRun:
    """Everything that can refuse a spec's run before a token is spent: the models, their
    names, a replay made for another task. `replay_shown` is how reports name the replay
    (the action names it by its path in the repository)."""
    require_credentials(loaded.spec.contract.network, environ)
    models = resolve_models(loaded, settings, environ)
    check_models(models, settings)
    check_orchestrator(settings)
    if settings.mlflow is not None:
        from selfcorrect_action.tracking import require_mlflow

        require_mlflow("--mlflow (or MLFLOW_TRACKING_URI)")
    if settings.replay is not None:
        check_replay_fits(settings.replay, loaded.spec.prompt, secrets=secrets)
    repair = repair_inputs(loaded) if loaded.spec.kind == "repair" else None
    fresh = initial_state(loaded, models, settings, repair=repair.record if repair else None)
    if replay_shown is not None:
        fresh = evolve(fresh, {"replay_file": replay_shown})
    # With --resume, the earlier run's state and recording, checked against the spec now.
    started = resume.start(fresh, settings, secrets=secrets)
    if repair is not None:
        return PreparedRun(state=started.state, settings=settings, limits=repair.limits,
                           loaded=loaded, repository=repair.repository,
                           requirements=repair.requirements, keeping=started.keeping)
    return PreparedRun(state=started.state, settings=settings, limits=spec_limits(loaded),
                       inputs=tuple(spec_inputs(loaded)), loaded=loaded,
                       keeping=started.keeping)


@dataclass(frozen=True)
class Connections:
    """What a caller hands in instead of letting the run open its own (see RunSession)."""

    llm: LLM | None = None
    engine: Engine | None = None
    sandbox: Executor | None = None
    # What answered at --api-base, when the caller made the llm itself and asked
    # (runs/session.py:detected); the run's profile and generation follow from it.
    server: ServerInfo | None = None
    # Filled with how the run asks for code once it decided (profile, generation): the
    # caller's recorder writes it into the recording's header (runs/session.py).
    fit_note: dict[str, str] | None = None


@dataclass(frozen=True)
class Finished:
    """A run that ended, its reports written, as the front end's publisher sees it; the
    attempts' files are under work_root only while the publisher runs."""

    prepared: PreparedRun
    state: RunState
    reports: Reports
    report_paths: ReportPaths | None
    work_root: Path
    artifacts: tuple[KeptArtifact, ...] = ()  # what the history keeps of the attempts' files
    # The script with its header and its record, for a run asked to publish into a
    # repository (`record` of run()) whose final check passed (runs/published.py).
    verified: VerifiedScript | None = None


@dataclass(frozen=True)
class RunOutcome(Generic[P]):
    state: RunState
    reports: Reports
    report_paths: ReportPaths | None
    published: P | None  # None when there was no publisher, or the run was interrupted
    exit_code: int
    interruption: Interrupted | None = field(default=None)
    artifacts: tuple[KeptArtifact, ...] = ()  # the pictures and tables the viewer shows
    history: Path | None = None  # the history folder the run was recorded in, if it was

    def raise_if_interrupted(self) -> None:
        if self.interruption is not None:
            raise self.interruption


def run(prepared: PreparedRun, *, environ: Mapping[str, str], secrets: Sequence[str],
        events: RunEvents | None = None, cancel: CancelToken | None = None,
        reports_dir: Path | None = None,
        publish: Callable[[Finished], P] | None = None,
        connections: Connections | None = None,
        tags: Mapping[str, str] | None = None,
        record: RecordTarget | None = None) -> RunOutcome[P]:
    """Run `prepared` to its end. The caller shows the outcome, then calls
    `raise_if_interrupted()` (or acts on `interruption` itself). `tags` name what the run
    is part of in its experiment tracker (a benchmark's problem). `record`: the front end
    publishes a passing script into a repository, with its header and its record: the
    script is checked once more so before the reports (runs/published.py)."""
    cancel = cancel or CancelToken()
    given = connections or Connections()
    # The contract's credentials are redacted in every report, whatever their variables' names
    # (the proxy adds them outside the sandbox, but an API may echo one back).
    secrets = [*secrets, *secret_values(prepared.state.contract.network, environ)]
    events = events or RunEvents()
    settings = prepared.settings
    with tracking(settings.mlflow, prepared.state, events.on_event, tags,
                  experiment=settings.mlflow_experiment,
                  traces=settings.mlflow_traces) as tracked, \
            RunSession(prepared.models, prepared.settings, limits=prepared.limits,
                       inputs=prepared.inputs, environ=environ, secrets=secrets,
                       events=events, cancel=cancel, llm=given.llm, engine=given.engine,
                       sandbox=given.sandbox, priced=prepared.priced,
                       server=given.server, task_prompt=prepared.state.spec.prompt,
                       fit_note=given.fit_note,
                       replay_from=prepared.state.usage.llm_calls,
                       traced=lambda llm: tracked.traced(llm, prepared.state.run_id),
                       repository=prepared.repository,
                       requirements=prepared.requirements,
                       preload_guess=first_preload(prepared.state.spec),
                       keeping=prepared.keeping) as session:
        state = session.run(prepared.state)
        state, verified = _after_loop(state, prepared, session, record, cancel)
        with cancel.shielded():  # a signal now stops the run after its reports, not in them
            reports = render_reports(state, secrets=secrets)
            paths = write_rendered(reports, reports_dir) if reports_dir is not None else None
            kept = keep_artifacts(state, secrets=secrets)
            history = _record(prepared.settings, state, reports, kept, reports_dir,
                              session.events)
            tracked.finish(state, reports, kept)
        interruption = _interruption(state, cancel)
        published = None
        if publish is not None and interruption is None:
            published = publish(Finished(prepared, state, reports, paths, session.work_root,
                                         kept, verified))
    code = interruption.exit_code if interruption is not None else exit_code(state)
    return RunOutcome(state, reports, paths, published, code, interruption, kept, history)


def _after_loop(state: RunState, prepared: PreparedRun, session: RunSession,
                target: RecordTarget | None, cancel: CancelToken
                ) -> tuple[RunState, VerifiedScript | None]:
    """The image the run ran in (its packages listed for a run that publishes), and a
    script published into a repository checked once more with its header; neither after
    a cancel. A cancel or a signal meanwhile leaves the token set: the reports are
    written, and nothing is published."""
    loaded = prepared.loaded
    publishing = target is not None and loaded is not None and publishes(state, loaded)
    try:
        cancel.check()
        state = evolve(state, {"image": session.image_identity(list_packages=publishing)})
        if target is None or loaded is None or not publishing:
            return state, None
        return verify_published(state, loaded, target, sandbox=session.deps.sandbox,
                                work_root=session.work_root,
                                on_event=session.events.on_event)
    except Interrupted:
        return state, None


def _record(settings: RunSettings, state: RunState, reports: Reports,
            kept: tuple[KeptArtifact, ...], reports_dir: Path | None,
            events: RunEvents) -> Path | None:
    """Into the run history, when one is kept; the folder it went to. A history that cannot
    be written costs the run nothing: its reports are on disk, and the event says why it
    is not listed."""
    folder = settings.history_dir
    if folder is None:
        return None
    try:
        record_run(folder, state, run_json=reports.run_json, artifacts=kept,
                   source=SOURCE_RUN,
                   location=str(reports_dir.resolve()) if reports_dir is not None else "")
    except HistoryError as exc:
        events.on_event("history", f"this run is not in the history: {exc}")
        return None
    return folder


def _interruption(state: RunState, cancel: CancelToken) -> Interrupted | None:
    """The loop records a signal that reached it; a cancel that came while the reports
    were written (the loop had ended) stops the publishing all the same."""
    if state.interrupted_by:
        return interruption(state.interrupted_by)
    return cancel.interruption
