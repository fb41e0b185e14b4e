"""Saying what a wait is for while it lasts: a slow or hanging model API used to leave the
progress line on "planning the contract" for minutes, and `exec` said nothing during a
30 s script (issue 9). A background ticker calls `notify` a few seconds into the wait and
then at intervals, until it ends."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Notify = Callable[[str], None]
FIRST_NOTICE_S = 5.0
NOTICE_EVERY_S = 15.0


@contextmanager
def announced_wait(notify: Notify | None, what: str, *, timeout_s: float,
                   first_after_s: float | None = None, every_s: float | None = None,
                   clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """While the block runs: "waiting for <what>: 5 s so far (gives up after 180 s)"."""
    if notify is None:
        yield
        return
    first = FIRST_NOTICE_S if first_after_s is None else first_after_s
    every = NOTICE_EVERY_S if every_s is None else every_s
    done = threading.Event()
    started = clock()

    def tick() -> None:
        pause = first
        while not done.wait(pause):
            waited = clock() - started
            notify(f"waiting for {what}: {waited:.0f} s so far (gives up after "
                   f"{timeout_s:.0f} s)")
            pause = every

    ticker = threading.Thread(target=tick, name="llm-wait", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join(timeout=1.0)
