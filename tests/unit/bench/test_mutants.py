"""The seeded mutators: deterministic, one node's text changed per mutant, each kind."""

from __future__ import annotations

import ast

import pytest

from selfcorrect_action.bench.mutants import KINDS, mutants

SOURCE = '''from typing import List


def helper(x):
    return x + 100


def below(numbers: List[int], limit: int) -> int:
    """Count the numbers below limit; 3 < 4 in a docstring is never mutated."""
    count = 0
    for n in numbers:
        if n < limit and n != -1:
            count += 1
    total = count * 2 - count
    return total
'''


def test_the_same_seed_gives_the_same_mutants() -> None:
    for kind in KINDS:
        first = mutants(SOURCE, "below", kind, seed="HumanEval/7")
        again = mutants(SOURCE, "below", kind, seed="HumanEval/7")
        assert [m.source for m in first] == [m.source for m in again]
        assert first, kind


def test_the_seed_only_orders_the_sites() -> None:
    one = mutants(SOURCE, "below", "off_by_one", seed="a")
    other = mutants(SOURCE, "below", "off_by_one", seed="b")
    assert sorted(m.source for m in one) == sorted(m.source for m in other)
    assert len({m.site for m in one}) == len(one)


@pytest.mark.parametrize(("kind", "expected"), [
    ("off_by_one", {"count = 1", "count += 2", "n != -2", "count * 3"}),
    ("flipped_comparison", {"if n > limit and n != -1:", "if n < limit and n == -1:"}),
    ("wrong_arithmetic", {"count -= 1", "total = (count + 2) - count",
                          "total = (count * 2 + count)"}),
    ("missing_return", {"    total\n"}),
])
def test_each_kind_changes_one_node_in_the_entry_point(kind: str, expected: set[str]) -> None:
    made = mutants(SOURCE, "below", kind, seed="s")  # type: ignore[arg-type]
    assert {next(piece for piece in expected if piece in m.source) for m in made} == expected
    for mutant in made:
        ast.parse(mutant.source)  # every mutant is valid Python
        assert mutant.source.count("\n") == SOURCE.count("\n")  # one splice, same lines
        assert "return x + 100" in mutant.source  # the helper is never touched
        assert "3 < 4 in a docstring" in mutant.source
        changed = [line for line, was in zip(mutant.source.splitlines(), SOURCE.splitlines(),
                                             strict=True) if line != was]
        assert len(changed) == 1 and mutant.line == SOURCE.splitlines().index(
            next(was for line, was in zip(mutant.source.splitlines(), SOURCE.splitlines(),
                                          strict=True) if line != was)) + 1


def test_an_operator_replaced_keeps_its_precedence() -> None:
    made = mutants("def f(a, b, c):\n    return a * (b - c)\n", "f", "wrong_arithmetic",
                   seed="x")
    values = {}
    for mutant in made:
        namespace: dict[str, object] = {}
        exec(mutant.source, namespace)
        values[mutant.replacement] = namespace["f"](2, 5, 3)  # type: ignore[operator]
    assert values == {"a + (b - c)": 4, "b + c": 16}


def test_off_by_one_without_literals_shortens_len() -> None:
    made = mutants("def f(xs):\n    return xs[len(xs)]\n", "f", "off_by_one", seed="x")
    assert [m.source for m in made] == ["def f(xs):\n    return xs[(len(xs) - 1)]\n"]


def test_no_entry_point_or_no_site_gives_nothing() -> None:
    assert mutants(SOURCE, "missing", "off_by_one", seed="s") == []
    assert mutants("def f(x):\n    pass\n", "f", "missing_return", seed="s") == []


def test_positions_are_bytes_so_non_ascii_lines_splice_right() -> None:
    made = mutants('def f(s):\n    return "é" + s if len(s) > 2 else s\n', "f",
                   "flipped_comparison", seed="x")
    assert [m.source for m in made] == ['def f(s):\n    return "é" + s if len(s) < 2 else s\n']
