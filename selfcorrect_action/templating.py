"""Render the Jinja2 templates shipped in templates/ (prompts/ and reports/).

Prompts are never assembled by string concatenation in code: the wording lives in a template
where it can be read and reviewed as a whole.
"""

from __future__ import annotations

import functools
import re

import jinja2

from selfcorrect_action.markdown import FILTERS as MARKDOWN_FILTERS
from selfcorrect_action.resources import templates_dir


def tail_lines(text: str, count: int = 20) -> str:
    """The last `count` lines: the end of a log is where the failure is."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= count:
        return "\n".join(lines)
    return f"[... {len(lines) - count} earlier lines ...]\n" + "\n".join(lines[-count:])


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: object) -> str:
    """Control characters shown as '?': script output and file names printed to a terminal
    must not clear the screen, retitle the window or fake lines (ESC, BEL, CR, NUL...)."""
    return _CONTROL.sub("?", str(text))


def shorten(text: str, width: int) -> str:
    """At most `width` characters, cut at a word boundary with an ellipsis: progress lines
    used to be cut mid-word (issue 9)."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > width // 2 else cut).rstrip(" ,;:") + "…"


def one_line(text: object) -> str:
    """terminal_safe, with newlines and tabs shown as \\n and \\t: a value printed inside a
    line (a file name, a check) must not start lines of its own, e.g. a fake 'PASSED'."""
    return terminal_safe(str(text).replace("\n", "\\n").replace("\t", "\\t"))


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        # A misspelt variable must fail the render, not send the model an empty gap.
        undefined=jinja2.StrictUndefined,
        # Prompts and Markdown are not HTML: escaping would send the model "&lt;" for "<".
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "xml"), default_for_string=False, default=False
        ),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tail_lines"] = tail_lines
    env.filters["terminal_safe"] = terminal_safe
    env.filters["one_line"] = one_line
    env.filters["prefix"] = lambda text, head: f"{head}{text}"
    env.filters.update(MARKDOWN_FILTERS)  # fenced, md_inline, md_code, md_quote
    return env


def render(name: str, **context: object) -> str:
    """Render ``templates/<name>``, e.g. ``render("prompts/json_repair.j2", problem=...)``."""
    return environment().get_template(name).render(**context)
