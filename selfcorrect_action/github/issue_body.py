"""An issue body as lines, and what is where in it: CommonMark code fences and the issue
form's headings outside them. Read line by line, never with a backtracking regex: the body
is untrusted text."""

from __future__ import annotations

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

