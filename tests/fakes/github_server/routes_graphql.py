"""GitHub's GraphQL endpoint, as far as the action asks it: `viewer`, the one query that
tells an installation token (GITHUB_TOKEN, a GitHub App's) its own login, which REST's
GET /user refuses. Anything else is answered the way GitHub answers a query it cannot run:
HTTP 200 with an `errors` list and no `data`.

github.com serves it at /graphql; GitHub Enterprise Server at /api/graphql (the REST API
being /api/v3), which is where PyGithub sends it for a base URL ending in /api/v3.
"""

from __future__ import annotations

import re
from typing import Any

from .model import State
from .routing import Request, Response, Router

GRAPHQL_PATH = "/graphql"
_VIEWER_FIELDS = {"login", "databaseId", "__typename"}
# `query Name { viewer { login databaseId } }`, `{ viewer { login } }`: whitespace and commas
# are insignificant in GraphQL.
_VIEWER_QUERY = re.compile(
    r"(?:query(?:\s+\w+)?\s*)?\{\s*viewer\s*\{(?P<fields>[\s\w,]*)\}\s*\}\s*")


def register(router: Router) -> None:
    router.add_plain("POST", GRAPHQL_PATH, graphql)


def graphql(state: State, req: Request) -> Response:
    assert req.token is not None
    body: Any = req.body
    query = body.get("query") if isinstance(body, dict) else None
    if not isinstance(query, str):
        return Response(200, _error("A query attribute must be specified and must be a "
                                    "string."))
    found = _VIEWER_QUERY.fullmatch(query.strip())
    fields = found.group("fields").replace(",", " ").split() if found else []
    unknown = sorted(set(fields) - _VIEWER_FIELDS)
    if found is None or not fields or unknown:
        what = f"Field '{unknown[0]}' doesn't exist on type 'User'" if unknown else (
            "this stand-in answers `viewer { login databaseId }` only")
        return Response(200, _error(what))
    user = state.user(req.token.login)
    values = {"login": user.login, "databaseId": user.id,
              "__typename": "Bot" if user.type == "Bot" else "User"}
    return Response(200, {"data": {"viewer": {name: values[name] for name in fields}}})


def _error(message: str) -> dict[str, Any]:
    return {"errors": [{"message": message, "locations": [{"line": 1, "column": 1}]}]}
