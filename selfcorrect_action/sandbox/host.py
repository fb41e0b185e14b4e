"""What both sandboxes share: an engine and an image, a pool of pre-started containers, a
worker pool that removes used containers off the critical path, and one runtime check per
runtime. `Sandbox` (one execution per container) and `BatchSandbox` (many per
container) differ only in how they make a container and what they do with it.

Constructing one does no I/O; `start()` connects, reaps orphans left by crashed runs, and
`close()` waits for background removals. Use it as a context manager.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, wait
from types import TracebackType
from typing import Self

from selfcorrect_action.choices import Runtime
from selfcorrect_action.sandbox import engine as engine_checks
from selfcorrect_action.sandbox import lifecycle
from selfcorrect_action.sandbox.config import PoolKey
from selfcorrect_action.sandbox.engine_api import Engine
from selfcorrect_action.sandbox.lifecycle import Prepared
from selfcorrect_action.sandbox.models import Limits
from selfcorrect_action.sandbox.pool import WarmPool


class ContainerHost:
    thread_name_prefix = "sandbox"

    def __init__(self, engine: Engine, image: str, *, pool_size: int = 0,
                 max_workers: int = 4) -> None:
        self._engine = engine
        self._image = image
        self._pool_size = pool_size
        self._max_workers = max_workers
        self.session = uuid.uuid4().hex[:12]
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self._executor: ThreadPoolExecutor | None = None
        self._pool: WarmPool[Prepared] | None = None
        self._lock = threading.Lock()
        self._checked_runtimes: set[str] = set()
        self._background: set[Future[None]] = set()

    def start(self) -> Self:
        engine_checks.reap_orphans(self._engine)
        self._executor = ThreadPoolExecutor(self._max_workers,
                                            thread_name_prefix=self.thread_name_prefix)
        if self._pool_size > 0:
            self._pool = WarmPool(self._make_pooled, lifecycle.destroy, size=self._pool_size,
                                  executor=self._executor, make_now=self._make_cold)
        return self

    def key(self, limits: Limits, runtime: Runtime = "runc", *, boundary: bool = False
            ) -> PoolKey:
        return PoolKey(image=self._image, runtime=runtime, limits=limits, boundary=boundary)

    def warm(self, limits: Limits, runtime: Runtime = "runc", *, boundary: bool = False
             ) -> None:
        """Pre-start containers for these limits (no-op without a pool)."""
        if self._pool is not None:
            self._require_runtime(runtime)
            self._pool.warm(self.key(limits, runtime, boundary=boundary))

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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _acquire(self, key: PoolKey, *, refill: bool = True) -> Prepared:
        return self._pool.acquire(key, refill=refill) if self._pool else self._make_cold(key)

    def _refill_pool(self, key: PoolKey) -> None:
        if self._pool is not None:
            self._pool.warm(key)

    def _make_pooled(self, key: PoolKey) -> Prepared:
        """A container that may wait in the pool for its request."""
        raise NotImplementedError

    def _make_cold(self, key: PoolKey) -> Prepared:
        """A container used right away (no pool)."""
        return self._make_pooled(key)

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

    def _require_runtime(self, runtime: str) -> None:
        with self._lock:
            if runtime in self._checked_runtimes:
                return
        engine_checks.require_runtime(self._engine, runtime)
        with self._lock:
            self._checked_runtimes.add(runtime)
