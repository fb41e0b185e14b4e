"""Whether a spec's frozen tests need pytest to be judged, read from their source.

Most frozen tests are module-level functions with plain asserts: they need nothing of
pytest's but its verdict, and pytest's import and session are about 100 ms of CPU per test
run in the sandbox, more than the rest of the tests' side together. Tests that qualify run
plainly first (sandbox/boundary/selfcorrect_boundary/plain.py): a run where all pass is
reported as pytest reports it; anything else runs again under pytest, whose report stands.

The rules are strict on purpose: a test file qualifies only when nothing in it would make
pytest do more than import it and call its `test*` functions. The sandbox's side checks
again what only the imported module shows (names that arrive by import, attributes set at
run time) and hands anything unexpected to pytest.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping
from pathlib import PurePosixPath

# Modules whose use means pytest's own machinery (fixtures, raises, marks, unittest's test
# cases, which pytest runs its own way), or whose behaviour pytest changes around each test
# (logging: pytest's handlers on the root logger make basicConfig a no-op).
_PYTEST_MODULES = frozenset({"pytest", "_pytest", "unittest", "logging", "doctest",
                             "hypothesis", "pluggy"})
# Module-level names pytest reads or runs itself (set-up and tear-down, nose's included).
_PYTEST_NAMES = frozenset({
    "pytestmark", "pytest_plugins", "__test__", "setup_module", "teardown_module",
    "setUpModule", "tearDownModule", "setup", "teardown", "setup_function",
    "teardown_function", "collect_ignore", "collect_ignore_glob", "__getattr__"})


def plain_runnable(tests: Mapping[str, str]) -> str | None:
    """None when every test file in `tests` (name -> source) can be judged without pytest;
    otherwise why not, naming the file."""
    if not tests:
        return "there are no test files"
    for name, source in tests.items():
        reason = _file_problem(name, source)
        if reason is not None:
            return f"{name}: {reason}"
    return None


def _file_problem(name: str, source: str) -> str | None:
    path = PurePosixPath(name)
    if len(path.parts) != 1 or path.suffix != ".py" or not path.stem.isidentifier():
        return "not a top-level test module (pytest names modules in folders itself)"
    if path.stem == "__init__":
        return "a package's __init__.py"
    if path.stem in sys.stdlib_module_names:
        return (f"shares its name with the standard module {path.stem} (pytest, which imports "
                "many of them itself, runs it its own way)")
    try:
        tree = ast.parse(source, filename=name)
    except (SyntaxError, ValueError):
        return "does not parse (pytest reports that)"
    for node in ast.walk(tree):
        problem = _node_problem(node)
        if problem is not None:
            return problem
    tests = 0
    for node in tree.body:
        problem = _top_level_problem(node)
        if problem is not None:
            return problem
        tests += isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    return None if tests else "defines no test function"


def _node_problem(node: ast.AST) -> str | None:
    if isinstance(node, ast.Import):
        used = [alias.name for alias in node.names
                if alias.name.split(".")[0] in _PYTEST_MODULES]
        return f"imports {used[0]}" if used else None
    if isinstance(node, ast.ImportFrom):
        if node.level == 0 and node.module and node.module.split(".")[0] in _PYTEST_MODULES:
            return f"imports from {node.module}"
        if any(alias.name == "*" for alias in node.names):
            return "has a star import (its names are pytest's to collect)"
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "__import__", "exec", "eval", "globals", "setattr"):
        return f"calls {node.func.id}(), which may define what pytest collects"
    if isinstance(node, ast.Name) and node.id in _PYTEST_MODULES - {"logging"}:
        return f"uses {node.id}"
    return None


def _top_level_problem(node: ast.stmt) -> str | None:
    for name in _bound_names(node):
        if name in _PYTEST_NAMES or name.startswith("pytest"):
            return f"defines {name}, which pytest reads"
        if name.startswith("Test"):
            return f"defines {name} (pytest collects classes named Test*)"
    if isinstance(node, ast.AsyncFunctionDef) and node.name.startswith("test"):
        return f"{node.name} is a coroutine"
    if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
        return _test_problem(node)
    if isinstance(node, ast.ClassDef) and node.decorator_list:
        return f"class {node.name} is decorated"
    return None


def _test_problem(node: ast.FunctionDef) -> str | None:
    arguments = node.args
    if (arguments.posonlyargs or arguments.args or arguments.kwonlyargs or arguments.vararg
            or arguments.kwarg):
        return f"{node.name} takes arguments (fixtures)"
    if node.decorator_list:
        return f"{node.name} is decorated (marks, parametrize, fixtures)"
    for inner in _own_nodes(node):
        if isinstance(inner, ast.Yield | ast.YieldFrom | ast.Await):
            return f"{node.name} is a generator"
    return None


def _own_nodes(function: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of `function`'s own body, not of functions or classes defined inside it."""
    found: list[ast.AST] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
                          | ast.Lambda):
            pending.extend(ast.iter_child_nodes(node))
    return found


def _bound_names(node: ast.stmt) -> list[str]:
    """The module-level names a statement binds (definitions, assignments, imports)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    return [target.id for target in ast.walk(node)
            if isinstance(target, ast.Name) and isinstance(target.ctx, ast.Store)]
