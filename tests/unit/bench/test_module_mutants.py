"""Seeded single-line bugs across a module: every kind, one line each, the same sample for
the same seed."""

from __future__ import annotations

from collections import Counter

from selfcorrect_action.bench.module_mutants import KINDS, module_bugs, sample

SOURCE = '''\
"""A small module."""


def window(items, size=2, strict=False, label=None, sep="-"):
    """Consecutive windows."""
    if size < 1:
        raise ValueError("size")
    result = []
    for start in range(len(items) - size + 1):
        result.append(tuple(items[start:start + size]))
    return result


class Counter2:
    def bump(self, value, step=1):
        total = value * step
        return max(total, value)
'''


def test_every_kind_finds_sites_and_each_changes_one_line() -> None:
    bugs = module_bugs("pkg/mod.py", SOURCE)
    assert set(Counter(bug.kind for bug in bugs)) == set(KINDS)
    for bug in bugs:
        before, after = SOURCE.splitlines(), bug.source.splitlines()
        assert len(before) == len(after)
        assert [i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True))
                if a != b] == [bug.line], bug.label


def test_the_new_kinds_change_a_default_or_swap_two_arguments() -> None:
    bugs = module_bugs("pkg/mod.py", SOURCE)
    defaults = {(bug.original, bug.replacement) for bug in bugs if bug.kind == "wrong_default"}
    assert defaults == {("2", "3"), ("False", "True"), ("None", "0"), ('"-"', "'-x'"),
                        ("1", "2")}
    swaps = {bug.replacement for bug in bugs if bug.kind == "swapped_arguments"}
    assert "max(value, total)" in swaps
    assert any(bug.function == "Counter2.bump" for bug in bugs)
    assert "window (pkg/mod.py:4): False -> True" in next(
        bug.label for bug in bugs if bug.original == "False")


def test_the_sample_is_per_kind_and_seeded() -> None:
    bugs = module_bugs("pkg/mod.py", SOURCE)
    one = sample(bugs, per_kind=1, seed="0")
    assert [bug.kind for bug in one] == list(KINDS)
    assert one == sample(bugs, per_kind=1, seed="0")
    assert len(sample(bugs, per_kind=100, seed="0")) == len(bugs)
