"""The cancellation token: set once, by a signal or a caller; raised where the loop looks."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from selfcorrect_action.errors import Interrupted
from selfcorrect_action.runs.cancel import CancelToken, cancel_on_signals


def test_the_first_request_is_the_one_reported() -> None:
    token = CancelToken()
    token.check()  # not cancelled: nothing happens
    token.cancel("SIGTERM")
    token.cancel("SIGINT")
    with pytest.raises(Interrupted) as raised:
        token.check()
    assert (raised.value.signal_name, raised.value.exit_code) == ("SIGTERM", 143)


def test_a_callers_cancel_from_another_thread() -> None:
    token = CancelToken()
    thread = threading.Thread(target=token.cancel)
    thread.start()
    thread.join()
    assert token.cancelled and token.interruption is not None
    assert token.interruption.exit_code == 130
    assert token.interruption.described == "a cancel request"


@pytest.mark.parametrize(("number", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_sets_the_token_and_raises(number: int, code: int) -> None:
    token = CancelToken()
    before = signal.getsignal(number)
    with pytest.raises(Interrupted) as raised, cancel_on_signals(token):
        os.kill(os.getpid(), number)
    assert raised.value.exit_code == code and token.cancelled
    assert signal.getsignal(number) is before, "the previous handler is back"


def test_a_shielded_block_is_not_cut_short() -> None:
    token = CancelToken()
    finished = False
    with cancel_on_signals(token), token.shielded():
        os.kill(os.getpid(), signal.SIGTERM)
        finished = True
    assert finished and token.cancelled
    with pytest.raises(Interrupted):
        token.check()


def test_a_cancel_runs_the_stoppers_of_what_the_run_waits_in() -> None:
    token = CancelToken()
    stopped: list[str] = []
    with token.while_running(lambda: stopped.append("script")):
        thread = threading.Thread(target=token.cancel)
        thread.start()
        thread.join()
    assert stopped == ["script"]
    token.cancel()  # a second cancel changes nothing
    with token.while_running(lambda: stopped.append("next")):
        pass
    assert stopped == ["script", "next"], "an already cancelled token stops at once"


def test_a_stopper_is_forgotten_once_its_block_ends() -> None:
    token = CancelToken()
    stopped: list[str] = []
    with token.while_running(lambda: stopped.append("model call")):
        pass
    token.cancel()
    assert stopped == []


def test_a_signal_never_runs_stoppers() -> None:
    """The handler raises in the run's own thread, which is what stops it: engine calls made
    inside a signal handler could land in the middle of the thread's own engine call."""
    token = CancelToken()
    stopped: list[str] = []
    with pytest.raises(Interrupted), cancel_on_signals(token), \
            token.while_running(lambda: stopped.append("killed")):
        os.kill(os.getpid(), signal.SIGINT)
    assert token.cancelled and stopped == []
