"""A real HTTP server on 127.0.0.1 that speaks just enough of the OpenAI chat API.

Tests script it with a queue of behaviours (a normal reply, a 429 with Retry-After, a hang,
a truncated body...) and point litellm at it with ``model="openai/<name>"`` and
``api_base=server.api_base``. Every request that arrives is kept, so a test can assert how many
attempts the client made and what it sent. When the script runs out the server answers 500 and
counts an overrun, so an unexpected extra retry shows up as a failed assertion, not a hang.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

CHAT_PATH = "/v1/chat/completions"
COMPLETIONS_PATH = "/v1/completions"
# What llama-cpp-python's server (0.3.36) answers at its own paths: how the run's server
# probe (llm/server_probe.py) knows it. FakeOpenAIServer(identity=LLAMA_CPP_PYTHON) says so.
LLAMA_CPP_PYTHON = {
    "/v1/models": {"object": "list", "data": [{"id": "local", "object": "model",
                                               "owned_by": "me", "permissions": []}]},
    "/openapi.json": {"info": {"title": "🦙 llama.cpp Python API", "version": "0.3.36"},
                      "paths": {CHAT_PATH: {}, COMPLETIONS_PATH: {}}},
}


class Behaviour(Protocol):
    def respond(self, handler: _Handler) -> None: ...


@dataclass(frozen=True)
class Reply:
    """A normal chat completion with usage."""

    content: str = "ok"
    prompt_tokens: int | None = 11  # None: estimated from the request (4 characters a token)
    completion_tokens: int = 7
    model: str = "gpt-4o-mini-2024-07-18"
    finish_reason: str = "stop"

    def respond(self, handler: _Handler) -> None:
        reply = self
        if self.prompt_tokens is None:
            chars = sum(len(str(m.get("content", ""))) for m in handler.current_body.get(
                "messages", []))
            reply = dataclasses.replace(self, prompt_tokens=max(1, chars // 4))
        if handler.path == COMPLETIONS_PATH:
            handler.send_json(200, text_completion_body(reply))
            return
        handler.send_json(200, completion_body(reply))


@dataclass(frozen=True)
class Status:
    """An OpenAI-shaped error: 401, 429 (optionally with Retry-After), 500, 503..."""

    code: int
    retry_after: str | None = None
    message: str = "scripted failure"

    def respond(self, handler: _Handler) -> None:
        headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
        body = {"error": {"message": self.message, "type": "scripted", "code": str(self.code)}}
        handler.send_json(self.code, body, headers=headers)


@dataclass(frozen=True)
class Hang:
    """Say nothing for ``seconds`` (past the client's timeout), then close without replying."""

    seconds: float = 5.0

    def respond(self, handler: _Handler) -> None:
        # Waiting on the server's stop event, not time.sleep, lets stop() end the hang at once.
        handler.server_stopping.wait(self.seconds)
        handler.close_connection = True


@dataclass(frozen=True)
class Delayed:
    """Answer with ``then`` after ``seconds`` (a slow model, within the client's timeout)."""

    seconds: float
    then: Behaviour

    def respond(self, handler: _Handler) -> None:
        handler.server_stopping.wait(self.seconds)
        self.then.respond(handler)


@dataclass(frozen=True)
class Truncated:
    """Announce a full JSON body, send half of it, and hang up."""

    def respond(self, handler: _Handler) -> None:
        body = json.dumps(completion_body(Reply())).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[: len(body) // 2])
        handler.wfile.flush()
        handler.close_connection = True


@dataclass(frozen=True)
class NonJSON:
    """A 200 whose body is not JSON, as a misconfigured gateway sends."""

    body: str = "<html><body>Welcome to nginx!</body></html>"

    def respond(self, handler: _Handler) -> None:
        handler.send_raw(200, self.body.encode(), content_type="text/html")


@dataclass(frozen=True)
class EmptyChoices:
    """A well-formed completion with ``choices: []``."""

    def respond(self, handler: _Handler) -> None:
        body = completion_body(Reply())
        body["choices"] = []
        handler.send_json(200, body)


def completion_body(reply: Reply) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": reply.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": reply.prompt_tokens or 0,
            "completion_tokens": reply.completion_tokens,
            "total_tokens": (reply.prompt_tokens or 0) + reply.completion_tokens,
        },
    }


def text_completion_body(reply: Reply) -> dict[str, Any]:
    """/v1/completions's answer: the continuation as `text`, no message."""
    body = completion_body(reply)
    body["object"] = "text_completion"
    body["choices"] = [{"index": 0, "text": reply.content, "logprobs": None,
                        "finish_reason": reply.finish_reason}]
    return body


