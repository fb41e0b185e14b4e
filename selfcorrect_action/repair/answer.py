"""A repair answer: whole files, each a fenced block named by a `File: <path>` line above it
(or by a path in the fence's info string). Pure.

Whole files, never diffs: a peer's first version applied model-written diffs and found them
its most fragile part; the diff is computed afterwards, for the review and the audit. Fences
follow CommonMark (a closing fence is at least as long as the opening one), so a file that
itself holds ``` is sent in a ```` fence. The answer is untrusted text: it is read line by
line, with no backtracking regular expression over the whole of it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

MAX_FILES = 20
MAX_FILE_CHARS = 400_000
MAX_HEADER_CHARS = 300
_LANGUAGES = frozenset({"python", "py", "python3", "text", ""})
# `File: src/x.py`, `### src/x.py`, `**src/x.py**`, `` `src/x.py` ``, `src/x.py:`
_HEADER = re.compile(r"(?:#{1,6}\s*)?(?:\*\*)?(?:file(?:name)?\s*:\s*)?[`*'\"]*"
                     r"(?P<path>[\w./-]+\.\w+)[`*'\"]*:?(?:\*\*)?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedAnswer:
    files: dict[str, str] = field(default_factory=dict)  # path -> whole new content
    problems: list[str] = field(default_factory=list)


def parse_answer(text: str, *, only_file: str | None = None) -> ParsedAnswer:
    """The files an answer rewrites. `only_file`: the one file the run expects, which a
    single block that names no path is taken to be."""
    files: dict[str, str] = {}
    problems: list[str] = []
    unnamed: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")
    index, header = 0, ""
    while index < len(lines):
        line = lines[index]
        opened = _opening(line)
        if opened is None:
            if line.strip():
                header = line
            index += 1
            continue
        fence, info = opened
        body, index = _block(lines, index + 1, fence)
        path = _info_path(info) or _header_path(header)
        header = ""
        if path is None:
            unnamed.append(body)
        elif path in files:
            problems.append(f"{path} is given twice; give each file once, whole")
        else:
            files[path] = body
    if unnamed:
        if only_file is not None and not files and len(unnamed) == 1:
            files[only_file] = unnamed[0]
        else:
            problems.append(f"{len(unnamed)} code block(s) name no file: put `File: <path>` "
                            "on the line above each block")
    problems += _size_problems(files)
    return ParsedAnswer(files, problems)


def _opening(line: str) -> tuple[str, str] | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    for char in ("`", "~"):
        run = len(stripped) - len(stripped.lstrip(char))
        if run >= 3:
            info = stripped[run:].strip()
            if char == "`" and "`" in info:
                return None
            return char * run, info
    return None


def _block(lines: list[str], start: int, fence: str) -> tuple[str, int]:
    """The block's text and the index after its closing fence (the end of the answer when
    it is never closed: a cut-off answer keeps what it has, and fails to parse as Python)."""
    for index in range(start, len(lines)):
        stripped = lines[index].strip()
        if (stripped.startswith(fence) and set(stripped) == {fence[0]}
                and len(lines[index]) - len(lines[index].lstrip(" ")) <= 3):
            return _text(lines[start:index]), index + 1
    return _text(lines[start:]), len(lines)


def _text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def _info_path(info: str) -> str | None:
    """```python src/x.py, ```src/x.py, ```python title="src/x.py"."""
    words = info.replace('"', " ").replace("'", " ").replace("=", " ").split()
    for word in words:
        if word.casefold() not in _LANGUAGES and "." in word and word.casefold() != "title":
            return normal_path(word)
    return None


def _header_path(header: str) -> str | None:
    """The path the line above a block names: the whole line (`File: x.py`, `### x.py`),
    else its last word when that is a Python file (`Here is src/x.py:`)."""
    header = header.strip()
    if not header or len(header) > MAX_HEADER_CHARS:
        return None
    match = _HEADER.fullmatch(header)
    if match:
        return normal_path(match.group("path"))
    last = header.split()[-1].strip("`*'\":")
    return normal_path(last) if last.endswith(".py") else None


def normal_path(path: str) -> str:
    """The path as the repository names it: no `./`, no sandbox prefix."""
    path = path.strip().removeprefix("/work/")
    return str(PurePosixPath(path)) if path else path


def _size_problems(files: dict[str, str]) -> list[str]:
    problems = []
    if len(files) > MAX_FILES:
        problems.append(f"the answer rewrites {len(files)} files; at most {MAX_FILES} in one "
                        "attempt")
    problems += [f"{path} is {len(text):,} characters; a rewritten file may have at most "
                 f"{MAX_FILE_CHARS:,}" for path, text in files.items()
                 if len(text) > MAX_FILE_CHARS]
    return problems


def unified_diff(originals: dict[str, str], rewritten: dict[str, str]) -> str:
    """The rewritten files against the repository's, in path order, as `git diff` shows
    them (a/ and b/ prefixes)."""
    parts: list[str] = []
    for path in sorted(rewritten):
        before = originals.get(path, "").splitlines(keepends=True)
        after = rewritten[path].splitlines(keepends=True)
        parts.extend(_with_newline(line) for line in difflib.unified_diff(
            before, after, fromfile=f"a/{path}", tofile=f"b/{path}"))
    return "".join(parts)


def _with_newline(line: str) -> str:
    return line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
