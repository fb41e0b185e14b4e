"""A batch's items go out ahead of the result awaited (sandbox/batch.py's _Ahead): the
runner finds the next item waiting instead of idling through the host's round trip, and
never more than AHEAD_BYTES wait unread, so that a send cannot block while the runner is
blocked writing a result the host has not read."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from selfcorrect_action.sandbox.batch import AHEAD_BYTES, _Ahead, _encode_item
from selfcorrect_action.sandbox.models import ExecutionRequest, InputFile
from selfcorrect_action.sandbox.wire import DeadlineExceeded


class Stream:
    def __init__(self, fail_at: int | None = None) -> None:
        self.sent: list[bytes] = []
        self.fail_at = fail_at

    def send(self, data: bytes) -> None:
        if self.fail_at is not None and len(self.sent) == self.fail_at:
            raise DeadlineExceeded("the container stopped reading")
        self.sent.append(data)


def _items(sizes: list[int]) -> list[tuple[ExecutionRequest, Path]]:
    return [(ExecutionRequest(argv=["python3", "x.py"],
                              files=[InputFile(path="x.py", data=b"#" * size)]), Path("."))
            for size in sizes]


def test_items_go_ahead_while_they_fit() -> None:
    items = _items([1000] * 50)
    stream = Stream()
    ahead = _Ahead(cast(Any, stream), items)
    ahead.fill(0)
    each = len(_encode_item(items[0][0]))
    assert len(stream.sent) == AHEAD_BYTES // each + 1 < 50
    assert sum(map(len, stream.sent[1:])) <= AHEAD_BYTES
    ahead.fill(1)  # one result read: one more fits
    assert len(stream.sent) == AHEAD_BYTES // each + 2
    ahead.fill(1)  # asking again sends nothing more
    assert len(stream.sent) == AHEAD_BYTES // each + 2
    for index in range(2, 50):
        ahead.fill(index)
    assert stream.sent == [_encode_item(request) for request, _ in items]


def test_an_item_larger_than_the_budget_still_goes_when_it_is_next() -> None:
    items = _items([AHEAD_BYTES * 2, 10, AHEAD_BYTES * 2])
    stream = Stream()
    ahead = _Ahead(cast(Any, stream), items)
    ahead.fill(0)
    assert len(stream.sent) == 2  # the big one, then the small one; not the next big one
    ahead.fill(1)
    assert len(stream.sent) == 2
    ahead.fill(2)
    assert len(stream.sent) == 3


def test_a_send_that_fails_ahead_is_raised_for_its_own_item() -> None:
    stream = Stream(fail_at=2)
    ahead = _Ahead(cast(Any, stream), _items([10] * 4))
    ahead.fill(0)
    ahead.fill(1)  # item 2's send failed: items 0 and 1 are unaffected
    assert len(stream.sent) == 2
    with pytest.raises(OSError, match="sending it: the container stopped reading"):
        ahead.fill(2)
