"""pytest's side of the boundary: what the tests' process adds to pytest.

- The temporary folders pytest makes are shared with the candidate (temporary.py).
- After each test, the functions it passed are no longer the candidate's to call.
- An assertion that compares one of the candidate's objects with plain data says why it
  fails and what to do instead.
"""

from __future__ import annotations

import pytest

from selfcorrect_boundary.client import Link, RemoteObject


class Plugin:
    def __init__(self, link: Link) -> None:
        self.link = link

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: object) -> None:
        self.link.forget_callbacks()

    @pytest.hookimpl(tryfirst=True)
    def pytest_assertrepr_compare(self, config: object, op: str, left: object,
                                  right: object) -> list[str] | None:
        if op not in ("==", "!=", "<", "<=", ">", ">="):
            return None
        remote = next((side for side in (left, right) if isinstance(side, RemoteObject)), None)
        other = right if remote is left else left
        if remote is None or isinstance(other, RemoteObject):
            return None
        kind = remote._sc_desc.get("type", "?")
        return [
            f"<{kind} object of the candidate> {op} {type(other).__name__}",
            f"The candidate returned a {kind} object, which stays in its own process: "
            "comparing it with plain data never runs the candidate's own comparison, so "
            "it is equal only to itself.",
            "Compare plain values instead (list(result), result.field, str(result)), "
            "or have the candidate return plain data; tests that must compare the "
            "candidate's objects directly need `isolation: in-process` in the spec.",
        ]
