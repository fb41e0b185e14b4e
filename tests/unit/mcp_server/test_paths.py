"""Paths an MCP client sends stay under the server's root: no `..`, no link that leads out,
no absolute path elsewhere; inside, relative and absolute paths (and links) are fine."""

from __future__ import annotations

from pathlib import Path

import pytest

from selfcorrect_action.errors import UsageError
from selfcorrect_action.mcp.paths import confined


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "data").mkdir(parents=True)
    (tmp_path / "root" / "data" / "sales.csv").write_text("a,b\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    return tmp_path / "root"


def test_a_path_under_the_root_is_taken_relative_or_absolute(root: Path) -> None:
    expected = (root / "data" / "sales.csv").resolve()
    assert confined(root, "data/sales.csv", "inputs") == expected
    assert confined(root, "./data/sales.csv", "inputs") == expected
    assert confined(root, str(root / "data" / "sales.csv"), "inputs") == expected
    assert confined(root, "data/not-yet.csv", "inputs") == expected.parent / "not-yet.csv"


def test_a_link_that_stays_inside_is_followed(root: Path) -> None:
    (root / "latest.csv").symlink_to(root / "data" / "sales.csv")
    assert confined(root, "latest.csv", "inputs") == (root / "data" / "sales.csv").resolve()


@pytest.mark.parametrize("given", [
    "../outside.txt",
    "data/../../outside.txt",
    "data/../sales.csv",  # `..` is refused even where it would stay inside: one rule
    "/etc/passwd",
    "..",
])
def test_dot_dot_and_absolute_paths_elsewhere_are_refused(root: Path, given: str) -> None:
    with pytest.raises(UsageError) as refused:
        confined(root, given, "spec_path")
    assert refused.value.message == (
        f"spec_path {given!r}: outside the server's root {root.resolve()}")
    assert "--root" in (refused.value.hint or "")


def test_a_link_that_leads_out_is_refused(root: Path) -> None:
    (root / "escape.txt").symlink_to(root.parent / "outside.txt")
    (root / "up").symlink_to(root.parent)
    for given in ("escape.txt", "up/outside.txt"):
        with pytest.raises(UsageError, match="outside the server's root"):
            confined(root, given, "inputs")


def test_a_root_reached_through_a_link_is_the_same_root(root: Path) -> None:
    alias = root.parent / "alias"
    alias.symlink_to(root)
    assert confined(alias, "data/sales.csv", "inputs") == (root / "data/sales.csv").resolve()


@pytest.mark.parametrize(("given", "expected"), [
    ("", "empty path"),
    ("  ", "empty path"),
    ("data/sales.csv\nother", "control characters"),
])
def test_empty_paths_and_control_characters_are_refused(root: Path, given: str,
                                                        expected: str) -> None:
    with pytest.raises(UsageError, match=expected):
        confined(root, given, "inputs")
