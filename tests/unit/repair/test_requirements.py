"""The requirements file a derived image installs: package names only, located problems."""

from __future__ import annotations

from selfcorrect_action.repair.requirements import (
    MAX_REQUIREMENTS_BYTES,
    logical_lines,
    problems,
)

GOOD = """\
# test dependencies
hypothesis>=6.0   # property tests
pytest-timeout == 2.3.1 ; python_version >= "3.8"
attrs[tests]
toolz \\
    --hash=sha256:0123abcd
"""


def test_names_versions_extras_markers_hashes_and_continuations_are_taken() -> None:
    assert problems(GOOD) == []
    assert [number for number, _ in logical_lines(GOOD)] == [2, 3, 4, 5]
    assert logical_lines(GOOD)[-1][1] == "toolz --hash=sha256:0123abcd"


def test_options_urls_and_junk_are_refused_with_their_line() -> None:
    text = ("hypothesis\n-e .\n-r other.txt\nmylib @ https://example.com/x.whl\n"
            "--index-url https://evil.example/simple\nfoo --no-deps\n$$$\n")
    found = [(p.line, p.message.split(":")[0]) for p in problems(text)]
    assert found == [(2, "'-e'"), (3, "'-r'"), (4, "mylib @ https"), (5, "'--index-url'"),
                     (6, "'--no-deps'"), (7, "'$$$' is not a requirement")]


def test_an_empty_file_or_a_huge_one_is_refused() -> None:
    assert "names no requirement" in problems("# nothing\n\n")[0].message
    assert "larger than" in problems("x\n" * MAX_REQUIREMENTS_BYTES)[0].message
