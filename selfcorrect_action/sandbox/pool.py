"""Pre-started containers, so container start-up is off the critical path.

Each container serves exactly one execution and is then destroyed; the pool refills in the
background. Containers are grouped by PoolKey (image, runtime, limits): an execution only
ever gets a container created for exactly its limits.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, Protocol, TypeVar

from selfcorrect_action.sandbox.config import PoolKey

# How long an acquire waits for a container already being made before making its own.
PENDING_WAIT_S = 30.0


class Expiring(Protocol):
    """All the pool asks of what it holds (lifecycle.Prepared, or a test's stand-in)."""

    def expired(self) -> bool: ...


P = TypeVar("P", bound=Expiring)


class WarmPool(Generic[P]):
    def __init__(
        self, factory: Callable[[PoolKey], P], destroy: Callable[[P], None], *, size: int,
        executor: ThreadPoolExecutor, make_now: Callable[[PoolKey], P] | None = None
    ) -> None:
        self._factory = factory
        # For an acquire that finds nothing ready: a container used at once has no time to
        # warm anything up, so it may be made differently (without preloads).
        self._make_now = make_now or factory
        self._destroy = destroy
        self._size = size
        self._executor = executor
        self._ready: dict[PoolKey, deque[P]] = defaultdict(deque)
        self._pending: dict[PoolKey, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._filled = threading.Condition(self._lock)  # a fill ended (made or failed)
        self._closed = False
        self.errors: list[BaseException] = []

    def warm(self, key: PoolKey) -> None:
        """Start filling the pool for `key` up to its size, in the background."""
        with self._lock:
            missing = self._size - len(self._ready[key]) - self._pending[key]
            if self._closed or missing <= 0:
                return
            self._pending[key] += missing
        for _ in range(missing):
            self._executor.submit(self._fill_one, key)

    def acquire(self, key: PoolKey, *, refill: bool = True) -> P:
        """A started container for `key`: a warm one if there is one, else made now.
        `refill=False`: the caller calls warm(key) itself, later (once its script has run,
        so the next container's start and imports do not take its CPU)."""
        prepared = self._pop_fresh(key)
        if prepared is None:
            prepared = self._await_pending(key)
        if refill:
            self.warm(key)
        return prepared if prepared is not None else self._make_now(key)

    def _await_pending(self, key: PoolKey, timeout_s: float = PENDING_WAIT_S) -> P | None:
        """A container already being made for `key`, once it is ready: making another one
        beside it now would only slow both down (each start is mostly the engine's CPU)."""
        deadline = time.monotonic() + timeout_s
        with self._filled:
            while self._pending[key] > 0 and not self._ready[key] and not self._closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._filled.wait(left)
        return self._pop_fresh(key)

    def settle(self, timeout_s: float) -> None:
        """Wait until no refill is pending."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if not any(self._pending.values()):
                    return
            time.sleep(0.01)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._filled.notify_all()
            leftovers = [p for queue in self._ready.values() for p in queue]
            self._ready.clear()
        for prepared in leftovers:
            self._destroy(prepared)

    def _pop_fresh(self, key: PoolKey) -> P | None:
        stale: list[P] = []
        found: P | None = None
        with self._lock:
            queue = self._ready[key]
            while queue and found is None:
                candidate = queue.popleft()
                if candidate.expired():
                    stale.append(candidate)
                else:
                    found = candidate
        for prepared in stale:
            self._executor.submit(self._destroy, prepared)
        return found

    def _fill_one(self, key: PoolKey) -> None:
        try:
            prepared = self._factory(key)
        except BaseException as exc:  # kept for the caller: a refill failure must not vanish
            with self._lock:
                self._pending[key] -= 1
                self.errors.append(exc)
                self._filled.notify_all()
            return
        with self._lock:
            self._pending[key] -= 1
            self._filled.notify_all()
            if not self._closed:
                self._ready[key].append(prepared)
                return
        self._destroy(prepared)


