"""The seam to the Docker engine: connecting, checking runtimes, reaping orphans.

docker SDK exceptions stop here and become SandboxUnavailable or SandboxError."""

from __future__ import annotations

import time
from collections.abc import Mapping

import docker
from docker.errors import APIError, DockerException

from selfcorrect_action.errors import SandboxUnavailable, UsageError
from selfcorrect_action.sandbox.config import LABEL, LABEL_EXPIRES
from selfcorrect_action.sandbox.models import MAX_TIMEOUT_S

# How long past its expiry a running container may still be doing legitimate work: the
# longest script, then the kill grace and the artifact transfer, with room to spare.
RUNNING_GRACE_S = MAX_TIMEOUT_S + 600.0

START_DOCKER_HINT = (
    "start a Docker engine: `sudo systemctl start docker`, or on a machine without systemd "
    "`bash .ci/docker-up` from the selfcorrect checkout (installs docker.io and runsc if needed); "
    "set DOCKER_HOST if the engine listens elsewhere"
)


def connect(environ: Mapping[str, str] | None = None) -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (or the default socket) that answers."""
    try:
        client = docker.from_env(environment=dict(environ) if environ is not None else None)
        client.ping()
    except DockerException as exc:
        raise SandboxUnavailable(
            f"no Docker engine answers: {_short(exc)}", hint=START_DOCKER_HINT
        ) from exc
    return client


def require_runtime(client: docker.DockerClient, runtime: str, *, network: str = "none") -> None:
    try:
        runtimes = client.info().get("Runtimes", {})
    except DockerException as exc:
        raise SandboxUnavailable(f"cannot query the Docker engine: {_short(exc)}") from exc
    args = (runtimes.get(runtime) or {}).get("runtimeArgs") or []
    if network == "open" and "--network=none" in args:
        raise UsageError(
            f"the contract asks for `network: open`, but the {runtime} runtime is registered "
            "with --network=none, so the script would have no network at all",
            hint="use --runtime runc for tasks that need the network",
        )
    if runtime not in runtimes:
        raise SandboxUnavailable(
            f"the Docker engine has no runtime {runtime!r} (it has: {', '.join(sorted(runtimes))})",
            hint="install gVisor (`apt-get install runsc`) and register it in "
            "/etc/docker/daemon.json with runtimeArgs [\"--network=none\"], then reload dockerd "
            "(`bash .ci/docker-up` does both); or use --runtime runc",
        )


def reap_orphans(client: docker.DockerClient, *, now: float | None = None) -> int:
    """Remove sandbox containers left by a run that crashed or was killed before it could
    clean up. The expiry label is set at creation, before anyone knows how long the script
    will run, so it only covers a container waiting for its request: one still running
    may be executing another run's script (of any session on this engine) and is removed
    only once even the longest execution would be over. Left alone, such a container ends
    by itself anyway: its runner stops the script at its deadline, and a waiting one exits
    when its attach socket closes."""
    now = time.time() if now is None else now
    removed = 0
    try:
        containers = client.containers.list(all=True, filters={"label": LABEL})
    except DockerException:
        return 0
    for container in containers:
        grace = RUNNING_GRACE_S if container.status == "running" else 0.0
        if _expires(container.labels) + grace < now:
            try:
                container.remove(force=True)
                removed += 1
            except APIError:
                continue
    return removed


def _expires(labels: Mapping[str, str]) -> float:
    try:
        return float(labels.get(LABEL_EXPIRES, "0"))
    except ValueError:
        return 0.0


def _short(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
