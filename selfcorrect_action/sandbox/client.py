"""The sandbox as the rest of selfcorrect sees it: `Sandbox.run(request, artifact_dir)`.

Constructing a Sandbox does no I/O; `start()` connects, reaps orphans left by crashed runs,
and `close()` waits for background removals. Use it as a context manager.
"""

from __future__ import annotations

import threading
from pathlib import Path

from selfcorrect_action.errors import SandboxError
from selfcorrect_action.sandbox import lifecycle
from selfcorrect_action.sandbox.config import PoolKey
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.execution import execute
from selfcorrect_action.sandbox.host import ContainerHost
from selfcorrect_action.sandbox.lifecycle import Prepared
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult

# How long a pre-started container waits for its request before its runner gives up.
POOL_IDLE_TIMEOUT_S = 300.0
# A container that runs one execution right away only waits out the request transfer.
COLD_IDLE_TIMEOUT_S = 60.0


class Sandbox(ContainerHost):
    """`run(request, artifact_dir)`: one execution in a container of its own. `stop()`,
    from another thread, ends the executions in progress and refuses the ones to come."""

    def __init__(self, engine: Engine, image: str, *, pool_size: int = 0,
                 max_workers: int = 4) -> None:
        super().__init__(engine, image, pool_size=pool_size, max_workers=max_workers)
        self._running: set[str] = set()  # ids of the containers executing a request now
        self._running_lock = threading.Lock()
        self._stopped = False

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        self._refuse_if_stopped()
        self._require_runtime(request.runtime, request.limits.network)
        prepared = self._acquire(self.key(request.limits, request.runtime,
                                          boundary=request.boundary is not None))
        try:
            with self._running_lock:
                self._running.add(prepared.container_id)
            # A stop that came while the container was being made found nothing to kill.
            self._refuse_if_stopped()
            return execute(prepared, request, artifact_dir)
        finally:
            with self._running_lock:
                self._running.discard(prepared.container_id)
            self._teardown(prepared)

    def stop(self) -> None:
        """SIGKILL the containers whose scripts are running now (a cancelled run must not
        wait out a script's timeout), and refuse every later execution: each `run` in
        progress returns early with what its killed runner left (its container removed as
        always), each later one raises SandboxError."""
        with self._running_lock:
            self._stopped = True
            running = list(self._running)
        for container_id in running:
            self._engine.kill(container_id)

    def _refuse_if_stopped(self) -> None:
        with self._running_lock:
            if self._stopped:
                raise SandboxError("the sandbox was stopped: it runs no more scripts",
                                   hint="a stopped sandbox belongs to a cancelled run")

    def _make_cold(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=COLD_IDLE_TIMEOUT_S)

    def _make_pooled(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=POOL_IDLE_TIMEOUT_S)
