"""An issue body as lines, and what is where in it: CommonMark code fences and the issue
form's headings outside them. Read line by line, never with a backtracking regex: the body
is untrusted text."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from selfcorrect_action.errors import SpecError
from selfcorrect_action.github.issue_fields import (
    BY_HEADING,
    MAX_BODY_CHARS,
    USE_FORM_HINT,
    FormField,
)


def body_lines(number: int, body: str | None) -> list[str]:
    if body is not None and len(body) > MAX_BODY_CHARS:
        raise SpecError([
            f"issue #{number}: the issue body is {len(body):,} characters, more than the "
            f"{MAX_BODY_CHARS:,} GitHub allows\n  hint: describe the task in fewer words; "
            "put data in a file of the repository and list it under Input files (inputs:)"])
    if body is None or not body.strip():
        raise SpecError([f"issue #{number}: the issue has no body\n  hint: {USE_FORM_HINT}"])
    return body.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@dataclass
class Fence:
    """A fenced code block: `opened` is the index of its opening line, `closed` of its
    closing one (None: it runs to the end of the body, as CommonMark has it)."""

    char: str
    length: int
    info: str
    opened: int
    closed: int | None = None
    swallowed: list[FormField] = field(default_factory=list)  # form headings in it


@dataclass(frozen=True)
class Scan:
    lines: list[str]
    headings: list[tuple[int, FormField]]  # form headings outside code blocks
    fences: list[Fence]


def scan_body(lines: list[str]) -> Scan:
    """One pass: code blocks, and the form's headings outside them (a `### Task` inside a
    user's ```yaml block is a YAML comment, not a section)."""
    headings: list[tuple[int, FormField]] = []
    fences: list[Fence] = []
    current: Fence | None = None
    for index, line in enumerate(lines):
        if current is not None:
            if closes(line, current):
                current.closed, current = index, None
            elif (inside := heading(line)) is not None:
                current.swallowed.append(inside)
        elif (opened := opens(line, index)) is not None:
            fences.append(opened)
            current = opened
        elif (found := heading(line)) is not None:
            headings.append((index, found))
    return Scan(lines, headings, fences)


def indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def opens(line: str, index: int) -> Fence | None:
    """A CommonMark fence opening: up to 3 spaces, then 3 or more ` or ~, then the info."""
    stripped = line.lstrip(" ")
    char = stripped[:1]
    if indent(line) > 3 or char not in ("`", "~"):
        return None
    length = len(stripped) - len(stripped.lstrip(char))
    info = stripped[length:].strip()
    if length < 3 or (char == "`" and "`" in info):
        return None
    return Fence(char, length, info, index)


def closes(line: str, fence: Fence) -> bool:
    run = line.strip(" \t")
    return (indent(line) <= 3 and len(run) >= fence.length
            and run == fence.char * len(run))


def heading(line: str) -> FormField | None:
    stripped = line.lstrip(" ")
    if indent(line) > 3 or not stripped.startswith("### "):
        return None
    return BY_HEADING.get(stripped[4:].strip().casefold())


def inside(lines: list[str], fence: Fence) -> list[str]:
    end = len(lines) if fence.closed is None else fence.closed
    return lines[fence.opened + 1 : end]


def leading_blank(lines: Sequence[str]) -> int:
    return next((i for i, line in enumerate(lines) if line.strip()), len(lines))


# --- what GitHub would not show ------------------------------------------------------------
# Approval is a person labelling an issue they read: text GitHub renders invisibly would run
# without being seen. A red team hid a whole ```yaml spec (network open, its own output) in
# an HTML comment above a harmless one, and instructions in the Task field the same way.
# Each pattern is linear (one character class after a literal): the body is untrusted.
_RAW_HTML = re.compile(r"<(?:!|\?|/?[A-Za-z][A-Za-z0-9-]*(?=[\s/>]|$))")
_LINK_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:")
HIDDEN_HINT = ("whoever approves the issue cannot see what it says: remove it, or put it in "
               "`backticks` or a code block, where GitHub shows it as written")


def hidden_text(scan: Scan) -> list[tuple[int, str]]:
    """(0-based line, what it is) for each line outside code blocks that holds text GitHub
    would hide: raw HTML (a comment, a tag, whose attributes and unknown elements are not
    shown), or a link reference definition (never rendered). Code spans are shown as
    written, so what is inside them is left alone."""
    in_fence: set[int] = set()
    for fence in scan.fences:
        end = len(scan.lines) if fence.closed is None else fence.closed + 1
        in_fence.update(range(fence.opened, end))
    found = []
    for index, line in enumerate(scan.lines):
        if index in in_fence:
            continue
        if _LINK_DEFINITION.match(line):
            found.append((index, "a link reference definition"))
            continue
        visible = without_code_spans(line)
        if (tag := _RAW_HTML.search(visible)) is not None:
            shown = "an HTML comment" if visible.startswith("<!--", tag.start()) else (
                f"raw HTML ({tag.group()}...)")
            found.append((index, shown))
    return found


def without_code_spans(line: str) -> str:
    """`line` with its code spans (a run of n backticks up to the next run of exactly n)
    blanked out; an unmatched run is literal text, as CommonMark has it. Linear: each run is
    matched against the next run of its length, found by one backwards pass."""
    runs = []  # (start, length)
    at = 0
    while (at := line.find("`", at)) != -1:
        end = at
        while end < len(line) and line[end] == "`":
            end += 1
        runs.append((at, end - at))
        at = end
    following: list[int | None] = [None] * len(runs)
    seen: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        following[i] = seen.get(runs[i][1])
        seen[runs[i][1]] = i
    kept, last, i = [], 0, 0
    while i < len(runs):
        j = following[i]
        if j is None:
            i += 1
            continue
        start, end = runs[i][0], runs[j][0] + runs[j][1]
        kept.append(line[last:start])
        kept.append(" " * (end - start))
        last, i = end, j + 1
    kept.append(line[last:])
    return "".join(kept)
