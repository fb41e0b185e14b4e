"""Structural checks on rendered Markdown: fences and collapsible blocks balanced, nothing
left of the template machinery outside code."""

from __future__ import annotations

import re

_OPEN = re.compile(r"(`{3,})[A-Za-z]*$")
_ARTEFACTS = (
    "None",
    "{{",
    "}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "Undefined",
    "[]",
    "<built-in",
    "object at 0x",
)


def split_code(markdown: str) -> tuple[str, list[str]]:
    """(prose, code blocks). Raises AssertionError when a fence is left open: the rest of
    the document would render as code."""
    prose: list[str] = []
    blocks: list[str] = []
    fence = ""
    body: list[str] = []
    for line in markdown.splitlines():
        if not fence:
            opened = _OPEN.match(line)
            if opened:
                fence, body = opened.group(1), []
            else:
                prose.append(line)
        elif line.startswith(fence) and set(line.strip()) == {"`"}:
            # CommonMark: a closing fence is at least as long as the opening one.
            blocks.append("\n".join(body))
            fence = ""
        else:
            body.append(line)
    assert not fence, f"code fence {fence!r} never closed"
    return "\n".join(prose), blocks


def assert_well_formed(markdown: str) -> None:
    prose, _ = split_code(markdown)
    assert markdown.count("<details>") == markdown.count("</details>") > 0 or (
        "<details>" not in markdown
    )
    assert prose.count("<summary>") == prose.count("</summary>")
    for artefact in _ARTEFACTS:
        assert artefact not in prose, f"{artefact!r} in the report's prose"


def attempt_sections(markdown: str) -> list[str]:
    """The text of each `### Attempt N` section, in order."""
    parts = re.split(r"^### Attempt ", markdown, flags=re.MULTILINE)[1:]
    return [part.split("\n## Outcome", 1)[0] for part in parts]
