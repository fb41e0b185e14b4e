"""Before anything is spent: which models a run uses, whether a replay fits its task, and the
run's first state. Pure, but for reading the spec's files and a replay file."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from selfcorrect_action import __version__
from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.models import ModelTiers, Tier
from selfcorrect_action.loop.deps import utc_now
from selfcorrect_action.loop.state import FileSha256, RunState
from selfcorrect_action.records import evolve
from selfcorrect_action.redact import redact
from selfcorrect_action.repair.records import RepairRecord
from selfcorrect_action.runs.repair_prepare import repair_contract_timeout
from selfcorrect_action.runs.settings import RunSettings
from selfcorrect_action.spec import LoadedSpec, ModelChoice, user_contract_fields
from selfcorrect_action.verified.record import relative

PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "AZURE_API_KEY",
                 "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY")
NO_MODEL_HINT = (
    "pass --model PROVIDER/MODEL (for example --model openai/gpt-4o-mini with OPENAI_API_KEY "
    "set, or --model anthropic/claude-3-5-haiku-latest with ANTHROPIC_API_KEY), or write "
    "`models: {cheap: ..., strong: ..., judge: ...}` in the spec, or set SELFCORRECT_MODEL; "
    "for a local server (llama.cpp, Ollama, vLLM), pass --api-base URL --model "
    "openai/<the name it serves>; to run offline, pass --replay FILE with a recording made "
    "by --record"
)
# A provider's own variables for a server of one's own, which needs no key of theirs.
BASE_VARIABLES = {"openai": ("OPENAI_API_BASE", "OPENAI_BASE_URL")}
KeyState = Literal["set", "missing", "other_auth", "not_needed"]

log = logging.getLogger(__name__)
_TIERS: tuple[Tier, ...] = ("cheap", "strong", "judge", "review")


def resolve_models(loaded: LoadedSpec, settings: RunSettings, environ: Mapping[str, str]
                   ) -> ModelTiers:
    """The settings' model wins for every tier (its strong and judge models for theirs), then
    the spec's `models:`, then the fallback model (SELFCORRECT_MODEL), then the defaults,
    which need a provider key (or a local server: api_base). A hosted model whose key is not
    in `environ` is refused here, before anything is spent (check_keys)."""
    spec_models = loaded.spec.models
    configured = (settings.model or settings.fallback_model or settings.strong_model
                  or settings.judge_model
                  or any((spec_models.cheap, spec_models.strong, spec_models.judge)))
    keyed = any(environ.get(key) for key in PROVIDER_KEYS) or settings.api_base
    if not (settings.replaying or configured or keyed):
        raise UsageError("no model is configured and no replay was given", hint=NO_MODEL_HINT)
    tiers = chosen_tiers(settings, spec_models)
    check_keys(tiers, settings, environ)
    return tiers


def chosen_tiers(settings: RunSettings, spec_models: ModelChoice | None = None) -> ModelTiers:
    """Each tier's model by the order resolve_models gives (no spec: its `models:` empty)."""
    spec_models = spec_models or ModelChoice()
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


@dataclass(frozen=True)
class TierKey:
    """The credentials of one model, for the tiers that use it."""

    tiers: tuple[Tier, ...]
    model: str
    state: KeyState
    variables: tuple[str, ...] = ()  # the ones litellm looks for: set, or none of them set
    why: str = ""  # not_needed: why not; other_auth: how the provider does without

    @property
    def named(self) -> str:
        *rest, last = self.tiers
        tiers = f"{', '.join(rest)} and {last} tiers" if rest else f"{last} tier"
        return f"model {self.model!r} (the {tiers})"


def tier_keys(models: ModelTiers, settings: RunSettings, environ: Mapping[str, str]
              ) -> list[TierKey]:
    """Whether each model's key is in `environ` (never its value). Not asked of litellm for
    a replay, which calls no model, nor with --api-base, whose server may want no key."""
    by_model: dict[str, list[Tier]] = {}
    for tier in _TIERS:
        if tier != "review" or models.review:
            by_model.setdefault(models.for_tier(tier), []).append(tier)
    if settings.replaying or settings.api_base:
        why = "a replay calls no model" if settings.replaying else "--api-base names the server"
        return [TierKey(tuple(tiers), model, "not_needed", why=why)
                for model, tiers in by_model.items()]
    return [_tier_key(model, tuple(tiers), environ) for model, tiers in by_model.items()]


def _tier_key(model: str, tiers: tuple[Tier, ...], environ: Mapping[str, str]) -> TierKey:
    from selfcorrect_action.llm.keys import key_check  # loads litellm

    found = key_check(model, environ)
    own_server = [name for name in BASE_VARIABLES.get(found.provider, ())
                  if environ.get(name, "").strip()]
    if own_server:
        return TierKey(tiers, model, "not_needed", why=f"{own_server[0]} names the server")
    if found.other_auth and found.unset:
        return TierKey(tiers, model, "other_auth", found.unset, why=found.other_auth)
    if found.keys:
        return TierKey(tiers, model, "missing", found.keys)
    # What litellm would look for in an empty environment: the variables that are set.
    looked_for = key_check(model, {}).unset
    present = tuple(name for name in looked_for if environ.get(name, "").strip())
    if present:
        return TierKey(tiers, model, "set", present)
    return TierKey(tiers, model, "not_needed",
                   why=f"litellm names no key for {found.provider or 'this model'}")


def check_keys(models: ModelTiers, settings: RunSettings, environ: Mapping[str, str]) -> None:
    """UsageError for a hosted model whose key is not set, naming the variable and how to
    set it; a warning for a provider that can authenticate another way (issue 38, item 7)."""
    for found in tier_keys(models, settings, environ):
        if found.state == "other_auth":
            log.warning("%s: %s not set; %s can authenticate with %s, so the run goes on",
                        found.named, " and ".join(found.variables),
                        found.model.split("/")[0], found.why)
        elif found.state == "missing":
            raise UsageError(f"{found.named} needs an API key: "
                             f"{' or '.join(found.variables)} is not set",
                             hint=_key_hint(found.variables[0]))


def _key_hint(variable: str) -> str:
    # `<your key>`: a placeholder the redaction of the error's line leaves as it is.
    return (f"set {variable} in the environment (export {variable}=<your key>; in a workflow, "
            f"`env: {variable}: ${{{{ secrets.{variable} }}}}`); or choose another model "
            "with --model, a local server with --api-base URL, or run offline with --replay "
            "FILE")


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
