"""A workaround the benchmark needs and the CLI's single run does not: CPython 3.11's
ast.parse is not safe to call from several threads at once (a C-level recursion counter
is shared: "SystemError: AST constructor recursion depth mismatch", python/cpython#106905,
seen here with 2 workers). The benchmark's workers parse tests, mutants and the loop's
answers concurrently, so while it runs every ast.parse holds one lock."""

from __future__ import annotations

import ast
import sys
import threading
from typing import Any

_lock = threading.Lock()
_original = ast.parse


def _serialised_parse(*args: Any, **kwargs: Any) -> Any:
    with _lock:
        return _original(*args, **kwargs)


def serialise_ast_parse() -> None:
    if sys.version_info < (3, 12) and ast.parse is _original:
        ast.parse = _serialised_parse
