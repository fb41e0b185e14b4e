"""The `files:` globs: anchored at the repository root, `*` within a folder, `**` across."""

from __future__ import annotations

import pytest

from selfcorrect_action.repair.globs import matches, matching


@pytest.mark.parametrize(("pattern", "path"), [
    ("src/pkg/core.py", "src/pkg/core.py"),
    ("src/pkg/*.py", "src/pkg/core.py"),
    ("src/**/*.py", "src/core.py"),
    ("src/**/*.py", "src/a/b/c/core.py"),
    ("**/*.py", "core.py"),
    ("**/*.py", "a/b/core.py"),
    ("src/**", "src/a/b.txt"),
    ("src/pkg/c?re.py", "src/pkg/core.py"),
    ("src/pkg/[ck]ore.py", "src/pkg/kore.py"),
    ("src/pkg/[!x]ore.py", "src/pkg/core.py"),
])
def test_these_match(pattern: str, path: str) -> None:
    assert matches(pattern, path)


@pytest.mark.parametrize(("pattern", "path"), [
    # Anchored: a glob without folders names the root's files only, not one at any depth
    # (a .gitignore line would), so a glob never hands out more than it says.
    ("*.py", "src/core.py"),
    ("src/*.py", "src/pkg/core.py"),
    ("src/pkg/*.py", "src/pkg/core.pyc"),
    ("src/pkg/c?re.py", "src/pkg/c/re.py"),
    ("src/pkg/[!c]ore.py", "src/pkg/core.py"),
    ("src/pkg/core.py", "xsrc/pkg/core.py"),
    ("src/pkg/core.py", "src/pkg/core.py.bak"),
    # Regular-expression characters in a glob are literal.
    ("src/pkg/co.e.py", "src/pkg/core.py"),
    ("src/(pkg)/core.py", "src/pkg/core.py"),
])
def test_these_do_not(pattern: str, path: str) -> None:
    assert not matches(pattern, path)


def test_matching_keeps_the_order_given_and_any_glob_counts() -> None:
    paths = ["b/x.py", "a/y.py", "c/z.txt", "a/w.txt"]
    assert matching(["a/*.py", "b/*.py"], paths) == ["b/x.py", "a/y.py"]
    assert matching([], paths) == []
