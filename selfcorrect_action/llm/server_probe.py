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
# Ollama says a model's size and its window only when asked about that model (a POST).
OLLAMA_SHOW = "/api/show"
OLLAMA_DEFAULT_NUM_CTX = 2048  # what Ollama serves a model with when num_ctx is not set
_PARAMS = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)\s*([MB])(?![A-Za-z])", re.IGNORECASE)


class ServerInfo(BaseModel):
    """Recorded in run.json: what answered at the API base, and what was chosen for it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ServerKind = "unknown"
    version: str = ""
    structured_output: StructuredOutput | None = None  # None: the server did not say
    completions: bool = False  # it serves /v1/completions (text completion)
    model_params: int | None = None  # the model's size in parameters, where it was told
    # The context window it serves (issue 38): llama.cpp's n_ctx, vLLM's max_model_len,
    # Ollama's num_ctx; None where it did not say (llama-cpp-python: its refusal says).
    context_tokens: int | None = None

    def described(self) -> str:
        if self.kind == "unknown":
            return "an unrecognised OpenAI-compatible server"
        parts = [f"{self.kind}{' ' + self.version if self.version else ''}"]
        if self.structured_output:
            parts.append(f"structured output {self.structured_output}")
        parts.append("/v1/completions " + ("served" if self.completions else "not served"))
        if self.model_params:
            parts.append(f"a model of {_size(self.model_params)} parameters")
        if self.context_tokens:
            parts.append(f"a context window of {self.context_tokens:,} tokens")
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
                      model_params=_model_params(answers, model),
                      context_tokens=_context_tokens(answers))


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


def _served_models(answers: Answers) -> list[Mapping[str, Any]]:
    models = answers.get("/v1/models")
    data = models.get("data", []) if isinstance(models, Mapping) else []
    return [entry for entry in data if isinstance(entry, Mapping)] if isinstance(
        data, list) else []


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def _context_tokens(answers: Answers) -> int | None:
    """The window the server serves: llama.cpp's /props n_ctx (per slot), vLLM's
    max_model_len, Ollama's num_ctx from /api/show (its default when unset)."""
    props = answers.get("/props")
    if isinstance(props, Mapping):
        settings = props.get("default_generation_settings")
        found = _count(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
        if found is None:
            found = _count(props.get("n_ctx"))
        if found is not None:
            return found
    for entry in _served_models(answers):
        found = _count(entry.get("max_model_len"))
        if found is not None:
            return found
    show = answers.get(OLLAMA_SHOW)
    if isinstance(show, Mapping):
        for line in str(show.get("parameters", "")).splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                return int(value.strip())
        return OLLAMA_DEFAULT_NUM_CTX
    return None


def _model_params(answers: Answers, model: str) -> int | None:
    """The size the server says (llama.cpp's /v1/models meta.n_params, Ollama's
    details.parameter_size), else the one a name says (the model asked for, the file the
    server loaded, the ids it serves)."""
    for entry in _served_models(answers):
        meta = entry.get("meta")
        found = _count(meta.get("n_params")) if isinstance(meta, Mapping) else None
        if found is not None:
            return found
    show = answers.get(OLLAMA_SHOW)
    details = show.get("details") if isinstance(show, Mapping) else None
    if isinstance(details, Mapping):
        said = params_in_name(str(details.get("parameter_size", "")))
        if said is not None:
            return said
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
Post = Callable[[str, dict[str, Any]], Any]


def probe(api_base: str, model: str, *, fetch: Fetch | None = None,
          post: Post | None = None) -> ServerInfo:
    """Ask the server at `api_base`; never raises for what the server does."""
    root = server_root(api_base)
    get = fetch or _http_get(root)
    answers: dict[str, Any] = {}
    for path in PROBES:
        answer = get(path)
        if answer is UNREACHABLE:
            break  # nothing listens: the run's own call will say so, with its hint
        if answer is not None:
            answers[path] = answer
    if isinstance(answers.get("/api/version"), Mapping):  # Ollama: ask about the model
        shown = (post or _http_post(root))(OLLAMA_SHOW, {"model": bare_name(model)})
        if isinstance(shown, Mapping):
            answers[OLLAMA_SHOW] = shown
    return identify(answers, model)


def bare_name(model: str) -> str:
    """The name a server knows a model by: `ollama/qwen2.5-coder:1.5b` → `qwen2.5-coder:1.5b`."""
    return model.split("/", 1)[1] if "/" in model else model


UNREACHABLE = object()


def _http_post(root: str) -> Post:
    def post(path: str, body: dict[str, Any]) -> Any:
        try:
            response = httpx.post(root + path, json=body, timeout=PROBE_TIMEOUT_S)
            return response.json() if response.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            return None

    return post


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
