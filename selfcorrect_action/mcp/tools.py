"""What each MCP tool does, without MCP: arguments in, the API's results or our errors out.
server.py is the thin layer that speaks the protocol (schemas, progress, cancellation).

Every path an argument names goes through paths.confined; the server's own settings (its
flags and SELFCORRECT_* variables, resolved once) apply to every run, and a `replay`
argument (a recording under the root) takes the place of the model for one run. Runs are
kept in `runs`, a folder of the history's (run_folder.py), never under the root.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action import api
from selfcorrect_action.api.exec import build_request, with_timeout
from selfcorrect_action.api.results import ValidationResult
from selfcorrect_action.contract import ExecutionContract
from selfcorrect_action.errors import UsageError
from selfcorrect_action.fileio import FileMissing
from selfcorrect_action.mcp import run_folder
from selfcorrect_action.mcp.jobs import Job, JobQueue
from selfcorrect_action.mcp.models import Audit, RunList, RunProgress, RunSummary
from selfcorrect_action.mcp.paths import confined
from selfcorrect_action.report.run_json import RUN_JSON
from selfcorrect_action.report.writer import AUDIT_MD
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox.models import InputFile
from selfcorrect_action.spec import Budget, LoadedSpec
from selfcorrect_action.writable_paths import writable_folder

PROGRESS_SHOWN = 50  # the latest progress lines get_run returns
SCRIPT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


# The API's no-model hint names its arguments; a client has a tool argument and the flags
# and variables its config starts the server with.
NO_MODEL_HINT = (
    "give the call a `replay` argument (a recording under the root, made with `selfcorrect "
    "run --record`), or start the server with a model: --model PROVIDER/MODEL in its args "
    "(or SELFCORRECT_MODEL in its env) with the provider's key in its env (OPENAI_API_KEY "
    "for openai/gpt-4o-mini), --api-base URL for a local server, or a spec's `models:`")


@dataclass(frozen=True)
class ServerConfig:
    root: Path
    settings: RunSettings
    environ: Mapping[str, str]
    runs: Path  # where its runs are kept: run_folder.runs_folder(history, root)


@dataclass(frozen=True)
class TaskArgs:
    """What run_task and start_run take: exactly one of spec, spec_path and prompt."""

    spec: str | None = None
    spec_path: str | None = None
    prompt: str | None = None
    replay: str | None = None


@dataclass(frozen=True)
class RepairArgs:
    """What the repair tool takes: a kind repair task on a repository under the root."""

    prompt: str
    files: tuple[str, ...]
    repository: str = "."
    test_command: str | None = None
    failing_tests: tuple[str, ...] = ()
    requirements: str | None = None
    review: bool = True
    apply: bool = False
    replay: str | None = None
    budget: Budget | None = None


@dataclass(frozen=True)
class ExecArgs:
    script: str
    script_name: str = "script.py"
    contract: ExecutionContract | None = None
    inputs: tuple[str, ...] = ()
    timeout_s: float | None = None


class Tools:
    def __init__(self, config: ServerConfig, queue: JobQueue) -> None:
        self.config = config
        self.queue = queue

    def start_run(self, args: TaskArgs) -> Job:
        """Check the task (every problem is refused here, before it waits), then queue it."""
        return self._queue(self._task(args), self._settings(args.replay))

    def start_repair(self, args: RepairArgs) -> Job:
        """A kind repair task on a repository under the root, checked and queued as a run;
        with `apply`, a passing fix is written into the repository (never over work that
        changed meanwhile: then into the run's folder)."""
        repository = confined(self.config.root, args.repository, "repository")
        if not repository.is_dir():
            raise UsageError(f"repository {args.repository!r}: not a folder under the root "
                             f"{self.config.root}",
                             hint="name the repository's folder relative to the root, or "
                             "'.' for the root itself")
        loaded = api.repair_spec(repository, args.prompt, args.files,
                                 test_command=args.test_command,
                                 failing_tests=args.failing_tests,
                                 requirements=args.requirements, review=args.review,
                                 budget=args.budget.model_dump(exclude_unset=True)
                                 if args.budget else None)
        return self._queue(loaded, self._settings(args.replay), apply=args.apply)

    def _queue(self, loaded: LoadedSpec, settings: RunSettings, *, apply: bool = False) -> Job:
        try:
            prepared = api.prepare_task(spec=loaded, settings=settings,
                                        environ=self.config.environ)
        except api.NoModelConfigured as exc:
            raise UsageError(exc.message, hint=NO_MODEL_HINT) from exc
        folder = run_folder.run_folder(self.config.runs, prepared.run_id)
        environ = self.config.environ

        def work(job: Job) -> api.RunResult:
            return api.run_prepared(prepared, out_dir=writable_folder(folder, "the run's folder"),
                                    environ=environ, on_event=job.on_event, cancel=job.token,
                                    apply=apply)

        job = Job(prepared.run_id, run_folder.task_label(loaded.source, loaded.spec.prompt),
                  work)
        self.queue.submit(job)
        return job

    def progress(self, job: Job) -> RunProgress:
        lines = job.events()
        return RunProgress(
            run_id=job.id, task=job.label, phase=job.phase,
            waiting_before=self.queue.position(job),
            folder=str(run_folder.run_folder(self.config.runs, job.id)),
            progress=lines[-PROGRESS_SHOWN:], progress_total=job.heard,
            result=job.result if isinstance(job.result, api.RunResult) else None,
            error=job.error)

    def get_run(self, run_id: str) -> RunProgress:
        return self.progress(self._job(run_id))

    def cancel_run(self, run_id: str) -> RunProgress:
        job = self._job(run_id)
        job.stop()
        return self.progress(job)

    def exec_job(self, args: ExecArgs) -> Job:
        """A job that runs one script (not queued: the run limit is for runs)."""
        if not SCRIPT_NAME.fullmatch(args.script_name) or args.script_name in (".", ".."):
            raise UsageError(f"script_name {args.script_name!r}: not a plain file name",
                             hint="a name such as chart.py: letters, digits, _ . -")
        script = InputFile(path=args.script_name, data=args.script.encode("utf-8"))
        inputs = [confined(self.config.root, given, "inputs") for given in args.inputs]
        contract = with_timeout(args.contract or ExecutionContract(), args.timeout_s)
        build_request(script, inputs, contract, self.config.settings.runtime)  # checks them
        config = self.config

        def work(job: Job) -> api.ExecResult:
            return api.exec_script(script, contract=contract, inputs=inputs,
                                   runtime=config.settings.runtime, environ=config.environ,
                                   on_progress=lambda line: job.on_event("execute", line),
                                   cancel=job.token)

        return Job(uuid.uuid4().hex[:12], args.script_name, work)

    def validate(self, spec: str | None, spec_path: str | None) -> ValidationResult:
        if (spec is None) == (spec_path is None):
            raise UsageError("give the spec's text (spec) or its path (spec_path), one of them")
        if spec is not None:
            return api.validate(text=spec, root=self.config.root)
        path = confined(self.config.root, spec_path or "", "spec_path")
        if not path.is_file():
            # Nothing to validate: an error, not a valid answer holding one problem.
            where = "no such file under" if not path.exists() else "not a file in"
            raise UsageError(f"spec_path {spec_path!r}: {where} the server's root "
                             f"{self.config.root}",
                             hint="name a spec file relative to the root, or send the "
                             "spec's YAML text as `spec`")
        return api.validate(path, root=self.config.root)

    def list_runs(self, limit: int) -> RunList:
        runs = self.config.runs
        # This server's runs without a run.json: waiting, running, or ended before one
        # was written (no Docker engine...).
        live = [RunSummary(run_id=job.id, status=job.phase, task=job.label,
                           problem=job.error.error if job.error else None)
                for job in self.queue.jobs()
                if job.phase in ("queued", "running", "cancelled") or job.error is not None]
        shown = {summary.run_id for summary in live}
        kept = [summary for summary in run_folder.summaries(runs, limit=limit)
                if summary.run_id not in shown]
        return RunList(runs=(live + kept)[:limit], folder=str(runs))

    def get_audit(self, run_id: str) -> Audit:
        folder = run_folder.run_folder(self.config.runs, run_id)
        return Audit(run_id=run_id, audit_md=self.report(run_id, AUDIT_MD),
                     audit=str(folder / AUDIT_MD), run_json=str(folder / RUN_JSON))

    def report(self, run_id: str, name: str) -> str:
        """A run's AUDIT.md or run.json."""
        path = run_folder.run_folder(self.config.runs, run_id) / name
        try:
            return run_folder.read_report(path)
        except UsageError as exc:
            if isinstance(exc.__cause__, FileMissing):
                raise UsageError(f"run {run_id} has no {name} under {path.parent.parent}",
                                 hint="list_runs shows the runs there; a queued or running "
                                 "run has its reports once it ends") from exc
            raise

    def _job(self, run_id: str) -> Job:
        run_folder.run_folder(self.config.runs, run_id)  # refuses what is not a run id
        job = self.queue.get(run_id)
        if job is None:
            raise UsageError(f"run {run_id}: this server has no such run",
                             hint="start_run returns the id; list_runs shows every run, "
                             "get_audit reads a finished one's record")
        return job

    def _settings(self, replay: str | None) -> RunSettings:
        if replay is None:
            return self.config.settings
        path = confined(self.config.root, replay, "replay")
        return self.config.settings.model_copy(update={"replay": path})

    def _task(self, args: TaskArgs) -> LoadedSpec:
        root = self.config.root
        given = [name for name in ("spec", "spec_path", "prompt")
                 if getattr(args, name) is not None]
        if len(given) != 1:
            raise UsageError("give the task as one of spec (YAML text), spec_path (a spec "
                             f"file under the root) or prompt (plain words); got "
                             f"{', '.join(given) or 'none'}")
        if args.spec is not None:
            return api.spec_from_text(args.spec, root=root, source="spec")
        if args.spec_path is not None:
            return api.spec_from_file(confined(root, args.spec_path, "spec_path"), root=root)
        return api.spec_from_prompt(args.prompt or "", root=root, source="prompt")
