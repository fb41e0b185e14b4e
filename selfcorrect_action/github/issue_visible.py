"""What of an issue body GitHub would not show. Approval is a person labelling an issue they
read, so text rendered invisibly would run without being seen: a red team hid a whole
```yaml spec (network open, an output of its own) in an HTML comment above a harmless one,
then (past a line-based check) in a comment that closes a list item's code block, and
instructions in the Task field behind escaped backticks, link titles and invisible
characters.

The body is parsed as CommonMark by markdown-it-py (GitHub's Markdown is a superset of it;
what GitHub adds, tables, strikethrough, bare links, shows its text), so container blocks,
code spans, escapes and autolinks are told apart as GitHub tells them apart; no regular
expression runs on the body.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

# Code blocks GitHub draws instead of showing (diagrams, formulas, maps, models): their
# text, comments included, is not what the reader sees.
_DRAWN = frozenset({"mermaid", "math", "geojson", "topojson", "stl"})
# TeX that GitHub's math rendering turns into blank space or a colour of the page's.
_INVISIBLE_TEX = ("\\phantom", "\\hphantom", "\\vphantom", "\\color", "\\textcolor")
# The one format character ordinary text uses: it joins emoji (a family, a flag).
_ZERO_WIDTH_JOINER = "\u200d"


@dataclass(frozen=True)
class Shown:
    """A fenced code block as GitHub shows it: the 0-based line of its opening fence, its
    info string and its text."""

    line: int
    info: str
    text: str


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def hidden_text(body: str) -> list[tuple[int, str]]:
    """(0-based line, what it is) for everything GitHub would render invisibly, in order."""
    env: dict[str, object] = {}
    tokens = _parser().parse(body, env)
    found = [*_invisible_characters(body), *_hidden_blocks(tokens)]
    references = env.get("references")
    if isinstance(references, dict):
        for reference in references.values():
            where = reference.get("map") if isinstance(reference, dict) else None
            found.append((where[0] if where else 0, "a link reference definition"))
    return sorted(set(found))


def shown_fences(body: str) -> list[Shown]:
    """The fenced code blocks GitHub shows at the top level of the body, in order."""
    return [Shown(t.map[0], t.info.strip(), t.content) for t in _parser().parse(body, {})
            if t.type == "fence" and t.map is not None and t.level == 0]


def _invisible_characters(body: str) -> list[tuple[int, str]]:
    found = []
    for index, line in enumerate(body.split("\n")):
        for char in line:
            if char != _ZERO_WIDTH_JOINER and unicodedata.category(char) == "Cf":
                found.append((index, f"an invisible character (U+{ord(char):04X})"))
                break
    return found


def _hidden_blocks(tokens: list[Token]) -> list[tuple[int, str]]:
    found = []
    for token in tokens:
        line = token.map[0] if token.map else 0
        if token.type == "html_block":
            found.append((line, _html_kind(token.content)))
        elif token.type in ("fence", "code_block"):
            words = token.info.split()
            if words and words[0].casefold() in _DRAWN:
                found.append((line, f"a ```{words[0]} block, which GitHub draws instead of "
                                    "showing its text"))
            elif len(words) > 1:
                found.append((line, "words after a code block's language"))
        elif token.type == "inline":
            found.extend((line + offset, what) for offset, what in _hidden_inline(token))
    return found


def _hidden_inline(token: Token) -> list[tuple[int, str]]:
    found = []
    offset = 0  # lines into the paragraph, counted by its soft and hard breaks
    children = token.children or []
    for index, child in enumerate(children):
        if child.type in ("softbreak", "hardbreak"):
            offset += 1
        elif child.type == "html_inline":
            found.append((offset, _html_kind(child.content)))
        elif child.type in ("link_open", "image") and child.attrGet("title"):
            found.append((offset, "a link's title (shown only on hover)"))
        elif child.type == "link_open" and index + 1 < len(children) and (
                children[index + 1].type == "link_close"):
            found.append((offset, "a link with no text"))
        elif child.type == "text" and any(tex in child.content for tex in _INVISIBLE_TEX):
            found.append((offset, "TeX that GitHub renders invisibly (\\phantom, \\color)"))
    return found


def _html_kind(content: str) -> str:
    text = content.strip()
    if text.startswith("<!--"):
        return "an HTML comment"
    return f"raw HTML ({text.split()[0][:20] if text else '<'}...)"
