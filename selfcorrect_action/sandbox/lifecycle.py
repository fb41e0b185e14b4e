"""One sandbox container from creation to removal: created, attached, started (so it waits
in the runner for its single request), then destroyed. Docker calls live here."""

from __future__ import annotations

import contextlib
import socket
import time
from dataclasses import dataclass, field

import docker
import requests
from docker.errors import DockerException
from docker.models.containers import Container

from selfcorrect_action.errors import SandboxError, SandboxUnavailable
from selfcorrect_action.sandbox.config import PoolKey, container_config
from selfcorrect_action.sandbox.wire import AttachStream

_ATTACH = {"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
# The SDK raises requests' own exceptions (not DockerException) when the engine is slow to
# answer, e.g. while gVisor tears down a sandbox holding a million files.
_ENGINE_ERRORS = (DockerException, requests.RequestException)
# Expiry margin on top of the idle timeout, for the orphan reaper.
_EXPIRY_MARGIN_S = 120.0


@dataclass
class Prepared:
    key: PoolKey
    container: Container
    stream: AttachStream
    created_at: float = field(default_factory=time.monotonic)
    idle_timeout_s: float = 600.0

    def expired(self, now: float | None = None) -> bool:
        """A pooled container whose runner is about to give up waiting is not worth using."""
        now = time.monotonic() if now is None else now
        return now - self.created_at > self.idle_timeout_s * 0.8


def prepare(
    client: docker.DockerClient, key: PoolKey, *, session: str, idle_timeout_s: float
) -> Prepared:
    config = container_config(
        key,
        session=session,
        expires_at=time.time() + idle_timeout_s + _EXPIRY_MARGIN_S,
        idle_timeout_s=idle_timeout_s,
    )
    try:
        container = client.containers.create(**config)
    except _ENGINE_ERRORS as exc:
        raise _translate(exc, "create a sandbox container") from exc
    try:
        raw = container.attach_socket(params=_ATTACH)
        sock: socket.socket = getattr(raw, "_sock", raw)
        container.start()
    except _ENGINE_ERRORS as exc:
        _remove_quietly(container)
        raise _translate(exc, "start a sandbox container") from exc
    return Prepared(key, container, AttachStream(sock), idle_timeout_s=idle_timeout_s)


def destroy(prepared: Prepared) -> None:
    prepared.stream.close()
    _remove_quietly(prepared.container)


def kill(prepared: Prepared) -> None:
    with contextlib.suppress(*_ENGINE_ERRORS):
        prepared.container.kill()


def oom_killed(prepared: Prepared, *, wait_s: float = 10.0) -> bool:
    """Docker's own verdict, read after the container has stopped (we kill it first)."""
    kill(prepared)
    try:
        prepared.container.wait(timeout=wait_s)
        prepared.container.reload()
    except Exception:  # the wait times out through requests; any failure means "unknown"
        return False
    return bool(prepared.container.attrs.get("State", {}).get("OOMKilled"))


def container_state(prepared: Prepared, *, wait_s: float = 10.0) -> dict:
    try:
        prepared.container.wait(timeout=wait_s)
        prepared.container.reload()
    except Exception:
        return {}
    return dict(prepared.container.attrs.get("State", {}))


def _remove_quietly(container: Container) -> None:
    with contextlib.suppress(*_ENGINE_ERRORS):
        container.remove(force=True)


def _translate(exc: Exception, doing: str) -> Exception:
    text = str(exc)
    if "No such image" in text or ("not found" in text.lower() and "image" in text.lower()):
        return SandboxUnavailable(
            f"cannot {doing}: the sandbox image is missing ({text[:200]})",
            hint="run `selfcorrect sandbox build`",
        )
    if "runtime" in text.lower() and "unknown" in text.lower():
        return SandboxUnavailable(f"cannot {doing}: {text[:300]}",
                                  hint="register runsc with the engine (`bash .ci/docker-up`)")
    return SandboxError(f"cannot {doing}: {text[:300]}")
