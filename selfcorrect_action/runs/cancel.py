"""Asking a run to stop, from wherever the request comes: a signal (Ctrl-C, a cancelled CI
job's SIGTERM), an MCP client's cancel or a Python API caller on another thread.

A token is set once and stays set. The loop checks it between steps; a signal also raises
Interrupted where the main thread stands, so a model call or a script that takes minutes
does not hold the stop back. Inside `shielded()` (the reports being written) a signal only
sets the token: a report half written is worse than a stop a moment later.

A caller on another thread cannot raise where the run stands, so what blocks a run for long
registers a way to cut itself short (`while_running`): the sandbox kills the container of
the script in progress, a model call stops being waited for (runs/stoppable.py). A signal
needs none of that (it raises in the run's own thread), and its handler must not make
Docker calls in the middle of whatever the thread was doing: it never runs them.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import FrameType

from selfcorrect_action.errors import Interrupted, interruption

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}


class CancelToken:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._interruption: Interrupted | None = None
        self._shields = 0
        self._stoppers: dict[int, Callable[[], None]] = {}
        self._next_stopper = 0

    def cancel(self, signal_name: str = "cancelled") -> None:
        """Ask the run to stop, as `signal_name` would (SIGINT: 130, SIGTERM: 143; anything
        else is a caller's cancel, 130). The first request is the one reported; it also
        runs, in the caller's thread, the stoppers of whatever the run is blocked in."""
        if self._set(signal_name):
            with self._lock:
                stoppers = list(self._stoppers.values())
            for stop in stoppers:
                stop()

    def _set(self, signal_name: str) -> bool:
        with self._lock:
            if self._interruption is not None:
                return False
            self._interruption = interruption(signal_name)
            return True

    @property
    def interruption(self) -> Interrupted | None:
        return self._interruption

    @property
    def cancelled(self) -> bool:
        return self._interruption is not None

    def check(self) -> None:
        """Raise the interruption if the run was asked to stop."""
        if self._interruption is not None:
            raise self._interruption

    @property
    def is_shielded(self) -> bool:
        return self._shields > 0

    @contextlib.contextmanager
    def while_running(self, stop: Callable[[], None]) -> Iterator[None]:
        """While the block runs, a cancel calls `stop()` (from the cancelling thread) to cut
        short what the block waits for; a token cancelled already calls it at once. The
        block then sees its wait end early and calls `check()`."""
        with self._lock:
            key = self._next_stopper
            self._next_stopper += 1
            self._stoppers[key] = stop
            cancelled = self._interruption is not None
        try:
            if cancelled:
                stop()
            yield
        finally:
            with self._lock:
                del self._stoppers[key]

    @contextlib.contextmanager
    def shielded(self) -> Iterator[None]:
        with self._lock:
            self._shields += 1
        try:
            yield
        finally:
            with self._lock:
                self._shields -= 1


@contextlib.contextmanager
def cancel_on_signals(token: CancelToken) -> Iterator[CancelToken]:
    """SIGINT and SIGTERM cancel `token` while the block runs, and raise Interrupted unless
    the token is shielded; the previous handlers come back afterwards. Outside the main
    thread no handler can be set, and the block runs without them."""
    if threading.current_thread() is not threading.main_thread():
        yield token
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        # _set, not cancel: the raise below stops the run where it stands, and a stopper's
        # engine call must not run inside whatever engine call the thread was making.
        token._set(name)
        if not token.is_shielded:
            raise interruption(name)

    previous = {number: signal.signal(number, on_signal) for number in SIGNALS.values()}
    try:
        yield token
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
