"""Seeded bugs of four kinds in a canonical solution, as pure functions of its source.

Every site of a kind in the entry point's body is a possible mutant; their order is a
shuffle seeded by the task id and the kind, so a run, and a rerun, make the same mutants.
The benchmark keeps, per kind, the first site whose mutant changes behaviour (behaviour.py
decides that, by running it beside the original); a kind with no such site is reported as
having none. A mutant replaces exactly the text of the node it changes, so it reads like the
original with one bug in it (and diffs to a single line).

Kinds:
  off_by_one           an integer literal n becomes n + 1 (`len(x)` becomes `len(x) - 1`
                       where the body has no integer literal)
  flipped_comparison   one comparison operator flipped: < and >, <= and >=, == and !=,
                       in and not in, is and is not
  wrong_arithmetic     one arithmetic operator replaced: + and -, * by +, / and // by *,
                       % by //, ** by *
  missing_return       one `return X` loses its value's return: `X` is evaluated, None is
                       returned
"""

from __future__ import annotations

import ast
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Kind = Literal["off_by_one", "flipped_comparison", "wrong_arithmetic", "missing_return"]
KINDS: tuple[Kind, ...] = ("off_by_one", "flipped_comparison", "wrong_arithmetic",
                           "missing_return")

_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_ARITHMETIC: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
}


@dataclass(frozen=True)
class Mutant:
    kind: Kind
    site: int  # the site's position in source order, among its kind's sites
    line: int  # 1-based, in the module source
    original: str  # the text replaced
    replacement: str
    source: str  # the whole mutated module

    @property
    def label(self) -> str:
        return f"{self.kind}@{self.line}: {self.original.strip()} -> {self.replacement.strip()}"


def mutants(source: str, entry_point: str, kind: Kind, *, seed: str) -> list[Mutant]:
    """Every mutant of `kind` in `entry_point`'s body, in the seeded order, without those
    whose text is the original's (e.g. `-0` for `0`)."""
    tree = ast.parse(source)
    function = _function(tree, entry_point)
    if function is None:
        return []
    made = [m for m in sites(source, function, kind) if m.source != source]
    order = list(range(len(made)))
    random.Random(f"{seed}:{kind}").shuffle(order)
    return [made[i] for i in order]


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    found = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    return found[-1] if found else None


def _body_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """The body's nodes in source order, without the docstring (a literal no test sees)."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and (
            isinstance(body[0].value.value, str)):
        body = body[1:]
    nodes = [node for statement in body for node in ast.walk(statement)
             if hasattr(node, "lineno")]
    nodes.sort(key=lambda node: (node.lineno, node.col_offset))  # type: ignore[attr-defined]
    yield from nodes


def sites(source: str, function: ast.FunctionDef, kind: Kind) -> list[Mutant]:
    """Every mutant of `kind` in `function`'s body, in source order (no seeded shuffle)."""
    nodes = list(_body_nodes(function))
    found: list[tuple[ast.AST, str]] = []
    if kind == "off_by_one":
        found = [(node, str(node.value + 1)) for node in nodes
                 if isinstance(node, ast.Constant) and type(node.value) is int]
        if not found:
            found = [(node, f"{ast.unparse(node)} - 1") for node in nodes
                     if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                     and node.func.id == "len"]
    elif kind == "flipped_comparison":
        for node in nodes:
            if isinstance(node, ast.Compare):
                for index, op in enumerate(node.ops):
                    flipped = _FLIPPED[type(op)]()
                    changed = ast.Compare(left=node.left, ops=[
                        flipped if i == index else o for i, o in enumerate(node.ops)],
                        comparators=node.comparators)
                    found.append((node, ast.unparse(changed)))
    elif kind == "wrong_arithmetic":
        for node in nodes:
            if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
                changed_op = ast.BinOp(left=node.left, op=_ARITHMETIC[type(node.op)](),
                                       right=node.right)
                found.append((node, ast.unparse(changed_op)))
            elif isinstance(node, ast.AugAssign) and type(node.op) in _ARITHMETIC:
                changed_aug = ast.AugAssign(target=node.target,
                                            op=_ARITHMETIC[type(node.op)](), value=node.value)
                found.append((node, ast.unparse(changed_aug)))
    else:
        found = [(node, ast.unparse(node.value)) for node in nodes
                 if isinstance(node, ast.Return) and node.value is not None]
    return [spliced(source, kind, site, node, text) for site, (node, text) in enumerate(found)]


def spliced(source: str, kind: Kind, site: int, node: ast.AST, text: str) -> Mutant:
    original, mutated = splice(source, node, text)
    return Mutant(kind=kind, site=site, line=node.lineno,  # type: ignore[attr-defined]
                  original=original, replacement=text, source=mutated)


def splice(source: str, node: ast.AST, text: str) -> tuple[str, str]:
    """(the text of `node`, the source with it replaced by `text`). ast positions count
    UTF-8 bytes within a line, so the splice works on bytes."""
    lines = source.encode("utf-8").splitlines(keepends=True)
    start_line, end_line = node.lineno, node.end_lineno  # type: ignore[attr-defined]
    start_col, end_col = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    before = b"".join(lines[: start_line - 1]) + lines[start_line - 1][:start_col]
    original = b"".join(lines[start_line - 1: end_line])
    original = original[start_col: len(original) - len(lines[end_line - 1]) + end_col]
    after = lines[end_line - 1][end_col:] + b"".join(lines[end_line:])
    mutated = before + _parenthesised(node, text).encode("utf-8") + after
    return original.decode("utf-8"), mutated.decode("utf-8")


def _parenthesised(node: ast.AST, text: str) -> str:
    """An expression put where another was keeps its own precedence: `a * (n - 1)`."""
    return f"({text})" if isinstance(node, ast.expr) and not isinstance(
        node, ast.Constant | ast.Compare) else text
