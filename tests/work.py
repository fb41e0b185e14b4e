"""The work a call takes, counted rather than timed: a clock measures the machine (and
coverage's tracer, which slows pure Python 2.5-4x), while the number of function calls and
returns in this thread is the same wherever the suite runs. The tests that guard against
super-linear work on hostile input (a parser gone quadratic) compare the work at size n and
4n. A C call counts once whatever it does, so a regex that backtracks inside one call is
invisible here: the parsers these tests guard run no regex on the hostile text.
The seconds themselves are printed by the benchmarks (benchmarks/issue_body_parsing.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def calls_made(work: Callable[[], Any]) -> int:
    count = 0

    def profile(frame: object, event: str, arg: object) -> None:
        nonlocal count
        count += 1

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        work()
    finally:
        sys.setprofile(previous)
    return count


def growth(make: Callable[[int], Any], work: Callable[[Any], Any], n: int) -> float:
    """How much more work 4n takes than n: at most about 4 when linear (plus a constant),
    about 4.6 for n log n, 16 when quadratic. The first call warms caches and is not
    counted."""
    work(make(max(1, n // 10)))
    small = calls_made(lambda: work(make(n)))
    large = calls_made(lambda: work(make(4 * n)))
    return large / max(1, small)
