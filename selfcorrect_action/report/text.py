"""Small pure formatters for the reports: durations, money, log tails and bounded diffs.

Every quote of a log or of code is bounded here, whatever its size: a script that prints
100,000 lines must not make a 10 MB AUDIT.md (GitHub stops rendering files past 512 KB and
comments past 65,536 characters).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

TAIL_LINES = 40
LINE_CHARS = 300
DIFF_LINES = 200
CODE_LINES = 1_000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def number(value: int) -> str:
    return f"{value:,}"


def plural(count: int, noun: str) -> str:
    return f"{number(count)} {noun}{'' if count == 1 else 's'}"


def duration(ms: int) -> str:
    """`850 ms`, `12.3 s`, `2 min 05 s`, `1 h 02 min`."""
    if ms < 1_000:
        return f"{ms} ms"
    seconds = ms / 1_000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def money(usd: float, *, known: bool) -> str:
    """Dollars; "unknown" when a model had no price (what was priced is a lower bound)."""
    amount = "$0.00" if usd == 0 else f"${usd:.4f}" if usd < 1 else f"${usd:,.2f}"
    if known:
        return amount
    return f"unknown (at least {amount} for the priced calls)" if usd > 0 else "unknown"


def wall_time(started_at: str, finished_at: str | None) -> str:
    if not finished_at:
        return "unfinished"
    try:
        elapsed = datetime.fromisoformat(finished_at) - datetime.fromisoformat(started_at)
    except (ValueError, TypeError):  # TypeError: one timestamp has a zone, the other none
        return "unknown"
    return duration(max(0, round(elapsed.total_seconds() * 1_000)))


def clean(text: str) -> str:
    """Printable text: colour codes and control characters (which a terminal would
    interpret, and Markdown cannot show) removed, CRLF made LF, tabs made spaces."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\t", "    "))
    return _CONTROL.sub("", text)


@dataclass(frozen=True)
class Excerpt:
    """The end of a stream, bounded, with what it leaves out."""

    text: str
    shown: int
    total_lines: int
    total_bytes: int
    truncated: bool  # the sandbox itself kept only the head and tail of the stream

    @property
    def header(self) -> str:
        size = f"{number(self.total_bytes)} bytes"
        lines = "line" if self.total_lines == 1 else "lines"
        part = f"{number(self.total_lines)} {lines}"
        if self.shown < self.total_lines:
            part = f"last {number(self.shown)} of {part}"
        cut = ", middle dropped by the sandbox" if self.truncated else ""
        return f"{part}, {size}{cut}"


def tail_excerpt(
    text: str, *, total_bytes: int, truncated: bool, lines: int = TAIL_LINES
) -> Excerpt:
    """The last `lines` lines, each cut to LINE_CHARS. rsplit with a limit scans from the
    end only, so a huge stream costs no more than a short one."""
    body = text.rstrip()
    tail = body.rsplit("\n", lines)[-lines:] if body else []
    total = body.count("\n") + 1 if body else 0
    shown = [_cut_line(clean(line[: LINE_CHARS * 4])) for line in tail]
    return Excerpt("\n".join(shown), len(shown), total, total_bytes, truncated)


def head_lines(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` lines and how many more there are."""
    lines = text.splitlines()
    return "\n".join(lines[:limit]), max(0, len(lines) - limit)


class Diff(NamedTuple):
    text: str  # the first lines of the unified diff, each cut to LINE_CHARS
    more: int  # diff lines left out
    added: int
    removed: int


def unified_diff(
    old: str, new: str, *, old_name: str, new_name: str, limit: int = DIFF_LINES
) -> Diff:
    """A unified diff with 3 lines of context, bounded, with its +/- counts."""
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=old_name, tofile=new_name, lineterm=""
        )
    )
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    shown = [_cut_line(clean(line[: LINE_CHARS * 4])) for line in lines[:limit]]
    return Diff("\n".join(shown), max(0, len(lines) - limit), added, removed)


def clip(text: str, limit: int) -> str:
    """At most `limit` characters and a note of what was left out: a model's reasoning or an
    evidence string can be of any length in a run.json (issue 22: a hostile one)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{number(len(text) - limit)} more characters, in run.json]"


def _cut_line(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"
