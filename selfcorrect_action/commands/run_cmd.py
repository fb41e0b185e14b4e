"""`selfcorrect run`: one task spec through the whole loop, with live progress, writing the
passing file, run.json and AUDIT.md."""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rich.console import Console
from rich.markup import escape

from selfcorrect_action.commands.paths import writable_file, writable_folder
from selfcorrect_action.errors import SpecError, UsageError
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.budget import unpriced_cost_cap
from selfcorrect_action.loop.deps import Deps, utc_now
from selfcorrect_action.loop.orchestrator import INTERRUPTED, run_loop
from selfcorrect_action.loop.state import RunState, Status
from selfcorrect_action.redact import redact, secrets_from_env
from selfcorrect_action.report.writer import (
    copy_atomically,
    destination,
    write_atomically,
    write_reports,
)
from selfcorrect_action.sandbox import engine
from selfcorrect_action.sandbox.client import Sandbox
from selfcorrect_action.sandbox.image import ensure_image
from selfcorrect_action.sandbox.models import InputFile, Limits, Runtime
from selfcorrect_action.spec import LoadedSpec, file_problems, load_spec, user_contract_fields
from selfcorrect_action.templating import render, terminal_safe

EXIT_FOR_STATUS = {Status.PASSED: 0, Status.EXHAUSTED: 1, Status.STOPPED: 1, Status.ERROR: 3}
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY",
                 "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY")
NO_MODEL_HINT = (
    "pass --model PROVIDER/MODEL (for example --model openai/gpt-4o-mini with OPENAI_API_KEY "
    "set, or --model anthropic/claude-3-5-haiku-latest with ANTHROPIC_API_KEY), or write "
    "`models: {cheap: ..., strong: ..., judge: ...}` in the spec, or set SELFCORRECT_MODEL; "
    "to run offline, pass --replay FILE with a recording made by --record"
)


@dataclass(frozen=True)
class RunOptions:
    spec_path: Path
    model: str | None = None
    replay: Path | None = None
    record: Path | None = None
    out_dir: Path | None = None
    runtime: Runtime = "runc"
    guidance: str = ""
    as_json: bool = False
    api_base: str | None = None  # an OpenAI-compatible gateway, a LiteLLM proxy, Ollama...


