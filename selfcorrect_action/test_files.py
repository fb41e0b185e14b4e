"""What makes a pytest file usable as frozen spec tests: it parses, and it defines a test.

Checked before any work (validate, and the planner's own tests): a broken test file would
fail every attempt, blamed on the candidate, until the budget ran out.
"""

from __future__ import annotations

import ast


def test_file_problem(source: str) -> str | None:
    """Why `source` cannot serve as spec tests, or None when it can."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return f"does not parse as Python: {exc.msg} (line {exc.lineno})"
    except ValueError as exc:  # null bytes
        return f"does not parse as Python: {exc}"
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    if not any(isinstance(node, functions) and node.name.startswith("test")
               for node in ast.walk(tree)):
        return "defines no test function (pytest collects functions named test_...)"
    return None


test_file_problem.__test__ = False  # type: ignore[attr-defined]  # a checker, not a test
