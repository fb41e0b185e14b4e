"""Asking a run to stop, from wherever the request comes: a signal (Ctrl-C, a cancelled CI
job's SIGTERM), and later an MCP client's cancel or a Python API caller on another thread.

A token is set once and stays set. The loop checks it between steps; a signal also raises
Interrupted where the main thread stands, so a model call or a script that takes minutes
does not hold the stop back. Inside `shielded()` (the reports being written) a signal only
sets the token: a report half written is worse than a stop a moment later.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from selfcorrect_action.errors import Interrupted, interruption

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}


class CancelToken:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._interruption: Interrupted | None = None
        self._shields = 0

    def cancel(self, signal_name: str = "cancelled") -> None:
        """Ask the run to stop, as `signal_name` would (SIGINT: 130, SIGTERM: 143; anything
        else is a caller's cancel, 130). The first request is the one reported."""
        with self._lock:
            if self._interruption is None:
                self._interruption = interruption(signal_name)

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
        token.cancel(name)
        if not token.is_shielded:
            raise interruption(name)

    previous = {number: signal.signal(number, on_signal) for number in SIGNALS.values()}
    try:
        yield token
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
