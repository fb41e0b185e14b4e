"""Rendering the viewer's HTML: Jinja2 with autoescaping always on (everything the pages
quote was written by a model or a script), the style sheet and the index's script inlined,
and a Content Security Policy that allows exactly those, by hash, and images from data:
URIs; nothing is fetched from anywhere.

The policy is what keeps an escaping mistake from becoming script execution: an injected
<script> or on* attribute is refused by the browser even if it ever reached the page.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re

import jinja2
from markupsafe import Markup, escape

from selfcorrect_action.resources import templates_dir

STYLE = "viewer/viewer.css"
INDEX_SCRIPT = "viewer/index.js"
# Where a long path, test id or model name may break across lines (issue 38): after a
# separator that has text on both sides. Table cells never break inside a word.
_BREAK_AFTER = re.compile(r"(?<=\S)([/_-])(?=\S)")


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_dir()),
        undefined=jinja2.StrictUndefined,
        # Whatever the template's name: these pages are HTML, every value is escaped.
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["breakable"] = breakable
    return env


def breakable(value: object) -> Markup:
    """`value` as escaped text with a <wbr> after each `/`, `-` and `_` inside it: a path or
    a hash wraps there, never mid-word. Escaped first, so the <wbr> are the only markup
    (an escaped entity holds none of the three characters)."""
    return Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(escape(str(value)))))


@functools.cache
def asset(name: str) -> str:
    return (templates_dir() / name).read_text(encoding="utf-8")


def source_hash(source: str) -> str:
    """The CSP hash source of an inline <style> or <script> whose text is `source`."""
    digest = hashlib.sha256(source.encode()).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def policy(*, script: str | None = None) -> str:
    """default-src 'none': no fetch, frame, font or connection of any kind. Only the inline
    style sheet (and the index's script) run, named by hash."""
    scripts = source_hash(script) if script is not None else "'none'"
    return ("default-src 'none'; img-src data:; "
            f"style-src {source_hash(asset(STYLE))}; script-src {scripts}; "
            "base-uri 'none'; form-action 'none'")


def render_html(template: str, *, script: str | None = None, **context: object) -> str:
    """`template` with the style sheet, the script (by its asset name) and the policy."""
    code = asset(script) if script is not None else None
    return environment().get_template(template).render(
        style=Markup(asset(STYLE)), script=Markup(code) if code is not None else None,
        csp=policy(script=code), **context)