def run_spec(options: RunOptions, *, environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    secrets = secrets_from_env(environ)
    loaded = load_spec(options.spec_path)
    problems = file_problems(loaded)
    if problems:
        raise SpecError(problems)
    models = resolve_models(loaded, options, environ)
    if options.replay is not None:
        check_replay_fits(options.replay, loaded.spec.prompt, secrets=secrets)
    out_dir = writable_folder(options.out_dir or Path("out") / options.spec_path.stem, "--out")
    if options.record is not None:
        writable_file(options.record, "--record")
    console = Console(stderr=True, highlight=False)
    state = initial_state(loaded, models, options)
    from selfcorrect_action.llm.factory import client_for  # litellm loads on first call only

    api_base = options.api_base or environ.get("SELFCORRECT_API_BASE") or None
    llm = client_for(models, replay=options.replay, record=options.record, api_base=api_base,
                     secrets=secrets)
    client = engine.connect(environ)
    image = ensure_image(client, progress=lambda line: console.print(
        terminal_safe(line), style="dim", markup=False))
    with tempfile.TemporaryDirectory(prefix="selfcorrect-run-") as scratch, \
            Sandbox(client, image, pool_size=1) as sandbox:
        contract = loaded.spec.contract
        sandbox.warm(Limits(memory_mb=contract.memory_mb, network=contract.network),
                     options.runtime)
        deps = Deps(llm=llm, sandbox=sandbox, work_root=Path(scratch), inputs=_inputs(loaded),
                    price=_price(), on_event=_progress(console, secrets))
        for warning in unpriced_cost_cap(loaded.spec.budget.cost_usd, models, deps.price,
                                         replaying=options.replay is not None):
            deps.on_event("budget", warning)
        state = run_loop(state, deps)
        paths = publish(state, loaded, out_dir, Path(scratch), secrets=secrets)
    _print_outcome(state, paths, console, as_json=options.as_json, secrets=secrets)
    if state.stop_reason == INTERRUPTED:
        raise KeyboardInterrupt
    return EXIT_FOR_STATUS.get(state.status, 3)


def check_replay_fits(replay: Path, prompt: str, *, secrets: Sequence[str] = ()) -> None:
    """A recording made for another task would replay its answers against this one: refuse
    it up front. The task's prompt is quoted in the recorded plan request."""
    from selfcorrect_action.llm.recording import read_recording

    recording = read_recording(replay)
    plan = next((e.request for e in recording.exchanges if e.request.purpose == "plan"), None)
    if plan is None:
        return
    asked = "\n".join(message.content for message in plan.messages)
    # Recordings are redacted: a prompt that quotes a token is recorded without it.
    if not any(text.strip() in asked for text in (prompt, redact(prompt, secrets=secrets))):
        raise UsageError(
            f"{replay}: this recording was made for a different task (its plan request does "
            "not contain this spec's prompt)",
            hint="replay the recording made for this spec, or re-record it with --record",
        )


def resolve_models(loaded: LoadedSpec, options: RunOptions, environ: Mapping[str, str]
                   ) -> ModelTiers:
    """--model wins for every tier, then the spec's `models:`, then SELFCORRECT_MODEL, then
    the defaults, which need a provider key."""
    chosen = options.model or environ.get("SELFCORRECT_MODEL")
    spec_models = loaded.spec.models
    configured = chosen or any((spec_models.cheap, spec_models.strong, spec_models.judge))
    if options.replay is None and not configured and not any(environ.get(k)
                                                              for k in PROVIDER_KEYS):
        raise UsageError("no model is configured and no replay was given", hint=NO_MODEL_HINT)
    defaults = ModelTiers()
    if options.model:
        return ModelTiers(cheap=options.model, strong=options.model, judge=options.model)
    fallback = chosen or None
    return ModelTiers(
        cheap=spec_models.cheap or fallback or defaults.cheap,
        strong=spec_models.strong or fallback or defaults.strong,
        judge=spec_models.judge or fallback or defaults.judge,
    )


def initial_state(loaded: LoadedSpec, models: ModelTiers, options: RunOptions) -> RunState:
    spec = loaded.spec
    return RunState(
        run_id=uuid.uuid4().hex[:12],
        started_at=utc_now(),
        spec_source=loaded.source,
        spec=spec,
        user_contract_fields=sorted(user_contract_fields(spec)),
        output_name=PurePosixPath(str(loaded.output_path)).name,
        contract=spec.contract,
        tests={path.name: path.read_text(encoding="utf-8") for path in loaded.test_paths},
        inputs=[path.name for path in loaded.input_paths],
        models=models,
        runtime=options.runtime,
        replayed=options.replay is not None,
        replay_file=str(options.replay) if options.replay else "",
        guidance=options.guidance,
    )


@dataclass(frozen=True)
class Published:
    output: Path | None
    run_json: Path
    audit: Path


def publish(state: RunState, loaded: LoadedSpec, out_dir: Path, work_root: Path, *,
            secrets: list[str]) -> Published:
    """run.json and AUDIT.md always; the passing file (at the spec's output path under
    out_dir) and its artifacts only when the run passed."""
    reports = write_reports(state, out_dir, secrets=secrets)
    output = None
    if state.status is Status.PASSED and state.last is not None:
        # Through destination(): never through a link, replacing rather than writing into
        # whatever is there.
        output = destination(out_dir, str(loaded.spec.output))
        write_atomically(output, state.last.code)
        produced = work_root / f"attempt-{state.last.index}" / "run"
        for file in sorted(produced.rglob("*")) if produced.is_dir() else []:
            if file.is_file() and not file.is_symlink():
                relative = file.relative_to(produced).as_posix()
                copy_atomically(file, destination(out_dir, f"artifacts/{relative}"))
    return Published(output, reports.run_json, reports.audit_md)


def _inputs(loaded: LoadedSpec) -> list[InputFile]:
    return [InputFile(path=path.name, data=path.read_bytes()) for path in loaded.input_paths]


def _price():  # type: ignore[no-untyped-def]
    from selfcorrect_action.llm.pricing import price_usd

    return price_usd


def _progress(console: Console, secrets: list[str]):  # type: ignore[no-untyped-def]
    styles = {"plan": "cyan", "generate": "magenta", "execute": "blue", "evaluate": "yellow",
              "done": "bold"}

    def show(step: str, message: str) -> None:
        # Messages quote script output and model answers: no secrets, no rich markup and no
        # terminal control characters.
        safe = escape(terminal_safe(redact(message, secrets=secrets)))
        console.print(f"[{styles.get(step, 'white')}]{step:>8}[/] {safe}", markup=True)
    return show


def _print_outcome(state: RunState, paths: Published, console: Console, *, as_json: bool,
                   secrets: list[str]) -> None:
    usage = state.usage
    if as_json:
        print(json.dumps({
            "status": state.status.value,
            "stop_reason": redact(state.stop_reason, secrets=secrets),
            "attempts": len(state.attempts), "tokens": usage.tokens,
            "cost_usd": round(usage.cost_usd, 6) if usage.cost_known else None,
            "replayed": state.replayed,
            "output": str(paths.output) if paths.output else None,
            "run_json": str(paths.run_json), "audit": str(paths.audit),
        }, indent=2))
        return
    print(redact(render("reports/run_summary.txt.j2", state=state, output=paths.output,
                        audit=paths.audit, run_json=paths.run_json), secrets=secrets), end="")

