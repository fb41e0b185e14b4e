"""Reading a rendered page back with the standard library's HTML parser (the same tokenizer
rules a browser follows for tags and attributes): which elements and attributes it holds,
its text, and its policy, so tests assert structure rather than substrings."""

from __future__ import annotations

import base64
import hashlib
from html.parser import HTMLParser

# Every element the viewer's templates write; anything else came from the data.
ELEMENTS = frozenset({
    "html", "head", "meta", "title", "style", "body", "header", "nav", "main", "footer",
    "section", "h1", "h2", "h3", "h4", "p", "a", "span", "strong", "code", "pre", "blockquote",
    "ul", "li", "dl", "dt", "dd", "table", "caption", "thead", "tbody", "tr", "th", "td",
    "details", "summary", "figure", "figcaption", "img", "div", "svg", "rect", "line", "text",
    "form", "label", "select", "option", "input", "script",
    "wbr",  # where a long path may wrap (viewer/html.py's `breakable`, issue 38)
})
ATTRIBUTES = frozenset({
    "lang", "charset", "http-equiv", "content", "name", "class", "id", "href", "src", "alt",
    "aria-label", "aria-labelledby", "role", "scope", "viewbox", "x", "y", "x1", "x2", "y1",
    "y2", "width", "height", "text-anchor", "hidden", "type", "value", "data-status",
    "data-spec", "data-started",
    "tabindex",  # a wide table's wrapper, a tab stop to scroll it from the keyboard
    "open",  # a repair attempt's diff, shown unfolded
})


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text_parts: list[str] = []
        self.styles: list[str] = []
        self.scripts: list[str] = []
        self.comments: list[str] = []
        self._in = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        self._in = tag if tag in ("style", "script") else ""

    def handle_endtag(self, tag: str) -> None:
        self._in = ""

    def handle_data(self, data: str) -> None:
        if self._in == "style":
            self.styles.append(data)
        elif self._in == "script":
            self.scripts.append(data)
        else:
            self.text_parts.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.elements if name == tag]

    @property
    def policy(self) -> dict[str, list[str]]:
        (meta,) = [a for a in self.all("meta") if a.get("http-equiv") == "Content-Security-Policy"]
        directives = [part.split() for part in (meta["content"] or "").split(";") if part.strip()]
        return {words[0]: words[1:] for words in directives}


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def sha256_source(text: str) -> str:
    return f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'"


def structure_problems(page: Page) -> list[str]:
    """Elements or attributes the templates never write, links that leave the page, and
    images that are not inline data: what an escaping mistake would let in."""
    problems = [f"element <{tag}>" for tag, _ in page.elements if tag not in ELEMENTS]
    problems += [f"attribute {name} on <{tag}>" for tag, attrs in page.elements
                 for name in attrs if name not in ATTRIBUTES]
    problems += [f"link {attrs['href']!r}" for attrs in page.all("a")
                 if not (attrs.get("href") or "").startswith(("#", "runs/"))]
    problems += [f"image {str(attrs.get('src'))[:40]!r}" for attrs in page.all("img")
                 if not (attrs.get("src") or "").startswith("data:image/")]
    problems += [f"comment {c[:40]!r}" for c in page.comments]
    return problems
