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
