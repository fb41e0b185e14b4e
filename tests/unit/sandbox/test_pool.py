"""The warm pool without an engine: a factory and a destroyer that record what they do."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

from selfcorrect_action.sandbox.config import PoolKey
from selfcorrect_action.sandbox.models import Limits
from selfcorrect_action.sandbox.pool import WarmPool

KEY = PoolKey(image="img", runtime="runc", limits=Limits())
OTHER = PoolKey(image="img", runtime="runc", limits=Limits(memory_mb=1024))


@dataclass
class Item:
    key: PoolKey
    number: int
    stale: bool = False

    def expired(self) -> bool:
        return self.stale


@dataclass
class Recorder:
    made: list[Item] = field(default_factory=list)
    destroyed: list[Item] = field(default_factory=list)
    fail: bool = False
    counter: itertools.count[int] = field(default_factory=itertools.count)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def factory(self, key: PoolKey) -> Item:
        if self.fail:
            raise RuntimeError("engine gone")
        with self.lock:
            item = Item(key, next(self.counter))
            self.made.append(item)
        return item

    def destroy(self, item: Item) -> None:
        with self.lock:
            self.destroyed.append(item)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def pool(recorder: Recorder) -> Iterator[WarmPool[Item]]:
    with ThreadPoolExecutor(2) as executor:
        warm = WarmPool(recorder.factory, recorder.destroy, size=2,
                        executor=executor)
        yield warm
        warm.close()


def test_warm_fills_up_to_size_once(pool: WarmPool[Item], recorder: Recorder) -> None:
    pool.warm(KEY)
    pool.warm(KEY)
    pool.settle(5)
    assert len(recorder.made) == 2


def test_acquire_takes_a_ready_one_and_refills(pool: WarmPool[Item], recorder: Recorder) -> None:
    pool.warm(KEY)
    pool.settle(5)
    first = pool.acquire(KEY)
    pool.settle(5)
    assert first in recorder.made[:2] and len(recorder.made) == 3


def test_an_execution_only_gets_a_container_made_for_its_limits(
    pool: WarmPool[Item], recorder: Recorder
) -> None:
    pool.warm(KEY)
    pool.settle(5)
    other = pool.acquire(OTHER)
    assert other.key == OTHER  # made on the spot, not one of KEY's


def test_expired_containers_are_destroyed_not_served(
    pool: WarmPool[Item], recorder: Recorder
) -> None:
    pool.warm(KEY)
    pool.settle(5)
    for item in recorder.made:
        item.stale = True
    fresh = pool.acquire(KEY)
    pool.settle(5)
    assert not fresh.stale
    assert sum(item.stale for item in recorder.destroyed) == 2


def test_a_refill_failure_is_kept_for_the_caller(pool: WarmPool[Item], recorder: Recorder) -> None:
    recorder.fail = True
    pool.warm(KEY)
    pool.settle(5)
    assert [str(e) for e in pool.errors] == ["engine gone", "engine gone"]
    with pytest.raises(RuntimeError):
        pool.acquire(KEY)  # no ready container, and making one fails too


def test_close_destroys_what_is_left_and_refuses_refills(
    pool: WarmPool[Item], recorder: Recorder
) -> None:
    pool.warm(KEY)
    pool.settle(5)
    pool.close()
    assert sorted(i.number for i in recorder.destroyed) == [0, 1]
    pool.warm(KEY)
    pool.settle(5)
    assert len(recorder.made) == 2


def test_an_acquire_waits_for_the_container_being_made_instead_of_making_another() -> None:
    release = threading.Event()
    made: list[str] = []

    def slow(key: PoolKey) -> Item:
        release.wait(5)
        made.append("pooled")
        return Item(key, len(made))

    def now(key: PoolKey) -> Item:
        made.append("now")
        return Item(key, -1)

    with ThreadPoolExecutor(2) as executor:
        pool = WarmPool(slow, lambda item: None, size=1, executor=executor, make_now=now)
        pool.warm(KEY)
        threading.Timer(0.2, release.set).start()
        got = pool.acquire(KEY, refill=False)
        pool.close()
    assert made == ["pooled"] and got.number == 1


def test_an_acquire_with_nothing_pending_makes_one_now_and_refill_false_starts_none() -> None:
    made: list[str] = []

    def maker(name: str, number: int) -> Callable[[PoolKey], Item]:
        def make(key: PoolKey) -> Item:
            made.append(name)
            return Item(key, number)
        return make

    with ThreadPoolExecutor(2) as executor:
        pool = WarmPool(maker("pooled", 0), lambda item: None, size=1, executor=executor,
                        make_now=maker("now", 1))
        assert pool.acquire(KEY, refill=False).number == 1
        pool.settle(5)
        pool.close()
    assert made == ["now"]
