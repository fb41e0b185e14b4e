"""The benchmark's threads: its workers (`in_parallel`), and a workaround the CLI's single
run does not need: CPython 3.11's
ast.parse is not safe to call from several threads at once (a C-level recursion counter
is shared: "SystemError: AST constructor recursion depth mismatch", python/cpython#106905,
seen here with 2 workers). The benchmark's workers parse tests, mutants and the loop's
answers concurrently, so while it runs every ast.parse holds one lock."""

from __future__ import annotations

import ast
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_original = ast.parse


def _serialised_parse(*args: Any, **kwargs: Any) -> Any:
    with _lock:
        return _original(*args, **kwargs)


def serialise_ast_parse() -> None:
    if sys.version_info < (3, 12) and ast.parse is _original:
        ast.parse = _serialised_parse


def in_parallel(work: Callable[[T], None], items: Sequence[T], workers: int) -> None:
    """Every item, `workers` at a time; the first failure (an interruption) stops the rest:
    leaving the pool used to wait for every queued item, each of which then ran into the
    set cancel token (and, for a problem's loop, left an empty 'interrupted' run behind)."""
    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="bench") as pool:
        futures = [pool.submit(work, item) for item in items]
        try:
            for future in as_completed(futures):
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            raise
