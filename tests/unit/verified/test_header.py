"""The header a published script carries (issue 36): after a shebang and a coding line,
replaced rather than stacked by a regeneration, and the code still compiles."""

from __future__ import annotations

import pytest

from selfcorrect_action.verified.header import MARK, with_header, without_header

SPEC, LOCK = ".selfcorrect/tasks/chart.yml", ".selfcorrect/lock/chart.json"


@pytest.mark.parametrize(("code", "kept"), [
    ("print(1)\n", 0),
    ("#!/usr/bin/env python3\nprint(1)\n", 1),
    ("# -*- coding: latin-1 -*-\nprint(1)\n", 1),
    ("#!/usr/bin/env python3\n# vim: set fileencoding=utf-8 :\nprint(1)\n", 2),
    ('"""Docstring."""\nprint(1)\n', 0),
])
def test_the_header_goes_after_a_shebang_and_a_coding_line(code: str, kept: int) -> None:
    headed = with_header(code, spec=SPEC, lock=LOCK)
    lines = headed.splitlines()

    assert lines[:kept] == code.splitlines()[:kept]
    assert lines[kept].startswith(MARK) and SPEC in lines[kept] and LOCK in lines[kept]
    assert f"selfcorrect check {SPEC}" in lines[kept + 1]
    assert without_header(headed) == code
    compile(headed, "x.py", "exec")


def test_a_regeneration_replaces_the_header() -> None:
    once = with_header("print(1)\n", spec="a.yml", lock="a.json")
    again = with_header(once, spec=SPEC, lock=LOCK)

    assert again.count(MARK) == 2 and "a.yml" not in again


def test_windows_line_endings_are_kept() -> None:
    headed = with_header("print(1)\r\nprint(2)\r\n", spec=SPEC, lock=LOCK)

    assert "\n" not in headed.replace("\r\n", "")


def test_an_empty_script_gets_the_header_alone() -> None:
    assert with_header("", spec=SPEC, lock=LOCK).count(MARK) == 2


def test_an_issues_script_names_the_issue_and_is_checked_through_its_record() -> None:
    """A script born of an issue has no spec file: `selfcorrect check` with no argument
    finds it through its record, and `check issue #12` would be no command at all."""
    lines = with_header("print(1)\n", spec="issue #12",
                        lock=".selfcorrect/lock/issue-12.json").splitlines()

    assert "generated from issue #12" in lines[0] and "issue-12.json" in lines[0]
    assert "`selfcorrect check` (no model call)" in lines[1]
