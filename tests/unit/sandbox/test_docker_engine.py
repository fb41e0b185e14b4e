"""The one place docker SDK exceptions become ours: the rules, exception by exception."""

from __future__ import annotations

import contextlib
import gc
import http.server
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import docker
import pytest
import requests
from docker.errors import APIError, ImageNotFound, NotFound

from selfcorrect_action.errors import SandboxError, SandboxUnavailable, UsageError
from selfcorrect_action.sandbox.docker_engine import DockerEngine, connect, first_line, translated


def test_engine_not_answering_says_how_to_start_it() -> None:
    cause = requests.exceptions.ConnectionError("('Connection aborted.', FileNotFoundError(2))")
    with pytest.raises(SandboxUnavailable) as caught, translated("building img:1"):
        raise cause
    assert "building img:1" in caught.value.message
    assert caught.value.hint and ".ci/docker-up" in caught.value.hint
    assert caught.value.__cause__ is cause


def test_a_missing_image_says_to_build_it() -> None:
    """It used to be recognised by matching the text "No such image" in one module only."""
    with pytest.raises(SandboxUnavailable) as caught, translated("creating a container"):
        raise ImageNotFound("404 Client Error: No such image: selfcorrect-sandbox:0.1.0")
    assert caught.value.hint == "run `selfcorrect sandbox build`"


def test_an_unknown_runtime_says_how_to_register_it() -> None:
    with pytest.raises(SandboxUnavailable) as caught, translated("creating a container"):
        raise APIError("400 Client Error: unknown or invalid runtime name: runsc")
    assert caught.value.hint and "daemon.json" in caught.value.hint


@pytest.mark.parametrize(
    "cause",
    [
        APIError("500 Server Error: boom"),
        NotFound("no such container"),
        requests.exceptions.ReadTimeout(),
    ],
)
def test_other_engine_failures_become_sandbox_errors(cause: Exception) -> None:
    with pytest.raises(SandboxError) as caught, translated("importing x"):
        raise cause
    assert caught.value.message.startswith("Docker failed while importing x")
    assert caught.value.__cause__ is cause


def test_our_own_errors_pass_through() -> None:
    with pytest.raises(UsageError), translated("anything"):
        raise UsageError("mine")


def test_first_line_is_bounded() -> None:
    assert first_line(ValueError("a\nb")) == "a"
    assert first_line(ValueError("")) == "ValueError"
    assert len(first_line(ValueError("x" * 1000))) == 300


def test_an_engine_that_does_not_answer_leaves_no_descriptor_open(tmp_path: Path) -> None:
    """The SDK's half-made client and its socket were kept alive by the chained exception,
    to be found by the collector in some later test (where, on CPython 3.11, a collection
    inside ast.parse fails that parse)."""
    gc.collect()
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(SandboxUnavailable) as caught:
        connect({"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert "no Docker engine answers" in caught.value.message
    assert set(os.listdir("/proc/self/fd")) <= before


class _RefusingEngine(http.server.BaseHTTPRequestHandler):
    """A Docker engine on 127.0.0.1 that refuses the first `refusals` removals with dockerd's
    own 409, then removes (or answers 404 once `gone`)."""

    refusals = 0
    gone = False
    deletes: ClassVar[list[str]] = []

    def do_DELETE(self) -> None:
        type(self).deletes.append(self.path)
        if len(type(self).deletes) <= type(self).refusals:
            self._answer(409, {"message": "removal of container abc is already in progress"})
        elif type(self).gone:
            self._answer(404, {"message": "No such container: abc"})
        else:
            self._answer(204, None)

    def _answer(self, status: int, body: object) -> None:
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _refusing_engine(refusals: int, *, gone: bool = False) -> Iterator[tuple[DockerEngine,
                                                                             list[str]]]:
    handler: type[_RefusingEngine] = type(
        "Handler", (_RefusingEngine,), {"refusals": refusals, "gone": gone, "deletes": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client = docker.DockerClient(base_url=f"tcp://127.0.0.1:{server.server_address[1]}",
                                 version="1.41")
    try:
        yield DockerEngine(client), handler.deletes
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_a_refused_removal_is_tried_again_until_the_engine_removes_it() -> None:
    """A forced removal that dockerd refused once left the container behind, silently, until
    the reaper's next pass (a CI teardown found one)."""
    with _refusing_engine(refusals=2) as (engine, deletes):
        engine.remove("abc")
    assert len(deletes) == 3
    assert all(path.startswith("/v1.41/containers/abc?") and "force=True" in path
               for path in deletes)


def test_a_container_already_gone_counts_as_removed() -> None:
    with _refusing_engine(refusals=0, gone=True) as (engine, deletes):
        engine.remove("abc")
    assert len(deletes) == 1


def test_a_removal_refused_every_time_is_logged_with_the_engines_words(
        caplog: pytest.LogCaptureFixture) -> None:
    with _refusing_engine(refusals=99) as (engine, deletes), caplog.at_level(logging.WARNING):
        engine.remove("abc", attempts=3)
    assert len(deletes) == 3
    assert "refused to remove container abc 3 times" in caplog.text
    assert "already in progress" in caplog.text


def test_a_local_socket_skips_the_environments_proxy_and_netrc_lookups() -> None:
    """requests reads proxy variables and ~/.netrc at every call (a fifth of the host's CPU
    per execution); neither can apply to the engine's Unix socket, both may to TCP."""
    local = DockerEngine(docker.DockerClient(base_url="unix:///nonexistent.sock",
                                             version="1.41"))
    remote = DockerEngine(docker.DockerClient(base_url="tcp://127.0.0.1:1", version="1.41"))
    try:
        assert local.client.api.trust_env is False
        assert remote.client.api.trust_env is True
    finally:
        local.close()
        remote.close()
