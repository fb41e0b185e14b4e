"""What OpenAI-compatible server is at `--api-base`, asked once per run, and what follows
from it: the structured-output mode it takes and whether it serves `/v1/completions`.

An unconfigured `openai/<name>` on llama-cpp-python's server sent no schema (the default
`auto` asks litellm, which knows nothing of a local model): a plan answer was refused twice
(~60 s) where `json-object-schema` gave one in ~10 s (issue 21). Each server says what it
is at a path of its own; the first that answers wins. Nothing here fails a run: a server
that answers none of them is "unknown" and the settings stay as they were.

The reading of the answers is pure (`identify`); `probe` is the thin HTTP part.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict

from selfcorrect_action.choices import StructuredOutput

ServerKind = Literal["llama-cpp-python", "llama.cpp", "ollama", "vllm", "lm-studio",
                     "unknown"]
PROBE_TIMEOUT_S = 3.0
# What each server takes for a JSON Schema (README, "Local models").
STRUCTURED_BY_KIND: dict[str, StructuredOutput] = {
    "llama-cpp-python": "json-object-schema", "llama.cpp": "json-schema",
    "ollama": "json-schema", "vllm": "json-schema", "lm-studio": "json-schema",
}
# Paths relative to the server's root (the API base without its /v1).
PROBES = ("/v1/models", "/openapi.json", "/props", "/api/version", "/version",
          "/api/v0/models")
_PARAMS = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*([MB])(?![A-Za-z])", re.IGNORECASE)


class ServerInfo(BaseModel):
    """Recorded in run.json: what answered at the API base, and what was chosen for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ServerKind = "unknown"
    version: str = ""
    structured_output: StructuredOutput | None = None  # None: the server did not say
    completions: bool = False  # it serves /v1/completions (text completion)
    model_params: int | None = None  # the model's size in parameters, where it was told

    def described(self) -> str:
        if self.kind == "unknown":
            return "an unrecognised OpenAI-compatible server"
        parts = [f"{self.kind}{' ' + self.version if self.version else ''}"]
        if self.structured_output:
            parts.append(f"structured output {self.structured_output}")
        parts.append("/v1/completions " + ("served" if self.completions else "not served"))
        if self.model_params:
            parts.append(f"a model of {_size(self.model_params)} parameters")
        return ", ".join(parts)


Answers = Mapping[str, Any]  # probe path → its JSON answer (absent when it did not answer)


def identify(answers: Answers, model: str) -> ServerInfo:
    """The server these answers come from. `model` is the name asked for (its size may be
    in it: SmolLM2-135M, qwen2.5-coder:1.5b)."""
    kind, version = _kind(answers)
    openapi = answers.get("/openapi.json")
    paths = openapi.get("paths", {}) if isinstance(openapi, Mapping) else {}
    completions = "/v1/completions" in paths or kind in ("llama.cpp", "ollama", "vllm",
                                                        "lm-studio")
    return ServerInfo(kind=kind, version=version,
                      structured_output=STRUCTURED_BY_KIND.get(kind), completions=completions,
                      model_params=_model_params(answers, model))


def _kind(answers: Answers) -> tuple[ServerKind, str]:
    openapi = answers.get("/openapi.json")
    info = openapi.get("info", {}) if isinstance(openapi, Mapping) else {}
    models = answers.get("/v1/models")
    owners = {str(m.get("owned_by")) for m in models.get("data", []) if isinstance(m, Mapping)
              } if isinstance(models, Mapping) else set()
    if "llama.cpp python" in str(info.get("title", "")).lower() or owners == {"me"}:
        return "llama-cpp-python", str(info.get("version", ""))
    if owners == {"llamacpp"}:
        return "llama.cpp", ""
    if owners == {"vllm"}:
        return "vllm", str(answers.get("/version", {}).get("version", "")) if isinstance(
            answers.get("/version"), Mapping) else ""
    props = answers.get("/props")
    if isinstance(props, Mapping) and ("default_generation_settings" in props
                                       or "model_path" in props):
        return "llama.cpp", str(props.get("build_info", ""))[:40]
    ollama = answers.get("/api/version")
    if isinstance(ollama, Mapping) and "version" in ollama:
        return "ollama", str(ollama["version"])
    if isinstance(answers.get("/api/v0/models"), Mapping):
        return "lm-studio", ""
    vllm = answers.get("/version")
    if isinstance(vllm, Mapping) and "version" in vllm:
        return "vllm", str(vllm["version"])
    return "unknown", ""


def _model_params(answers: Answers, model: str) -> int | None:
    names = [model]
    props = answers.get("/props")
    if isinstance(props, Mapping):
        names.append(str(props.get("model_path", "")))
    models = answers.get("/v1/models")
    if isinstance(models, Mapping):
        names += [str(m.get("id", "")) for m in models.get("data", [])
                  if isinstance(m, Mapping)]
    for name in names:
        params = params_in_name(name)
        if params is not None:
            return params
    return None


def params_in_name(name: str) -> int | None:
    """`SmolLM2-135M-Instruct` → 135,000,000; `ollama/qwen2.5-coder:1.5b` → 1,500,000,000."""
    found = _PARAMS.search(name.rsplit("/", 1)[-1])
    if found is None:
        return None
    scale = 1_000_000 if found.group(2).upper() == "M" else 1_000_000_000
    return int(float(found.group(1)) * scale)


def _size(params: int) -> str:
    return f"{params / 1e9:g}B" if params >= 1_000_000_000 else f"{params / 1e6:g}M"


def server_root(api_base: str) -> str:
    """`http://host:8765/v1` → `http://host:8765`: the probes are relative to the root."""
    return re.sub(r"/v1/?$", "", api_base.rstrip("/"))


Fetch = Callable[[str], Any]


def probe(api_base: str, model: str, *, fetch: Fetch | None = None) -> ServerInfo:
    """Ask the server at `api_base`; never raises for what the server does."""
    get = fetch or _http_get(server_root(api_base))
    answers: dict[str, Any] = {}
    for path in PROBES:
        answer = get(path)
        if answer is UNREACHABLE:
            break  # nothing listens: the run's own call will say so, with its hint
        if answer is not None:
            answers[path] = answer
    return identify(answers, model)


UNREACHABLE = object()


def _http_get(root: str) -> Fetch:
    def get(path: str) -> Any:
        try:
            response = httpx.get(root + path, timeout=PROBE_TIMEOUT_S)
        except (httpx.ConnectError, httpx.ConnectTimeout):
            return UNREACHABLE
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        try:
            return response.json()
        except ValueError:
            return None

    return get
