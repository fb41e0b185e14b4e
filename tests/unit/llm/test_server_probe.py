"""Telling OpenAI-compatible servers apart, from the answers each gives at a path of its
own; and the probe over real HTTP against a stand-in on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from selfcorrect_action.llm.server_probe import (
    UNREACHABLE,
    identify,
    params_in_name,
    probe,
    server_root,
)

LLAMA_CPP_PYTHON = {
    "/v1/models": {"object": "list", "data": [{"id": "smollm2", "object": "model",
                                               "owned_by": "me", "permissions": []}]},
    "/openapi.json": {"info": {"title": "🦙 llama.cpp Python API", "version": "0.3.36"},
                      "paths": {"/v1/completions": {}, "/v1/chat/completions": {}}},
}


@pytest.mark.parametrize(("answers", "kind", "structured", "completions"), [
    (LLAMA_CPP_PYTHON, "llama-cpp-python", "json-object-schema", True),
    ({"/props": {"default_generation_settings": {}, "model_path": "/m/qwen2.5-0.5b.gguf"}},
     "llama.cpp", "json-schema", True),
    ({"/v1/models": {"data": [{"id": "x", "owned_by": "llamacpp"}]}}, "llama.cpp",
     "json-schema", True),
    ({"/api/version": {"version": "0.5.7"}}, "ollama", "json-schema", True),
    ({"/v1/models": {"data": [{"id": "Qwen/Qwen2.5-7B", "owned_by": "vllm"}]},
      "/version": {"version": "0.6.3"}}, "vllm", "json-schema", True),
    ({"/api/v0/models": {"data": []}}, "lm-studio", "json-schema", True),
    ({"/v1/models": {"data": [{"id": "gpt-4o", "owned_by": "openai"}]}}, "unknown", None,
     False),
    ({}, "unknown", None, False),
])
def test_each_server_is_told_by_its_own_answer(answers: dict[str, Any], kind: str,
                                               structured: str | None,
                                               completions: bool) -> None:
    info = identify(answers, "openai/local")
    assert (info.kind, info.structured_output, info.completions) == (
        kind, structured, completions)


def test_a_models_size_is_read_from_its_name_where_the_server_shows_it() -> None:
    assert params_in_name("openai/SmolLM2-135M-Instruct") == 135_000_000
    assert params_in_name("ollama/qwen2.5-coder:1.5b") == 1_500_000_000
    assert params_in_name("openai/Qwen/Qwen2.5-7B-Instruct") == 7_000_000_000
    assert params_in_name("openai/gpt-4o-mini") is None
    assert params_in_name("openai/smollm2") is None  # an alias says nothing
    props = {"/props": {"model_path": "/models/Llama-3.2-3B-Instruct-Q4.gguf"}}
    assert identify(props, "openai/local").model_params == 3_000_000_000


def test_what_a_server_is_reads_in_one_line() -> None:
    info = identify(LLAMA_CPP_PYTHON, "openai/SmolLM2-135M")
    assert info.described() == ("llama-cpp-python 0.3.36, structured output "
                                "json-object-schema, /v1/completions served, a model of 135M "
                                "parameters")
    assert identify({}, "m").described() == "an unrecognised OpenAI-compatible server"


def test_the_probe_stops_at_once_when_nothing_listens() -> None:
    asked: list[str] = []

    def fetch(path: str) -> Any:
        asked.append(path)
        return UNREACHABLE

    assert probe("http://127.0.0.1:9/v1", "m", fetch=fetch).kind == "unknown"
    assert asked == ["/v1/models"]


def test_the_root_is_the_api_base_without_its_version() -> None:
    assert server_root("http://127.0.0.1:8765/v1/") == "http://127.0.0.1:8765"
    assert server_root("https://gw.example/llm") == "https://gw.example/llm"


class _Answers(BaseHTTPRequestHandler):
    answers: dict[str, Any] = LLAMA_CPP_PYTHON

    def do_GET(self) -> None:
        found = self.answers.get(self.path)
        body = json.dumps(found).encode() if found is not None else b'{"detail":"Not Found"}'
        self.send_response(200 if found is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def llama_like() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_a_real_http_probe_finds_llama_cpp_pythons_server(llama_like: str) -> None:
    info = probe(llama_like, "openai/smollm2")
    assert (info.kind, info.version, info.structured_output) == (
        "llama-cpp-python", "0.3.36", "json-object-schema")


def test_servers_say_their_context_window_and_model_size_where_they_can() -> None:
    """Issue 38: llama.cpp's /props n_ctx and /v1/models meta.n_params (under any alias),
    vLLM's max_model_len, Ollama's /api/show (num_ctx, else its default; the parameter
    size); llama-cpp-python says neither under an alias."""
    llama_cpp = {"/props": {"default_generation_settings": {"n_ctx": 4096},
                            "model_path": "/m/model.gguf"},
                 "/v1/models": {"data": [{"id": "local", "owned_by": "llamacpp",
                                          "meta": {"n_params": 134_515_008,
                                                   "n_ctx_train": 8192}}]}}
    info = identify(llama_cpp, "openai/local")
    assert (info.context_tokens, info.model_params) == (4096, 134_515_008)
    assert "a context window of 4,096 tokens" in info.described()
    vllm = {"/v1/models": {"data": [{"id": "q", "owned_by": "vllm", "max_model_len": 32768}]}}
    assert identify(vllm, "openai/q").context_tokens == 32768
    shown = {"details": {"parameter_size": "494.03M"}, "parameters": "num_ctx 8192\nstop x"}
    ollama = {"/api/version": {"version": "0.6.1"}, "/api/show": shown}
    info = identify(ollama, "ollama/qwen2.5:0.5b")
    assert (info.context_tokens, info.model_params) == (8192, 494_030_000)
    unset = {"/api/version": {"version": "0.6.1"}, "/api/show": {"parameters": ""}}
    assert identify(unset, "ollama/x").context_tokens == 2048
    aliased = identify(LLAMA_CPP_PYTHON, "openai/smollm2")
    assert (aliased.context_tokens, aliased.model_params) == (None, None)


def test_ollama_is_asked_about_the_model_by_its_own_name() -> None:
    posted: list[tuple[str, dict[str, Any]]] = []

    def fetch(path: str) -> Any:
        return {"version": "0.6.1"} if path == "/api/version" else None

    def post(path: str, body: dict[str, Any]) -> Any:
        posted.append((path, body))
        return {"details": {"parameter_size": "135M"}, "parameters": "num_ctx 4096"}

    info = probe("http://127.0.0.1:11434/v1", "ollama/smollm2:135m", fetch=fetch, post=post)
    assert posted == [("/api/show", {"model": "smollm2:135m"})]
    assert (info.kind, info.context_tokens, info.model_params) == (
        "ollama", 4096, 135_000_000)


def test_a_refusal_says_the_window_and_the_prompt_it_counted() -> None:
    from selfcorrect_action.llm.context_window import (
        is_context_refusal,
        prompt_tokens_in,
        window_in,
    )

    openai_words = ("This model's maximum context length is 4096 tokens, however you "
                    "requested 5000 tokens (4200 in your prompt; 800 for the completion).")
    assert (window_in(openai_words), prompt_tokens_in(openai_words)) == (4096, 4200)
    library = "Requested tokens (5000) exceed context window of 4096"
    assert (window_in(library), prompt_tokens_in(library)) == (4096, 5000)
    server = "the request exceeds the available context size (8192 tokens)"
    assert window_in(server) == 8192
    assert is_context_refusal(server) and is_context_refusal(openai_words)
    assert not is_context_refusal("model 'x' not found")
    assert window_in("context length exceeded") is None
