"""Seeded single-line bugs in a library's modules, for the repair benchmark
(benchmarks/repair_suite.py). Pure functions of the source.

The four kinds of the HumanEval benchmark (bench/mutants.py: off_by_one,
flipped_comparison, wrong_arithmetic, missing_return), applied in every function and method
of a module, plus two that only code with signatures and calls has:

  wrong_default       one default argument changed: an int or float n becomes n + 1, a
                      bool its negation, None becomes 0, a string gains an "x"
  swapped_arguments   the first two positional arguments of one call swapped

Only mutants whose change sits on one line are kept (each diffs to a single line, as a
typical bug report's fix does), and only those whose text differs from the original's.
The sample is seeded: the same library, seed and size give the same mutants.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from dataclasses import dataclass

from selfcorrect_action.bench import mutants as humaneval

KINDS = (*humaneval.KINDS, "wrong_default", "swapped_arguments")


@dataclass(frozen=True)
class SeededBug:
    kind: str
    path: str  # the module, relative to the library's root
    function: str  # the function or method it is in (Class.method)
    line: int
    original: str  # the text replaced
    replacement: str
    source: str  # the whole mutated module

    @property
    def key(self) -> str:
        return f"{self.path}:{self.line}:{self.kind}:{self.replacement}"

    @property
    def label(self) -> str:
        return (f"{self.kind} in {self.function} ({self.path}:{self.line}): "
                f"{self.original.strip()} -> {self.replacement.strip()}")


def module_bugs(path: str, source: str) -> list[SeededBug]:
    """Every single-line mutant of every kind in `source`, in source order."""
    tree = ast.parse(source)
    found: list[SeededBug] = []
    for name, function in _functions(tree):
        for kind in humaneval.KINDS:
            found += [SeededBug(kind, path, name, m.line, m.original, m.replacement, m.source)
                      for m in humaneval.sites(source, function, kind)]
        found += _defaults(path, source, name, function)
        found += _swaps(path, source, name, function)
    return [bug for bug in found if "\n" not in bug.original and bug.source != source]


def sample(bugs: list[SeededBug], *, per_kind: int, seed: str) -> list[SeededBug]:
    """At most `per_kind` of each kind, drawn with a seeded generator, in kind order."""
    chosen: list[SeededBug] = []
    for kind in KINDS:
        of_kind = [bug for bug in bugs if bug.kind == kind]
        chosen += random.Random(f"{seed}:{kind}").sample(of_kind, min(per_kind, len(of_kind)))
    return chosen


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef]]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield f"{node.name}.{item.name}", item


def _defaults(path: str, source: str, name: str, function: ast.FunctionDef) -> list[SeededBug]:
    arguments = function.args
    defaults = [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]
    found = []
    for node in defaults:
        changed = _changed_default(node)
        if changed is not None:
            original, mutated = humaneval.splice(source, node, changed)
            found.append(SeededBug("wrong_default", path, name, node.lineno, original,
                                   changed, mutated))
    return found


def _changed_default(node: ast.expr) -> str | None:
    if not isinstance(node, ast.Constant):
        return None
    value = node.value
    if isinstance(value, bool):
        return repr(not value)
    if isinstance(value, int | float):
        return repr(value + 1)
    if value is None:
        return "0"
    if isinstance(value, str):
        return repr(value + "x")
    return None


def _swaps(path: str, source: str, name: str, function: ast.FunctionDef) -> list[SeededBug]:
    found = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        first, second = node.args[0], node.args[1]
        if isinstance(first, ast.Starred) or isinstance(second, ast.Starred):
            continue
        if ast.unparse(first) == ast.unparse(second):
            continue
        swapped = ast.Call(func=node.func, args=[second, first, *node.args[2:]],
                           keywords=node.keywords)
        text = ast.unparse(swapped)
        original, mutated = humaneval.splice(source, node, text)
        found.append(SeededBug("swapped_arguments", path, name, node.lineno, original, text,
                               mutated))
    return found
