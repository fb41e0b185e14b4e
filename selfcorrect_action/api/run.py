"""A task through the whole loop, from Python: what `selfcorrect run` does, by the same path
(runs/pipeline.py, ending in a folder as runs/publish.py writes it), without the terminal.

Two steps, so a caller can refuse a bad task before queueing it (the MCP server does):
`prepare_task` checks everything that can be checked before a token is spent and returns
the run's id; `run_prepared` runs it. `run_task` does both. Both take the task as `spec=`
or `prompt=` (api/arguments.py: README's positional str still works, with a warning).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from selfcorrect_action.api.arguments import (
    PathGiven,
    PositionalTask,
    SpecGiven,
    as_path,
    given_task,
)
from selfcorrect_action.api.results import RunResult, run_result
from selfcorrect_action.api.tasks import default_out_dir
from selfcorrect_action.choices import Runtime
from selfcorrect_action.errors import UsageError
from selfcorrect_action.loop.deps import utc_now
from selfcorrect_action.records import evolve
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.runs import pipeline, settings
from selfcorrect_action.runs.cancel import CancelToken
from selfcorrect_action.runs.prepare import NO_MODEL_HINT
from selfcorrect_action.runs.publish import run_to_folder
from selfcorrect_action.runs.session import RunEvents
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.sandbox.egress.policy import secret_values
from selfcorrect_action.writable_paths import writable_folder

OnEvent = Callable[[str, str], None]  # (step, message), redacted: what the CLI prints
API_NO_MODEL_HINT = (
    "pass model='openai/gpt-4o-mini' (with OPENAI_API_KEY in the environment; any "
    "provider/model litellm knows), or api_base='http://127.0.0.1:8080/v1' with model= for a "
    "local server, or replay=Path('recording.jsonl') to play a recording back; a spec's "
    "`models:` and the SELFCORRECT_MODEL variable name one too")


class NoModelConfigured(UsageError):
    """No model to call and no recording to play: `hint` says how to give one, in the
    API's terms (the MCP server says it in its own)."""


@dataclass(frozen=True)
class PreparedTask:
    """A task checked and ready to run, nothing spent yet."""

    run: pipeline.PreparedRun

    @property
    def run_id(self) -> str:
        return self.run.state.run_id


def run_settings(environ: Mapping[str, str] | None = None, *, model: str | None = None,
                 replay: PathGiven | None = None, runtime: Runtime | None = None,
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
    replay_path = as_path(replay, "replay")
    given["replay"] = settings.Given(replay_path, "argument replay") if replay_path else None
    given["guidance"] = settings.Given(guidance, "argument guidance") if guidance else None
    given["resume"] = settings.Given(str(resume), "argument resume") if resume else None
    for name, value in (("more_attempts", more_attempts), ("more_tokens", more_tokens),
                        ("more_usd", more_usd)):
        given[name] = settings.Given(value, f"argument {name}") if value else None
    if any((more_attempts, more_tokens, more_usd)) and not resume:
        raise UsageError("more_attempts, more_tokens and more_usd go with resume: they give "
                         "an earlier run more", hint="pass resume=RUN_ID as well")
    return settings.resolve(os.environ if environ is None else environ, given).settings


def prepare_task(task: PositionalTask | None = None, *, spec: SpecGiven | None = None,
                 prompt: str | None = None, settings: RunSettings,
                 root: PathGiven | None = None,
                 environ: Mapping[str, str] | None = None) -> PreparedTask:
    """The task (`spec=` or `prompt=`, as run_task takes it) loaded and checked (its spec,
    its files, the models, a replay's fit): every problem raises here, as SpecError or
    UsageError, before anything is spent."""
    given = given_task(task, spec=spec, prompt=prompt, call="prepare_task")
    if given.deprecation:
        warnings.warn(given.deprecation, DeprecationWarning, stacklevel=2)
    environ = os.environ if environ is None else environ
    loaded = given.load(as_path(root, "root"))
    secrets = [*secrets_from_env(environ),
               *secret_values(loaded.spec.contract.network, environ)]
    try:
        return PreparedTask(pipeline.prepare(loaded, settings, environ=environ,
                                             secrets=secrets))
    except UsageError as exc:
        # The run path says it for the command line (--model, --replay FILE).
        if exc.hint != NO_MODEL_HINT:
            raise
        raise NoModelConfigured(exc.message, hint=API_NO_MODEL_HINT) from exc


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


def run_task(task: PositionalTask | None = None, *, spec: SpecGiven | None = None,
             prompt: str | None = None, root: PathGiven | None = None,
             out_dir: PathGiven | None = None, settings: RunSettings | None = None,
             model: str | None = None, replay: PathGiven | None = None,
             runtime: Runtime | None = None, api_base: str | None = None,
             environ: Mapping[str, str] | None = None, on_event: OnEvent | None = None,
             cancel: CancelToken | None = None, apply: bool = False) -> RunResult:
    """Turn a task into a script shown to work: `spec=` a spec file (a str or a Path) or a
    spec loaded already (`spec_from_text`, `repair_spec`), or `prompt=` the task in words.
    (A positional Path or loaded spec is a spec; a positional str, README's first call,
    is a prompt with a DeprecationWarning, or the spec file it names.) Tests and inputs a
    spec names are relative to `root` (a repair's repository). The reports and the passing
    script go to `out_dir` (default: out/<name>, as `selfcorrect run`); a repair's diff and
    changed files too, or with `apply` into the repository (a script with its header and
    its verification record: `result.record`). `settings`, or
    `model`/`replay`/`runtime`/`api_base` over the environment's."""
    if settings is not None and (model or replay or runtime or api_base):
        raise UsageError("give either settings or model/replay/runtime/api_base, not both",
                         hint="put them in the settings: run_settings(model=...)")
    given = given_task(task, spec=spec, prompt=prompt, call="run_task")
    if given.deprecation:
        warnings.warn(given.deprecation, DeprecationWarning, stacklevel=2)
    environ = os.environ if environ is None else environ
    chosen = settings or run_settings(environ, model=model, replay=replay, runtime=runtime,
                                      api_base=api_base)
    prepared = prepare_task(spec=given.load(as_path(root, "root")), settings=chosen,
                            environ=environ)
    assert prepared.run.loaded is not None
    folder = writable_folder(as_path(out_dir, "out_dir")
                             or default_out_dir(prepared.run.loaded), "out_dir")
    return run_prepared(prepared, out_dir=folder, environ=environ, on_event=on_event,
                        cancel=cancel, apply=apply)


def _redacting(on_event: OnEvent | None, secrets: list[str]) -> OnEvent:
    def say(step: str, message: str) -> None:
        if on_event is not None:
            on_event(step, redact(message, secrets=secrets))
    return say
