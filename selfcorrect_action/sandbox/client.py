"""The sandbox as the rest of selfcorrect sees it: `Sandbox.run(request, artifact_dir)`.

Constructing a Sandbox does no I/O; `start()` connects, reaps orphans left by crashed runs,
and `close()` waits for background removals. Use it as a context manager.
"""

from __future__ import annotations

from pathlib import Path

from selfcorrect_action.sandbox import lifecycle
from selfcorrect_action.sandbox.config import PoolKey
from selfcorrect_action.sandbox.execution import execute
from selfcorrect_action.sandbox.host import ContainerHost
from selfcorrect_action.sandbox.lifecycle import Prepared
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult

# How long a pre-started container waits for its request before its runner gives up.
POOL_IDLE_TIMEOUT_S = 300.0
# A container that runs one execution right away only waits out the request transfer.
COLD_IDLE_TIMEOUT_S = 60.0


class Sandbox(ContainerHost):
    """`run(request, artifact_dir)`: one execution in a container of its own."""

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        self._require_runtime(request.runtime, request.limits.network)
        prepared = self._acquire(self.key(request.limits, request.runtime,
                                          boundary=request.boundary is not None))
        try:
            return execute(prepared, request, artifact_dir)
        finally:
            self._teardown(prepared)

    def _make_cold(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=COLD_IDLE_TIMEOUT_S)

    def _make_pooled(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=POOL_IDLE_TIMEOUT_S)
