"""Wall-clock budgets for the tests that guard against super-linear work (a parser that
goes quadratic on hostile input). scripts/test runs the Docker-free tier under coverage,
whose line tracer makes pure-Python parsing 2.5-4x slower (issue bodies through ruamel:
1.4 s, 3.3 s traced; a 20,000-link traceback chain: 0.6 s, 1.7 s): a budget triples when
a tracer is active. A quadratic reader would still take minutes, far past either."""

from __future__ import annotations

import sys

TRACED_SLOWDOWN = 3


def cpu_budget_s(seconds: float) -> float:
    return seconds * (TRACED_SLOWDOWN if sys.gettrace() is not None else 1)
