"""What a repair may rewrite: the globs' matches, minus what stays frozen whatever they say."""

from __future__ import annotations

import pytest

from selfcorrect_action.repair.files import frozen_reason, refusal, writable


@pytest.mark.parametrize("path", [
    "tests/test_core.py", "src/pkg/tests/helpers.py", "test/util.py", "pkg/testing/fake.py",
    "test_core.py", "pkg/core_test.py", "conftest.py", "src/pkg/conftest.py",
    "pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", "src/pkg/data.json",
    ".github/workflows/x.py", ".git/hooks/pre-commit.py",
])
def test_these_are_frozen_whatever_the_globs_say(path: str) -> None:
    assert frozen_reason(path) is not None


@pytest.mark.parametrize("path", [
    "src/pkg/core.py", "pkg/__init__.py", "setup.py", "pkg/contest.py", "pkg/testsuite.py",
    "pkg/latest.py",
])
def test_these_are_left_to_the_globs(path: str) -> None:
    assert frozen_reason(path) is None


def test_a_broad_glob_hands_out_source_but_never_the_tests() -> None:
    paths = ["pkg/core.py", "pkg/util.py", "tests/test_core.py", "conftest.py", "README.md"]
    assert writable(["**/*"], paths) == ["pkg/core.py", "pkg/util.py"]


def test_a_refusal_says_whether_the_file_is_frozen_or_outside_the_globs() -> None:
    allowed = ["pkg/core.py"]
    assert refusal("pkg/core.py", allowed, ["pkg/core.py"]) is None
    frozen = refusal("tests/test_core.py", allowed, ["pkg/core.py"])
    outside = refusal("pkg/util.py", allowed, ["pkg/core.py"])
    assert frozen is not None and "frozen" in frozen and "test file" in frozen
    assert outside is not None and "`files:` (pkg/core.py)" in outside
