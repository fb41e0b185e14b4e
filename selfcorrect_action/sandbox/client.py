"""The sandbox as the rest of selfcorrect sees it: `Sandbox.run(request, artifact_dir)`.

Constructing a Sandbox does no I/O; `start()` connects, reaps orphans left by crashed runs,
and `close()` waits for background removals. Use it as a context manager.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from types import TracebackType

from selfcorrect_action.sandbox import engine as engine_checks
from selfcorrect_action.sandbox import lifecycle
from selfcorrect_action.sandbox.config import PoolKey
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.execution import execute
from selfcorrect_action.sandbox.lifecycle import Prepared
from selfcorrect_action.sandbox.models import ExecutionRequest, ExecutionResult, Limits, Runtime
from selfcorrect_action.sandbox.pool import WarmPool

# How long a pre-started container waits for its request before its runner gives up.
POOL_IDLE_TIMEOUT_S = 300.0
# A container that runs one execution right away only waits out the request transfer.
COLD_IDLE_TIMEOUT_S = 60.0


class Sandbox:
    def __init__(
        self,
        engine: Engine,
        image: str,
        *,
        pool_size: int = 0,
        max_workers: int = 4,
    ) -> None:
        self._engine = engine
        self._image = image
        self._pool_size = pool_size
        self._max_workers = max_workers
        self.session = uuid.uuid4().hex[:12]
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self._executor: ThreadPoolExecutor | None = None
        self._pool: WarmPool | None = None
        self._lock = threading.Lock()
        self._checked_runtimes: set[tuple[str, str]] = set()
        self._background: set[Future[None]] = set()

    def start(self) -> Sandbox:
        engine_checks.reap_orphans(self._engine)
        self._executor = ThreadPoolExecutor(self._max_workers, thread_name_prefix="sandbox")
        if self._pool_size > 0:
            self._pool = WarmPool(
                self._make_pooled, lifecycle.destroy, size=self._pool_size,
                executor=self._executor,
            )
        return self

    def key(self, limits: Limits, runtime: Runtime = "runc") -> PoolKey:
        return PoolKey(image=self._image, runtime=runtime, limits=limits)

    def warm(self, limits: Limits, runtime: Runtime = "runc") -> None:
        """Pre-start containers for these limits (no-op without a pool)."""
        if self._pool is not None:
            self._require_runtime(runtime, limits.network)
            self._pool.warm(self.key(limits, runtime))

    def run(self, request: ExecutionRequest, artifact_dir: Path) -> ExecutionResult:
        self._require_runtime(request.runtime, request.limits.network)
        key = self.key(request.limits, request.runtime)
        prepared = self._pool.acquire(key) if self._pool else self._make_cold(key)
        try:
            return execute(prepared, request, artifact_dir)
        finally:
            self._teardown(prepared)

    def settle(self, timeout_s: float = 60.0) -> None:
        """Wait until background removals and pool refills are done. The loop never needs
        this (an LLM call separates executions); benchmarks and tests do."""
        with self._lock:
            pending = set(self._background)
        wait(pending, timeout=timeout_s)
        if self._pool is not None:
            self._pool.settle(timeout_s)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _make_cold(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=COLD_IDLE_TIMEOUT_S)

    def _make_pooled(self, key: PoolKey) -> Prepared:
        return lifecycle.prepare(self._engine, key, session=self.session, owner=self.owner,
                                 idle_timeout_s=POOL_IDLE_TIMEOUT_S)

    def _teardown(self, prepared: Prepared) -> None:
        if self._executor is None:
            lifecycle.destroy(prepared)
            return
        future = self._executor.submit(lifecycle.destroy, prepared)
        with self._lock:
            self._background.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[None]) -> None:
        with self._lock:
            self._background.discard(future)

    def _require_runtime(self, runtime: str, network: str) -> None:
        with self._lock:
            if (runtime, network) in self._checked_runtimes:
                return
        engine_checks.require_runtime(self._engine, runtime, network=network)
        with self._lock:
            self._checked_runtimes.add((runtime, network))
