"""Before anything is spent: which models a run uses, whether a replay fits its task, and the
run's first state. Pure, but for reading the spec's files and a replay file."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from selfcorrect_action import __version__
from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.models import ModelTiers
from selfcorrect_action.loop.deps import utc_now
from selfcorrect_action.loop.state import FileSha256, RunState
from selfcorrect_action.records import evolve
from selfcorrect_action.redact import redact
from selfcorrect_action.repair.records import RepairRecord
from selfcorrect_action.runs.repair_prepare import repair_contract_timeout
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import LoadedSpec, user_contract_fields
from selfcorrect_action.verified.record import relative

PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY",
                 "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY")
NO_MODEL_HINT = (
    "pass --model PROVIDER/MODEL (for example --model openai/gpt-4o-mini with OPENAI_API_KEY "
    "set, or --model anthropic/claude-3-5-haiku-latest with ANTHROPIC_API_KEY), or write "
    "`models: {cheap: ..., strong: ..., judge: ...}` in the spec, or set SELFCORRECT_MODEL; "
    "to run offline, pass --replay FILE with a recording made by --record"
)


def resolve_models(loaded: LoadedSpec, settings: RunSettings, environ: Mapping[str, str]
                   ) -> ModelTiers:
    """The settings' model wins for every tier (its strong and judge models for theirs), then
    the spec's `models:`, then the fallback model (SELFCORRECT_MODEL), then the defaults,
    which need a provider key (or a local server: api_base)."""
    spec_models = loaded.spec.models
    configured = (settings.model or settings.fallback_model or settings.strong_model
                  or settings.judge_model
                  or any((spec_models.cheap, spec_models.strong, spec_models.judge)))
    keyed = any(environ.get(key) for key in PROVIDER_KEYS) or settings.api_base
    if not (settings.replaying or configured or keyed):
        raise UsageError("no model is configured and no replay was given", hint=NO_MODEL_HINT)
    if settings.model:
        tiers = ModelTiers(cheap=settings.model, strong=settings.model, judge=settings.model)
    else:
        defaults = ModelTiers()
        fallback = settings.fallback_model
        tiers = ModelTiers(
            cheap=spec_models.cheap or fallback or defaults.cheap,
            strong=spec_models.strong or fallback or defaults.strong,
            judge=spec_models.judge or fallback or defaults.judge,
        )
    return ModelTiers(cheap=tiers.cheap, strong=settings.strong_model or tiers.strong,
                      judge=settings.judge_model or tiers.judge,
                      review=settings.model or spec_models.review)


def check_models(models: ModelTiers, settings: RunSettings) -> None:
    """Every tier's model is one litellm can route (a replay calls none of them)."""
    if settings.replaying:
        return
    from selfcorrect_action.llm.model_names import check_model_names  # loads litellm

    check_model_names(models, api_base=settings.api_base)


def check_replay_fits(replay: Path, prompt: str, *, secrets: Sequence[str] = ()) -> None:
    """A recording made for another task would replay its answers against this one: refuse
    it up front. The task's prompt is quoted in the recorded requests."""
    from selfcorrect_action.llm.recording import read_recording, task_digest

    recording = read_recording(replay)
    recorded = recording.header.task_sha256
    if recorded is not None:
        if recorded in {task_digest(prompt), task_digest(redact(prompt, secrets=secrets))}:
            return
        raise UsageError(f"{replay}: this recording was made for a different task (its "
                         "header names another prompt's digest)",
                         hint="replay the recording made for this spec, or re-record it "
                         "with --record")
    for exchange in recording.exchanges:
        asked = "\n".join(message.content for message in exchange.request.messages)
        # Recordings are redacted: a prompt that quotes a token is recorded without it.
        if any(text.strip() in asked for text in (prompt, redact(prompt, secrets=secrets))):
            return
    if recording.exchanges:
        raise UsageError(
            f"{replay}: this recording was made for a different task (none of its "
            "requests contains this spec's prompt)",
            hint="replay the recording made for this spec, or re-record it with --record",
        )


def initial_state(loaded: LoadedSpec, models: ModelTiers, settings: RunSettings, *,
                  run_id: str | None = None, repair: RepairRecord | None = None) -> RunState:
    """The run's first state; a repair's needs its repository's record (repair_prepare)."""
    spec = loaded.spec
    contract = spec.contract
    if spec.kind == "repair":
        if repair is None:
            raise ValueError("a repair's first state needs its repository's record")
        contract = evolve(contract, {"timeout_s": repair_contract_timeout(loaded)})
    return RunState(
        run_id=run_id or uuid.uuid4().hex[:12],
        started_at=utc_now(),
        spec_source=loaded.source,
        spec=spec,
        user_contract_fields=sorted(user_contract_fields(spec)),
        # A repair has no script of its own: it rewrites the repository's files.
        output_name=PurePosixPath(str(loaded.output_path)).name if spec.output else "",
        contract=contract,
        repair=repair,
        tests={path.name: path.read_text(encoding="utf-8") for path in loaded.test_paths},
        inputs=[path.name for path in loaded.input_paths],
        models=models,
        runtime=settings.runtime,
        replayed=settings.replaying,
        replay_file=str(settings.replay) if settings.replay else "",
        guidance=settings.guidance,
        orchestrator=settings.orchestrator,
        selfcorrect_version=__version__,
        input_digests=[file_sha256(loaded.root, path) for path in loaded.input_paths],
        test_digests=[file_sha256(loaded.root, path) for path in loaded.test_paths],
    )


def file_sha256(root: Path, path: Path) -> FileSha256:
    """A spec's file as the run read it, named as a verification record names it
    (verified/record.py: relative to the root, / separated)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    try:
        name = relative(root, path)
    except ValueError:  # a file outside the root: named as the spec names it
        name = PurePosixPath(path).as_posix()
    return FileSha256(path=name, sha256=digest.hexdigest())
