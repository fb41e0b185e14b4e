"""The code in a model's answer: fences and chatter stripped, whatever the model wrapped
around it. Pure; the answer is untrusted text."""

from __future__ import annotations

import ast
import itertools
import re

_FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*([A-Za-z0-9_+-]*)[^\n]*$", re.MULTILINE)
_PYTHON_TAGS = {"python", "py", "python3", ""}


def extract_code(answer: str) -> str:
    """The Python file in `answer`: the longest fenced block tagged python (or untagged),
    else the longest fenced block, else the whole answer. An answer cut off inside a fence
    (max_tokens reached) yields what was there, which then fails honestly as a syntax error."""
    blocks = _fenced_blocks(answer)
    if not blocks:
        return _normalise(answer)
    python = [body for tag, body in blocks if tag.lower() in _PYTHON_TAGS]
    chosen = max(python or [body for _, body in blocks], key=len)
    return _normalise(chosen)


def has_fence(answer: str) -> bool:
    return _FENCE.search(answer) is not None


def _fenced_blocks(answer: str) -> list[tuple[str, str]]:
    blocks: list[tuple[str, str]] = []
    position = 0
    while True:
        opening = _FENCE.search(answer, position)
        if opening is None:
            return blocks
        fence, tag = opening.group(1), opening.group(2)
        closing = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        ends = list(itertools.islice(closing.finditer(answer, opening.end()), MAX_CLOSINGS))
        end = _closing_for(answer, opening.end() + 1, ends, python=tag.lower() in _PYTHON_TAGS)
        body_end = end.start() if end else len(answer)
        blocks.append((tag, answer[opening.end() + 1 : body_end]))
        if end is None:
            return blocks
        position = end.end()


# A script that writes Markdown can hold fence lines of its own, inside a string.
MAX_CLOSINGS = 20


def _closing_for(answer: str, start: int, ends: list[re.Match[str]], *, python: bool
                 ) -> re.Match[str] | None:
    """The fence that closes a block: the first one, unless the block is Python that only
    parses when a later fence closes it (the earlier ones are inside its strings)."""
    if not ends or not python or _parses(answer[start : ends[0].start()]):
        return ends[0] if ends else None
    return next((end for end in ends[1:] if _parses(answer[start : end.start()])), ends[0])


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _normalise(code: str) -> str:
    code = code.replace("\r\n", "\n").strip("\n")
    return code.rstrip() + "\n" if code.strip() else ""
