"""The `files:` globs of a repair spec, matched against paths relative to the repository
root. Pure.

Every glob is anchored at the root (`*.py` is the root's Python files, `src/**/*.py` every
one under src/): the globs say what a model may rewrite, so a pattern that silently also
matched at any depth, as a .gitignore line does, would hand out more than was written.
`*` and `?` never cross a `/`; `**` as a whole segment matches any number of folders,
none included; `[abc]` is a character class.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable


@functools.lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """The compiled regular expression a whole path must match for `pattern`."""
    parts = pattern.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            # `a/**` is everything under a/; `**/b` and `a/**/b` take zero or more folders.
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        out.append(_segment(part) + ("" if last else "/"))
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _segment(part: str) -> str:
    regex, i = [], 0
    while i < len(part):
        char = part[i]
        if char == "*":
            regex.append("[^/]*")
        elif char == "?":
            regex.append("[^/]")
        elif char == "[" and (end := part.find("]", i + 2)) != -1:
            inside = part[i + 1:end]
            negate = inside.startswith(("!", "^"))
            body = re.escape(inside[1:] if negate else inside).replace(r"\-", "-")
            regex.append(f"[{'^' if negate else ''}{body}]")
            i = end
        else:
            regex.append(re.escape(char))
        i += 1
    return "".join(regex)


def matches(pattern: str, path: str) -> bool:
    return glob_regex(pattern).match(path) is not None


def matching(patterns: Iterable[str], paths: Iterable[str]) -> list[str]:
    """The paths any pattern matches, in the order given."""
    compiled = [glob_regex(pattern) for pattern in patterns]
    return [path for path in paths if any(regex.match(path) for regex in compiled)]
