"""What selfcorrect checks and tidies on the engine, over the Engine interface: connecting,
that a runtime is registered the way the contract needs it, and reaping orphans."""

from __future__ import annotations

import time
from collections.abc import Mapping

from selfcorrect_action.choices import MAX_TIMEOUT_S
from selfcorrect_action.errors import SandboxUnavailable
from selfcorrect_action.sandbox.config import LABEL, LABEL_EXPIRES, LABEL_SESSION
from selfcorrect_action.sandbox.docker_engine import RUNSC_HINT, DockerEngine
from selfcorrect_action.sandbox.docker_engine import connect as _connect_docker
from selfcorrect_action.sandbox.engine_api import Engine

# How long past its expiry a running container may still be doing legitimate work: the
# longest script, then the kill grace and the artifact transfer, with room to spare.
RUNNING_GRACE_S = MAX_TIMEOUT_S + 600.0


def connect(environ: Mapping[str, str] | None = None) -> DockerEngine:
    """The Docker engine named by DOCKER_HOST (or the default socket), once it answers."""
    return _connect_docker(environ)


def require_runtime(engine: Engine, runtime: str) -> None:
    """The runtime is registered. Its runtimeArgs do not matter: every container has
    network_mode=none, and the network a contract asks for goes through the egress tunnel
    over the attach stream, so a runsc registered with --network=none serves it too."""
    runtimes = engine.runtimes()
    if runtime not in runtimes:
        raise SandboxUnavailable(
            f"the Docker engine has no runtime {runtime!r} (it has: {', '.join(sorted(runtimes))})",
            hint=RUNSC_HINT,
        )


def reap_orphans(engine: Engine, *, now: float | None = None,
                 session: str | None = None) -> int:
    """Remove sandbox containers left by a run that crashed or was killed before it could
    clean up. The expiry label is set at creation, before anyone knows how long the script
    will run, so it only covers a container waiting for its request: one still running
    may be executing another run's script (of any session on this engine) and is removed
    only once even the longest execution would be over. Left alone, such a container ends
    by itself anyway: its runner stops the script at its deadline, and a waiting one exits
    when its attach socket closes. `session`: only that session's containers (a test that
    moves the clock on must not take other runs' containers on a shared engine)."""
    now = time.time() if now is None else now
    removed = 0
    for container in engine.labelled(LABEL):
        if session is not None and container.labels.get(LABEL_SESSION) != session:
            continue
        grace = RUNNING_GRACE_S if container.status == "running" else 0.0
        if _expires(container.labels) + grace < now:
            engine.remove(container.id)
            removed += 1
    return removed


def _expires(labels: Mapping[str, str]) -> float:
    try:
        return float(labels.get(LABEL_EXPIRES, "0"))
    except ValueError:
        return 0.0
