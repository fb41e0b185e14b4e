"""Requests, responses, GitHub-shaped errors, pagination and the route table."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlencode

from .model import Repo, State, Token

DOCS = "https://docs.github.com/rest"
T = TypeVar("T")


@dataclass(frozen=True)
class Links:
    """Where this request came in, so every url field in a body points back at the fake.

    ``root`` is scheme://host:port as the client wrote it (its Host header), ``prefix`` is ""
    or "/api/v3": PyGithub only follows urls whose path starts with its own base_url path.
    """

    root: str
    prefix: str

    @property
    def api(self) -> str:
        return f"{self.root}{self.prefix}"

    def repo_api(self, full_name: str) -> str:
        return f"{self.api}/repos/{full_name}"

    def repo_html(self, full_name: str) -> str:
        return f"{self.root}/{full_name}"


@dataclass
class Request:
    method: str
    path: str  # without the API prefix and the query, still percent-encoded
    query: dict[str, str]
    headers: dict[str, str]  # lower-cased names
    body: Any
    links: Links
    token: Token | None = None
    params: dict[str, str] = field(default_factory=dict)

    def arg(self, name: str, default: str | None = None) -> str | None:
        return self.query.get(name, default)

    def int_arg(self, name: str, default: int) -> int:
        value = self.query.get(name, "")
        return int(value) if value.isdigit() else default


@dataclass
class Response:
    status: int
    body: Any = None  # JSON-able; None sends no body (204); str/bytes are sent as text/html
    headers: dict[str, str] = field(default_factory=dict)


class ApiError(Exception):
    """An error answered with GitHub's body: message, documentation_url, status, errors."""

    def __init__(self, status: int, message: str, *, errors: list[dict[str, Any]] | None = None,
                 doc: str = DOCS, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.doc = doc
        self.headers = headers or {}

    def response(self) -> Response:
        return Response(self.status, error_body(self.status, self.message, self.errors, self.doc),
                        dict(self.headers))


def error_body(status: int, message: str, errors: list[dict[str, Any]] | None = None,
               doc: str = DOCS) -> dict[str, Any]:
    # Since 2024 GitHub adds "status" (a string) to every error body.
    body: dict[str, Any] = {"message": message}
    if errors is not None:
        body["errors"] = errors
    body["documentation_url"] = doc
    body["status"] = str(status)
    return body


def not_found(doc: str = DOCS) -> ApiError:
    return ApiError(404, "Not Found", doc=doc)


def validation_failed(resource: str, code: str, field_name: str | None = None, *,
                      message: str | None = None, doc: str = DOCS) -> ApiError:
    error: dict[str, Any] = {"resource": resource, "code": code}
    if field_name is not None:
        error["field"] = field_name
    if message is not None:
        error["message"] = message
    return ApiError(422, "Validation Failed", errors=[error], doc=doc)


def body_field(req: Request, name: str, kind: type[T], *, required: bool = False,
               default: T | None = None) -> T | None:
    """A typed field of the JSON body; a wrong type is GitHub's 422 "Invalid request"."""
    body = req.body if isinstance(req.body, dict) else {}
    if name not in body or body[name] is None:
        if required:
            raise ApiError(422, f'Invalid request.\n\n"{name}" wasn\'t supplied.')
        return default
    value = body[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ApiError(422, f"Invalid request.\n\nFor '{name}', {value!r} is not a "
                            f"{kind.__name__}.")
    return value


def paginate(req: Request, items: Sequence[T], *, default: int = 30, maximum: int = 100
             ) -> tuple[list[T], dict[str, str]]:
    """One page of ``items`` and the Link header GitHub would send with it."""
    per_page = min(max(req.int_arg("per_page", default), 1), maximum)
    page = max(req.int_arg("page", 1), 1)
    last = max(1, math.ceil(len(items) / per_page))
    chunk = list(items[(page - 1) * per_page: page * per_page])
    rels = []
    if page > 1:
        rels.append(("prev", min(page - 1, last)))
    if page < last:
        rels += [("next", page + 1), ("last", last)]
    if page > 1:
        rels.append(("first", 1))
    if not rels:
        return chunk, {}
    base = f"{req.links.api}{req.path}"
    parts = [f'<{base}?{urlencode({**req.query, "page": str(n)})}>; rel="{rel}"'
             for rel, n in rels]
    return chunk, {"Link": ", ".join(parts)}


def page_response(req: Request, items: Sequence[T], render: Callable[[T], Any], *,
                  default: int = 30, maximum: int = 100) -> Response:
    chunk, headers = paginate(req, items, default=default, maximum=maximum)
    return Response(200, [render(item) for item in chunk], headers)


Handler = Callable[[State, Request, Repo], Response]
PlainHandler = Callable[[State, Request], Response]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler | PlainHandler
    repo_scoped: bool


class Router:
    """Routes written like ``/repos/{owner}/{repo}/issues/{number}``; ``{name+}`` spans
    slashes (a ref or a file path). The first match wins, so list specific routes first."""

    def __init__(self) -> None:
        self.routes: list[Route] = []

    def add(self, method: str, template: str, handler: Handler) -> None:
        self.routes.append(Route(method, _compile(template), handler, True))

    def add_plain(self, method: str, template: str, handler: PlainHandler) -> None:
        self.routes.append(Route(method, _compile(template), handler, False))

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method != method:
                continue
            found = route.pattern.fullmatch(path)
            if found is not None:
                return route, found.groupdict()
        return None


def _compile(template: str) -> re.Pattern[str]:
    def group(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.endswith("+"):
            return f"(?P<{name[:-1]}>.+?)"
        return f"(?P<{name}>[^/]+)"

    return re.compile(re.sub(r"\{([a-z_]+\+?)\}", group, template) + "/?")
