"""Markdown quoting: hostile text stays inside the block or cell it is quoted in."""

from __future__ import annotations

import re

import pytest

from selfcorrect_action.markdown import (
    fence_for,
    fenced,
    md_code,
    md_inline,
    md_quote,
    no_closing_keywords,
)
from selfcorrect_action.templating import environment


def test_the_fence_is_longer_than_any_backtick_run_inside() -> None:
    assert fence_for("print('hi')") == "```"
    assert fence_for("```python\nx\n```") == "````"
    assert fence_for("a ````` b") == "``````"


def test_fenced_text_cannot_close_its_block() -> None:
    block = fenced("before\n```\nafter\n", "text")

    assert block == "````text\nbefore\n```\nafter\n````"


def test_an_empty_fenced_block_is_still_a_block() -> None:
    assert fenced("", "python") == "```python\n```"


def test_inline_text_is_flattened_and_escaped() -> None:
    text = "KeyError at chart.py:3 in <module>:\n  df['a|b'] * __init__ [x](y) `z` ~s~"

    assert md_inline(text) == (
        "KeyError at chart.py:3 in \\<module\\>: df\\['a\\|b'\\] \\* \\_\\_init\\_\\_ "
        "\\[x\\](y) \\`z\\` \\~s\\~"
    )


def test_inline_escapes_ampersand_only_before_an_entity() -> None:
    assert md_inline("AT&T &lt;b&gt; &#60;") == "AT&T \\&lt;b\\&gt; \\&#60;"


def test_code_span_survives_backticks() -> None:
    assert md_code("chart.png") == "`chart.png`"
    assert md_code("a `b` c") == "``a `b` c``"
    assert md_code("`edge`") == "`` `edge` ``"
    assert md_code("  ") == ""


def test_quoted_prose_cannot_open_html() -> None:
    quoted = md_quote("Plot sales.\n\n<details> stays text, a < b stays\n")

    assert quoted == "> Plot sales.\n>\n> \\<details> stays text, a < b stays"


def test_the_filters_are_registered() -> None:
    template = environment().from_string("{{ t | fenced('py') }}|{{ t | md_code }}")

    assert template.render(t="x") == "```py\nx\n```|`x`"


def test_quoted_text_mentions_nobody() -> None:
    from selfcorrect_action.markdown import md_inline

    assert md_inline("ping @octo-org/maintainers and @bob") == (
        "ping @\u2060octo-org/maintainers and @\u2060bob")
    assert md_inline("mail a@b.example") == "mail a@\u2060b.example"


@pytest.mark.parametrize("text", [
    "Fixes #123", "closes: #9", "Resolved owner/repo#4", "fix https://github.com/o/r/issues/2",
    "please FIX  #7 and close #8", "Fixes:#1", "**Fixes** #1", "Fixes **#1**",
    "Fixes [#1](https://x)", "Fixes\u00a0#1", "Fixes <https://github.com/o/r/issues/1>",
    "Fixes o/my\\_repo#1", "Fix GH-1",
])
def test_quoted_text_closes_no_issue(text: str) -> None:
    neutral = no_closing_keywords(text)
    assert neutral.replace("\u2060", "") == text
    assert not re.search(r"(?i)\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\b", neutral)


@pytest.mark.parametrize("text", ["Fix the parser", "fixes for #-less text", "prefix #3",
                                  "closest #1 match"])
def test_words_that_close_nothing_are_left_alone(text: str) -> None:
    assert no_closing_keywords(text) == text


def test_inline_text_never_carries_an_html_comment_opening() -> None:
    """A spec-problems comment quoted `<!-- selfcorrect:approved sha256=...`: the newest
    comment of ours holding that prefix then hid the real approval from a retry."""
    assert "<!--" not in md_inline("kind: '<!-- selfcorrect:approved sha256=ab -->'")
