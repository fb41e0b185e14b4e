"""GitHub-flavoured Markdown quoting for the report templates (AUDIT.md, summaries, comments).

Reports quote text nobody controls: the model's code, the script's output, evidence that names
`<module>`, a judge's prose. Quoted raw, a ``` in stdout ends our code block early and the rest
of the report renders as code; a `<details>` in a log swallows the sections after it; a `|`
splits a table cell. These helpers make such text inert, each for one place it can appear.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

_BACKTICK_RUN = re.compile(r"`+")
# Inline punctuation that GFM gives a meaning to (emphasis, links, code, tables, HTML, strike),
# and `&` only where it would start an entity: escaping every `&` makes "AT\&T" for nothing.
_INLINE_SPECIAL = re.compile(r"[\\`*_\[\]<>|~]|&(?=#?[A-Za-z0-9]+;)")
# A `<` that could open an HTML tag or comment; other `<` (a < b) render as they are.
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_WHITESPACE = re.compile(r"\s+")
_FENCE_LINE = re.compile(r" {0,3}(?:```|~~~)")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")


_FENCE_RUN = re.compile(r"`{3,}")


def defang_fences(text: str) -> str:
    """Runs of three or more backticks as ''': quoted output, previews and logs in
    a prompt must not close the prompt's own code blocks (the model would read what
    follows as our instructions)."""
    return _FENCE_RUN.sub("'''", text)


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in `text`, so the text cannot close it."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def fenced(text: str, info: str = "") -> str:
    """`text` as a fenced code block (no trailing newline), whatever backticks it holds."""
    fence = fence_for(text)
    body = text.rstrip("\n")
    return f"{fence}{info}\n{body}\n{fence}" if body else f"{fence}{info}\n{fence}"


def md_inline(text: str) -> str:
    """One line of plain text, safe in a sentence or a table cell: whitespace (newlines
    included) collapsed, Markdown and HTML punctuation backslash-escaped."""
    flat = _WHITESPACE.sub(" ", text).strip().replace("<!--", "<!\u2060--")  # see md_code
    escaped = _INLINE_SPECIAL.sub(lambda match: "\\" + match.group(), flat)
    # Quoted text must not mention anyone: "@org/team" in an issue would notify the team
    # through the bot's comment. A word joiner after @ keeps it readable.
    return _MENTION.sub("@\u2060", escaped)


def md_code(text: str) -> str:
    """An inline code span (outside tables: a `|` there needs md_inline instead)."""
    flat = _WHITESPACE.sub(" ", text).strip()
    if not flat:
        return ""
    # Shown as typed in the span, but a reader of the raw body (ours: approval and report
    # markers are HTML comments) must never find a comment opening in quoted text.
    flat = flat.replace("<!--", "<!\u2060--")
    ticks = "`" * (max((len(run) for run in _BACKTICK_RUN.findall(flat)), default=0) + 1)
    # A span that starts or ends with a backtick needs a space between it and the fence.
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def md_quote(text: str) -> str:
    """Prose (a prompt, a plan, a judge's reasoning) as a blockquote: its own Markdown still
    renders, but it stays inside the quote and cannot open HTML tags. Code spans and fenced
    blocks in it are left alone: a `<` there is shown as typed, a backslash would show too."""
    lines, in_fence = [], False
    for line in text.strip().splitlines():
        line = line.rstrip()
        if _FENCE_LINE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            line = _outside_code_spans(line, lambda part: _TAG_OPEN.sub(r"\\<", part))
        lines.append(f"> {line}" if line else ">")
    return "\n".join(lines)


def _outside_code_spans(line: str, change: Callable[[str], str]) -> str:
    parts, position = [], 0
    for start, end in _code_spans(line):
        parts += [change(line[position:start]), line[start:end]]
        position = end
    return "".join([*parts, change(line[position:])])


def _code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each code span: a backtick run closed by the next run of the same
    length. Runs are paired by index, not by a backtracking regex: linear in the line."""
    runs = [(match.start(), match.end()) for match in _BACKTICK_RUN.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for i, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(i)
    spans, i = [], 0
    while i < len(runs):
        start, end = runs[i]
        same = by_length[end - start]
        later = bisect.bisect_right(same, i)
        if later == len(same):
            i += 1
            continue
        spans.append((start, runs[same[later]][1]))
        i = same[later] + 1
    return spans


# GitHub closes an issue when a commit on the default branch, or a merged pull request's
# description, says "fixes #12" (or owner/repo#12, or the URL). Quoted text (an
# issue's title in our commit message, a prompt in the pull request's summary) must not: a
# title "Fixes #123" closed issue #123 when the pull request was merged.
# Between the keyword and the reference: a colon, spaces of any kind, and the Markdown
# around either (**Fixes** #1, Fixes [#1](...), Fixes <https://...>), which GitHub may read
# through; a repository's name may arrive escaped (my\_repo) from md_inline.
_CLOSING = re.compile(r"\b(close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b(?=[\s:*_~`\[\]()<>]{0,12}"
                      r"(?:(?:[\w.\\-]+/[\w.\\-]+)?#[0-9]|gh-[0-9]|https?://))",
                      re.IGNORECASE)


def no_closing_keywords(text: str) -> str:
    """`text` with a word joiner inside each closing keyword that names an issue: it reads
    the same and closes nothing."""
    return _CLOSING.sub(lambda match: match.group()[0] + "\u2060" + match.group()[1:], text)


FILTERS: dict[str, Callable[..., str]] = {
    "fenced": fenced,
    "md_inline": md_inline,
    "md_code": md_code,
    "md_quote": md_quote,
    "no_closing_keywords": no_closing_keywords,
}