@dataclass(frozen=True)
class ReceivedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class _Script:
    behaviours: deque[Behaviour] = field(default_factory=deque)
    received: list[ReceivedRequest] = field(default_factory=list)
    overruns: int = 0
    refused: int = 0  # requests over the context window, refused (not from the script)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_for(self, request: ReceivedRequest) -> Behaviour | None:
        with self.lock:
            self.received.append(request)
            if self.behaviours:
                return self.behaviours.popleft()
            self.overruns += 1
            return None


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    current_body: dict[str, Any]

    @property
    def server_stopping(self) -> threading.Event:
        return self.server.stopping

    def do_GET(self) -> None:
        found = self.server.identity.get(self.path)
        if found is None:
            self.send_json(404, {"detail": "Not Found"})
            return
        self.send_json(200, found)

    def do_POST(self) -> None:
        request = self._read_request()
        if request.path not in (CHAT_PATH, COMPLETIONS_PATH):
            self.send_json(404, {"error": {"message": f"no route {request.path}"}})
            return
        self.current_body = request.body
        refusal = self.server.window.refusal(request.body) if self.server.window else None
        if refusal is not None:
            with self.server.script.lock:
                self.server.script.received.append(request)
                self.server.script.refused += 1
            self.send_json(400, refusal)
            return
        behaviour = self.server.script.next_for(request)
        if behaviour is None:
            self.send_json(500, {"error": {"message": "fake server: script exhausted"}})
            return
        behaviour.respond(self)

    def _read_request(self) -> ReceivedRequest:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length) if length else b"{}"
        headers = {key.lower(): value for key, value in self.headers.items()}
        return ReceivedRequest(path=self.path, headers=headers, body=json.loads(raw or b"{}"))

    def send_json(self, code: int, body: object, *, headers: dict[str, str] | None = None) -> None:
        self.send_raw(code, json.dumps(body).encode(), headers=headers)

    def send_raw(
        self,
        code: int,
        body: bytes,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        # One request per connection: a client in the test's own process (litellm keeps a
        # pool per API base) then holds no socket open to a server the test has stopped,
        # which the garbage collector would report in a later test as unclosed.
        self.send_header("Connection", "close")
        self.close_connection = True
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        # The default writes every request to stderr, which buries pytest's own output.
        return


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: _Script, identity: dict[str, Any],
                 window: ContextWindow | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.identity = identity
        self.window = window
        self.stopping = threading.Event()


@dataclass(frozen=True)
class ContextWindow:
    """A server's context window, as llama-cpp-python enforces it: a request whose prompt
    (counted at `chars_per_token`, fewer characters a token than selfcorrect's estimate
    takes, as a real tokenizer may on code) and max_tokens exceed `tokens` is refused with
    its 400, in OpenAI's words, before any scripted behaviour is used."""

    tokens: int
    chars_per_token: float = 2.5

    def refusal(self, body: dict[str, Any]) -> dict[str, Any] | None:
        text = body.get("prompt") or "".join(str(m.get("content", ""))
                                             for m in body.get("messages", []))
        prompt = int(len(str(text)) / self.chars_per_token) + 4 * len(body.get("messages", []))
        wanted = int(body.get("max_tokens") or 0)
        if prompt + wanted <= self.tokens:
            return None
        return {"error": {
            "message": f"This model's maximum context length is {self.tokens} tokens, however "
                       f"you requested {prompt + wanted} tokens ({prompt} in your prompt; "
                       f"{wanted} for the completion). Please reduce your prompt; or "
                       "completion length.",
            "type": "invalid_request_error", "param": "messages",
            "code": "context_length_exceeded"}}


class FakeOpenAIServer:
    """``with FakeOpenAIServer() as server: server.script(Reply(...), Status(429))``.

    ``identity``: GET path → JSON answer, as a particular server answers its own paths
    (LLAMA_CPP_PYTHON); every other GET is 404, as an unknown server's would be."""

    def __init__(self, identity: dict[str, Any] | None = None, *,
                 window: ContextWindow | None = None) -> None:
        self._identity = identity or {}
        self._window = window
        self._script = _Script()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeOpenAIServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        self._server = _Server(self._script, self._identity, self._window)
        # A short poll interval: shutdown() waits up to one interval, for every test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None

    def script(self, *behaviours: Behaviour) -> None:
        with self._script.lock:
            self._script.behaviours.extend(behaviours)

    @property
    def api_base(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    @property
    def requests(self) -> list[ReceivedRequest]:
        with self._script.lock:
            return list(self._script.received)

    @property
    def overruns(self) -> int:
        return self._script.overruns

    @property
    def refused(self) -> int:
        return self._script.refused

    @property
    def pending(self) -> int:
        with self._script.lock:
            return len(self._script.behaviours)
