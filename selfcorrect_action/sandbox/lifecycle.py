"""One sandbox container from creation to removal: created, attached, started (so it waits
in the runner for its single request), then destroyed. Engine calls for containers live
here, over the Engine interface."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from selfcorrect_action.sandbox.config import PoolKey, container_config
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.wire import AttachStream

# Expiry margin on top of the idle timeout, for the orphan reaper.
_EXPIRY_MARGIN_S = 120.0


@dataclass
class Prepared:
    key: PoolKey
    engine: Engine
    container_id: str
    stream: AttachStream
    created_at: float = field(default_factory=time.monotonic)
    idle_timeout_s: float = 600.0
    # What its warm interpreter imports while it waits; None: it has none.
    preload: tuple[str, ...] | None = None

    def expired(self, now: float | None = None) -> bool:
        """A pooled container whose runner is about to give up waiting is not worth using."""
        now = time.monotonic() if now is None else now
        return now - self.created_at > self.idle_timeout_s * 0.8


def prepare(engine: Engine, key: PoolKey, *, session: str, owner: str,
            idle_timeout_s: float, preload: tuple[str, ...] | None = None) -> Prepared:
    config = container_config(
        key, session=session, owner=owner,
        expires_at=time.time() + idle_timeout_s + _EXPIRY_MARGIN_S,
        idle_timeout_s=idle_timeout_s, preload=preload,
    )
    started = engine.start_container(config)
    return Prepared(key, engine, started.id, AttachStream(started.socket),
                    idle_timeout_s=idle_timeout_s, preload=preload)


def destroy(prepared: Prepared) -> None:
    prepared.stream.close()
    prepared.engine.remove(prepared.container_id)


def kill(prepared: Prepared) -> None:
    prepared.engine.kill(prepared.container_id)


def oom_killed(prepared: Prepared, *, wait_s: float = 10.0) -> bool:
    """Docker's own verdict, read after the container has stopped (we kill it first)."""
    kill(prepared)
    return bool(container_state(prepared, wait_s=wait_s).get("OOMKilled"))


def container_state(prepared: Prepared, *, wait_s: float = 10.0) -> dict[str, Any]:
    return prepared.engine.stopped_state(prepared.container_id, wait_s=wait_s)
