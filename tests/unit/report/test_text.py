"""The report formatters: durations, money, bounded tails and diffs."""

from __future__ import annotations

import time

import pytest

from selfcorrect_action.report import text


@pytest.mark.parametrize(
    ("ms", "shown"),
    [
        (0, "0 ms"),
        (850, "850 ms"),
        (12_340, "12.3 s"),
        (125_000, "2 min 05 s"),
        (3_725_000, "1 h 02 min"),
    ],
)
def test_durations(ms: int, shown: str) -> None:
    assert text.duration(ms) == shown


def test_money() -> None:
    assert text.money(0.0, known=True) == "$0.00"
    assert text.money(0.01234, known=True) == "$0.0123"
    assert text.money(12.5, known=True) == "$12.50"
    assert text.money(0.0, known=False) == "unknown"
    assert text.money(0.002, known=False) == "unknown (at least $0.0020 for the priced calls)"


def test_wall_time() -> None:
    assert text.wall_time("2024-05-01T10:00:00+00:00", "2024-05-01T10:01:05+00:00") == "1 min 05 s"
    assert text.wall_time("2024-05-01T10:00:00+00:00", None) == "unfinished"
    assert text.wall_time("yesterday", "today") == "unknown"
    assert text.wall_time("2024-05-01T10:00:00", "2024-05-01T10:01:05+00:00") == "unknown"


def test_plural() -> None:
    assert text.plural(1, "test") == "1 test"
    assert text.plural(1_200, "check") == "1,200 checks"


def test_a_tail_is_bounded_in_lines_and_characters() -> None:
    log = "\n".join(f"line {i} " + "y" * 1_000 for i in range(10)) + "\n"

    excerpt = text.tail_excerpt(log, total_bytes=len(log), truncated=False, lines=3)

    assert excerpt.shown == 3 and excerpt.total_lines == 10
    assert [line[:6] for line in excerpt.text.splitlines()] == ["line 7", "line 8", "line 9"]
    assert all(len(line) == text.LINE_CHARS for line in excerpt.text.splitlines())
    assert excerpt.header == f"last 3 of 10 lines, {len(log):,} bytes"


def test_a_tail_drops_colour_codes_and_control_characters() -> None:
    excerpt = text.tail_excerpt(
        "\x1b[31merror\x1b[0m\x00 here\r\n\tindented", total_bytes=30, truncated=False
    )

    assert excerpt.text == "error here\n    indented"
    assert excerpt.header == "2 lines, 30 bytes"


def test_an_empty_stream_has_no_lines() -> None:
    excerpt = text.tail_excerpt("", total_bytes=0, truncated=False)

    assert (excerpt.text, excerpt.shown, excerpt.total_lines) == ("", 0, 0)


def test_a_huge_single_line_tail_is_fast_and_bounded() -> None:
    started = time.perf_counter()
    excerpt = text.tail_excerpt("z" * 50_000_000, total_bytes=50_000_000, truncated=True)

    assert time.perf_counter() - started < 2
    assert len(excerpt.text) == text.LINE_CHARS
    assert excerpt.header == "1 line, 50,000,000 bytes, middle dropped by the sandbox"


def test_a_diff_is_bounded_with_its_counts() -> None:
    old = "\n".join(f"a{i}" for i in range(500))
    new = "\n".join(f"b{i}" for i in range(500))

    diff = text.unified_diff(old, new, old_name="attempt 1", new_name="attempt 2", limit=50)

    assert diff.text.splitlines()[:2] == ["--- attempt 1", "+++ attempt 2"]
    assert len(diff.text.splitlines()) == 50
    assert (diff.added, diff.removed) == (500, 500)
    assert diff.more == 1_003 - 50  # two file lines, one hunk header, 1,000 changed lines


def test_head_lines() -> None:
    assert text.head_lines("a\nb\nc", 2) == ("a\nb", 1)
    assert text.head_lines("a", 5) == ("a", 0)
