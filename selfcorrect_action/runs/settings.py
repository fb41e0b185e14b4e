"""What a run is configured with, whatever front end started it: a command line, the action's
inputs, or a benchmark. Values from the environment are read here, once, with errors that name
the variable; nothing below this module reads os.environ."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from selfcorrect_action.errors import UsageError
from selfcorrect_action.llm.client import DEFAULT_TIMEOUT_S
from selfcorrect_action.llm.models import StructuredOutput
from selfcorrect_action.sandbox.models import Runtime

ENV_MODEL = "SELFCORRECT_MODEL"
ENV_API_BASE = "SELFCORRECT_API_BASE"
ENV_LLM_TIMEOUT = "SELFCORRECT_LLM_TIMEOUT_S"
ENV_LLM_RETRIES = "SELFCORRECT_LLM_RETRIES"
ENV_STRUCTURED = "SELFCORRECT_STRUCTURED_OUTPUT"
STRUCTURED_CHOICES = ("auto", "json-schema", "json-object-schema", "json-object", "off")
DEFAULT_LLM_RETRIES = 3
MAX_LLM_TIMEOUT_S = 3600.0
MAX_LLM_RETRIES = 10


class RunSettings(BaseModel):
    """Everything about a run that is not in the task spec."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str | None = None  # every tier, over the spec's `models:`
    fallback_model: str | None = None  # the tiers the spec leaves out (SELFCORRECT_MODEL)
    api_base: str | None = None  # an OpenAI-compatible gateway, a LiteLLM proxy, Ollama...
    replay: Path | None = None
    record: Path | None = None
    runtime: Runtime = "runc"
    guidance: str = ""
    # A hanging API used to block 4 x 180 s with nothing on screen and no way to shorten it.
    llm_timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_LLM_TIMEOUT_S)
    llm_retries: int = Field(default=DEFAULT_LLM_RETRIES, ge=0, le=MAX_LLM_RETRIES)
    sandbox_image: str | None = None  # a prebuilt image to use instead of building ours
    # How structured answers are asked for (llm/formats.py): "auto" sends a JSON Schema
    # where litellm says the model enforces one; OpenAI-compatible servers opt in.
    structured_output: StructuredOutput = "auto"

    @property
    def replaying(self) -> bool:
        return self.replay is not None


def llm_timeout(raw: str, where: str) -> float:
    """A request timeout in seconds, from a flag, an input or a variable named `where`."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 < value <= MAX_LLM_TIMEOUT_S:
        raise UsageError(f"{where}: expected seconds in (0, {MAX_LLM_TIMEOUT_S:g}], got {raw!r}",
                         hint=f"for example {where}=120")
    return value


def llm_retries(raw: str, where: str) -> int:
    """How many times a failed model call is retried (0 = never)."""
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_LLM_RETRIES:
        raise UsageError(f"{where}: expected a whole number from 0 to {MAX_LLM_RETRIES}, "
                         f"got {raw!r}", hint=f"for example {where}=3")
    return value


def api_base(raw: str, where: str) -> str:
    """An http(s) URL with a host: a typo here used to surface only after every retry."""
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{where}: {raw!r} is not an http(s) URL with a host",
                         hint="for example http://127.0.0.1:11434 (Ollama) or "
                         "https://my-gateway.example.com/v1")
    try:
        parts.port  # noqa: B018  # raises on a port that is not a number
    except ValueError as exc:
        raise UsageError(f"{where}: {raw!r} has an invalid port",
                         hint="write the port as a number, e.g. :8080") from exc
    return raw.strip()


def structured_output(raw: str, where: str) -> str:
    value = raw.strip().lower()
    if value not in STRUCTURED_CHOICES:
        raise UsageError(f"{where}: expected one of {', '.join(STRUCTURED_CHOICES)}, got "
                         f"{raw!r}", hint="json-object-schema for llama.cpp's server, "
                         "json-schema for vLLM, Ollama and LM Studio, auto for hosted models")
    return value


def _model_name(raw: str, where: str) -> str | None:
    return raw.strip() or None


def from_environment(environ: Mapping[str, str], **given: object) -> RunSettings:
    """Settings from what a front end was `given` (None = not given; it has checked its
    own values), filled in from the environment variables, then the defaults."""
    values = {key: value for key, value in given.items() if value is not None}
    fallbacks: dict[str, tuple[str, Callable[[str, str], object]]] = {
        "fallback_model": (ENV_MODEL, _model_name),
        "api_base": (ENV_API_BASE, api_base),
        "llm_timeout_s": (ENV_LLM_TIMEOUT, llm_timeout),
        "llm_retries": (ENV_LLM_RETRIES, llm_retries),
        "structured_output": (ENV_STRUCTURED, structured_output),
    }
    for key, (variable, parse) in fallbacks.items():
        raw = environ.get(variable, "")
        if key not in values and raw.strip():
            parsed = parse(raw, variable)
            if parsed is not None:
                values[key] = parsed
    return RunSettings.model_validate(values)
