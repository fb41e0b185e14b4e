"""The code in a model's answer: fences and chatter stripped, whatever the model wrapped
around it. Pure; the answer is untrusted text."""

from __future__ import annotations

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


def _fenced_blocks(answer: str) -> list[tuple[str, str]]:
    blocks: list[tuple[str, str]] = []
    position = 0
    while True:
        opening = _FENCE.search(answer, position)
        if opening is None:
            return blocks
        fence, tag = opening.group(1), opening.group(2)
        closing = re.compile(rf"^{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(answer, opening.end())
        body_end = end.start() if end else len(answer)
        blocks.append((tag, answer[opening.end() + 1 : body_end]))
        if end is None:
            return blocks
        position = end.end()


def _normalise(code: str) -> str:
    code = code.replace("\r\n", "\n").strip("\n")
    return code.rstrip() + "\n" if code.strip() else ""
