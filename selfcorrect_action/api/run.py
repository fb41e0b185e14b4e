"""A task through the whole loop, from Python: what `selfcorrect run` does, by the same path
(runs/pipeline.py, ending in a folder as runs/publish.py writes it), without the terminal.

Two steps, so a caller can refuse a bad task before queueing it (the MCP server does):
`prepare_task` checks everything that can be checked before a token is spent and returns
the run's id; `run_prepared` runs it. `run_task` does both.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.api.results import RunResult, run_result
from selfcorrect_action.api.tasks import Task, default_out_dir, load_task
from selfcorrect_action.choices import Runtime
from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.deps import utc_now
from selfcorrect_action.records import evolve
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.runs import pipeline, settings
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.publish import run_to_folder
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox.egress.policy import secret_values
from selfcorrect_action.writable_paths import writable_folder

OnEvent = Callable[[str, str], None]  # (step, message), redacted: what the CLI prints


@dataclass(frozen=True)
class PreparedTask:
    """A task checked and ready to run, nothing spent yet."""

    run: pipeline.PreparedRun

    @property
    def run_id(self) -> str:
        return self.run.state.run_id


def run_settings(environ: Mapping[str, str] | None = None, *, model: str | None = None,
                 replay: Path | None = None, runtime: Runtime | None = None,
                 api_base: str | None = None, guidance: str | None = None,
                 record_exchanges: bool | None = None, resume: str | Path | None = None,
                 more_attempts: int = 0, more_tokens: int = 0,
                 more_usd: float = 0.0) -> RunSettings:
    """Settings as `selfcorrect run` resolves them (runs/settings.py): these arguments win
    over the SELFCORRECT_* variables of `environ`, which win over the defaults.
    `record_exchanges=False`: keep no recording of the model exchanges with the run's
    checkpoint; `resume`: a run id or checkpoint folder to go on from (issue 37), given
    `more_attempts`, `more_tokens`, `more_usd` beyond its spec's budget."""
    given = settings.argument_values({
        "model": model, "runtime": runtime, "api_base": api_base,
        "record_exchanges": None if record_exchanges is None else str(record_exchanges)})
    given["replay"] = settings.Given(replay, "argument replay") if replay else None
    given["guidance"] = settings.Given(guidance, "argument guidance") if guidance else None
    given["resume"] = settings.Given(str(resume), "argument resume") if resume else None
    for name, value in (("more_attempts", more_attempts), ("more_tokens", more_tokens),
                        ("more_usd", more_usd)):
        given[name] = settings.Given(value, f"argument {name}") if value else None
    if any((more_attempts, more_tokens, more_usd)) and not resume:
        raise UsageError("more_attempts, more_tokens and more_usd go with resume: they give "
                         "an earlier run more", hint="pass resume=RUN_ID as well")
    return settings.resolve(os.environ if environ is None else environ, given).settings


def prepare_task(task: Task, *, settings: RunSettings, root: Path | None = None,
                 environ: Mapping[str, str] | None = None) -> PreparedTask:
    """`task` loaded and checked (its spec, its files, the models, a replay's fit): every
    problem raises here, as SpecError or UsageError, before anything is spent."""
    environ = os.environ if environ is None else environ
    loaded = load_task(task, root=root)
    secrets = [*secrets_from_env(environ),
               *secret_values(loaded.spec.contract.network, environ)]
    return PreparedTask(pipeline.prepare(loaded, settings, environ=environ, secrets=secrets))


def run_prepared(prepared: PreparedTask, *, out_dir: Path,
                 environ: Mapping[str, str] | None = None, on_event: OnEvent | None = None,
                 cancel: CancelToken | None = None, apply: bool = False) -> RunResult:
    """Run it, its reports and (if it passed) its script written to `out_dir`; a repair's
    diff and changed files there too, or with `apply` its changed files into the
    repository (refused, into `out_dir` instead, where work there changed meanwhile). A
    cancel ends it at once, the reports written, with status `cancelled` and
    `interrupted_by="cancelled"` (exit code 130) in the result rather than raised."""
    environ = os.environ if environ is None else environ
    # A credential's value is redacted wherever it is shown, whatever its variable's name.
    secrets = [*secrets_from_env(environ),
               *secret_values(prepared.run.state.contract.network, environ)]
    # started_at is when it runs, not when it was prepared (a queued run waits).
    run = evolve(prepared.run.state, {"started_at": utc_now()})
    events = RunEvents(on_event=_redacting(on_event, secrets))
    done = run_to_folder(dataclasses.replace(prepared.run, state=run), out_dir,
                         environ=environ, secrets=secrets, events=events, cancel=cancel,
                         apply=apply)
    return run_result(done, secrets=secrets)


def run_task(task: Task, *, root: Path | None = None, out_dir: Path | None = None,
             settings: RunSettings | None = None, model: str | None = None,
             replay: Path | None = None, runtime: Runtime | None = None,
             environ: Mapping[str, str] | None = None, on_event: OnEvent | None = None,
             cancel: CancelToken | None = None, apply: bool = False) -> RunResult:
    """Turn `task` into a script shown to work: a prompt (str), a spec file (Path) or a
    spec loaded already (`spec_from_text`, `repair_spec`). Tests and inputs a spec names
    are relative to `root` (a repair's repository). The reports and the passing script go
    to `out_dir` (default: out/<name>, as `selfcorrect run`); a repair's diff and changed
    files too, or with `apply` into the repository (a script with its header and its
    verification record: `result.record`). `settings`, or
    `model`/`replay`/`runtime` over the environment's."""
    if settings is not None and (model or replay or runtime):
        raise UsageError("give either settings or model/replay/runtime, not both",
                         hint="put them in the settings: run_settings(model=...)")
    environ = os.environ if environ is None else environ
    chosen = settings or run_settings(environ, model=model, replay=replay, runtime=runtime)
    prepared = prepare_task(task, settings=chosen, root=root, environ=environ)
    assert prepared.run.loaded is not None
    folder = writable_folder(out_dir or default_out_dir(prepared.run.loaded), "out_dir")
    return run_prepared(prepared, out_dir=folder, environ=environ, on_event=on_event,
                        cancel=cancel, apply=apply)


def _redacting(on_event: OnEvent | None, secrets: list[str]) -> OnEvent:
    def say(step: str, message: str) -> None:
        if on_event is not None:
            on_event(step, redact(message, secrets=secrets))
    return say
