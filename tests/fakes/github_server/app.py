"""The HTTP side: authentication, rate limits, faults, routing, and GitHub's headers.

Order of checks per request, as GitHub does it: bad credentials (401) before anything, then
the primary rate limit, then an unknown route or repository (404), then a write with a
read-only token (403), then the endpoint's own validation (404/409/422).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import sys
import threading
import time
import traceback
from datetime import datetime
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from . import routes_checks, routes_git, routes_graphql, routes_issues, routes_pulls
from .faults import PRIMARY_MESSAGE, RATE_DOC, Fault, FaultBook, RecordedRequest, default_body
from .git_store import GitDataError
from .model import RateBucket, State, Token
from .routing import ApiError, Links, Request, Response, Router, error_body, not_found

INTEGRATION_FORBIDDEN = routes_issues.INTEGRATION_FORBIDDEN
_RATE_RESOURCES = ("core", "search", "graphql", "integration_manifest", "source_import",
                   "code_scanning_upload", "actions_runner_registration", "scim",
                   "dependency_snapshots", "code_search")


def build_router() -> Router:
    router = Router()
    routes_issues.register(router)
    # Before routes_git: its commits/{ref+} would take commits/{ref}/check-runs as a ref.
    routes_checks.register(router)
    routes_git.register(router)
    routes_pulls.register(router)
    routes_graphql.register(router)
    return router


def request_id() -> str:
    rand = random.Random()
    return (f"{rand.getrandbits(16):04X}:{rand.getrandbits(24):06X}:{rand.getrandbits(28):07X}"
            f":{rand.getrandbits(28):07X}:{int(time.time()):08X}")


class App:
    """Turns one parsed request into a response; shared by all handler threads."""

    def __init__(self, state: State, faults: FaultBook, api_prefix: str) -> None:
        self.state = state
        self.faults = faults
        self.api_prefix = api_prefix
        self.router = build_router()
        self.errors: list[str] = []  # tracebacks of the fake's own bugs, answered as 500

    def token_for(self, authorization: str | None) -> Token | None:
        value = _token_value(authorization)
        with self.state.lock:
            return self.state.tokens.get(value) if value else None

    def dispatch(self, req: Request) -> Response:
        if req.token is None:
            return ApiError(401, "Bad credentials").response()
        if req.path.rstrip("/") == "/rate_limit":  # GitHub does not count this one
            return self._rate_limit(req.token)
        limited = self._count(req.token)
        if limited is not None:
            return limited
        found = self.router.match("GET" if req.method == "HEAD" else req.method, req.path)
        if found is None:
            return not_found().response()
        route, params = found
        req.params = params
        try:
            with self.state.lock:
                return self._run(route.handler, route.repo_scoped, req)
        except ApiError as exc:
            return exc.response()
        except GitDataError as exc:
            return ApiError(exc.status, exc.message).response()
        except Exception:  # a bug in the fake: answer like GitHub, keep the trace for the test
            self.errors.append(traceback.format_exc())
            return Response(500, error_body(500, "Server Error"))

    def _run(self, handler: Any, repo_scoped: bool, req: Request) -> Response:
        assert req.token is not None
        if not repo_scoped:
            self._require_write(req)
            response: Response = handler(self.state, req)
            return response
        repo = self.state.repo(f"{req.params['owner']}/{req.params['repo']}")
        if repo is None:
            raise not_found()
        self._require_write(req)
        response = handler(self.state, req, repo)
        return response

    def _require_write(self, req: Request) -> None:
        if req.method not in ("GET", "HEAD") and req.token is not None \
                and not req.token.can_write and req.path.rstrip("/") != routes_graphql.GRAPHQL_PATH:
            # A fork PR's GITHUB_TOKEN can read but gets this on every write.
            raise ApiError(403, INTEGRATION_FORBIDDEN)

    def _count(self, token: Token) -> Response | None:
        with self.state.lock:
            bucket = self.state.bucket(token.login)
            if bucket.used >= bucket.limit:
                body = error_body(403, PRIMARY_MESSAGE.format(request_id=request_id()),
                                  doc=f"{RATE_DOC}#about-primary-rate-limits")
                return Response(403, body)
            bucket.used += 1
        return None

    def _rate_limit(self, token: Token) -> Response:
        with self.state.lock:
            bucket = self.state.bucket(token.login)
            core = _rate(bucket)
        resources = {name: {"limit": 5000, "used": 0, "remaining": 5000, "reset": core["reset"]}
                     for name in _RATE_RESOURCES}
        resources["core"] = core
        resources["search"] = {"limit": 30, "used": 0, "remaining": 30, "reset": core["reset"]}
        return Response(200, {"resources": resources, "rate": core})

    def rate_headers(self, token: Token | None) -> dict[str, str]:
        with self.state.lock:
            bucket = self.state.bucket(token.login if token else None)
            return {"X-RateLimit-Limit": str(bucket.limit),
                    "X-RateLimit-Remaining": str(bucket.remaining),
                    "X-RateLimit-Reset": str(bucket.reset), "X-RateLimit-Used": str(bucket.used),
                    "X-RateLimit-Resource": "core"}


def _rate(bucket: RateBucket) -> dict[str, int]:
    return {"limit": bucket.limit, "used": bucket.used, "remaining": bucket.remaining,
            "reset": bucket.reset}


def _token_value(header: str | None) -> str | None:
    if not header:
        return None
    scheme, _, value = header.strip().partition(" ")
    if scheme.lower() in ("token", "bearer"):
        return value.strip() or None
    if scheme.lower() == "basic":  # GitHub takes a token as the password of basic auth
        try:
            return base64.b64decode(value).decode().partition(":")[2] or None
        except ValueError:
            return None
    return None


class Handler(BaseHTTPRequestHandler):
    server: HTTPServer
    protocol_version = "HTTP/1.1"  # keep-alive, as PyGithub's connection pool expects
    server_version = "github.com"
    sys_version = ""
    # Headers and body go out in two writes; with Nagle on, the client's delayed ACK adds
    # ~40 ms to every response.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._serve()

    do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = do_GET

    def log_message(self, format: str, *args: object) -> None:
        return  # the default writes each request to stderr, burying pytest's output

    def _serve(self) -> None:
        app = self.server.app
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        path, prefix = parts.path, ""
        if path == app.api_prefix or path.startswith(app.api_prefix + "/"):
            path, prefix = path[len(app.api_prefix):] or "/", app.api_prefix
        elif app.api_prefix and path == app.api_prefix.removesuffix("/v3") + "/graphql":
            path, prefix = routes_graphql.GRAPHQL_PATH, app.api_prefix  # Enterprise's /api/graphql
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = RecordedRequest(self.command, path, dict(parse_qsl(parts.query)),
                                 _redacted(headers), None)
        app.faults.record(record)
        token = app.token_for(headers.get("authorization"))
        body, bad_json = _parse_json(raw)
        record.body = body
        host = headers.get("host") or f"127.0.0.1:{self.server.server_port}"
        req = Request(self.command, path, record.query, headers, body,
                      Links(f"http://{host}", prefix), token)
        fault = app.faults.take(self.command, path)
        self._answer(app, req, record, fault, bad_json=bad_json)

    def _answer(self, app: App, req: Request, record: RecordedRequest, fault: Fault | None,
                *, bad_json: bool) -> None:
        login = req.token.login if req.token else None
        if fault is not None and fault.delay:
            self.server.stopping.wait(fault.delay)  # stop() ends a delay at once
        if fault is not None and not fault.after_apply and (fault.status or fault.hang_up):
            self._send_fault(app, req, record, fault)
            return
        if bad_json:
            response = Response(400, error_body(400, "Problems parsing JSON"))
        else:
            response = app.dispatch(req)
        if fault is not None and (fault.status or fault.hang_up):
            self._send_fault(app, req, record, fault)  # applied, but the client sees the fault
            return
        app.faults.finish(record, response.status, login, False)
        self._send(app, req, response)

    def _send_fault(self, app: App, req: Request, record: RecordedRequest, fault: Fault) -> None:
        login = req.token.login if req.token else None
        if fault.hang_up:
            app.faults.finish(record, None, login, True)
            self.close_connection = True
            return
        assert fault.status is not None
        body = fault.body if fault.body is not None else default_body(fault.status)
        app.faults.finish(record, fault.status, login, True)
        self._send(app, req, Response(fault.status, body, dict(fault.headers)))

    def _send(self, app: App, req: Request, response: Response) -> None:
        payload, content_type = _encode(response.body)
        headers = {"Content-Type": content_type, "X-GitHub-Media-Type": "github.v3; format=json",
                   "X-GitHub-Api-Version-Selected": "2022-11-28",
                   "X-GitHub-Request-Id": request_id(), **app.rate_headers(req.token)}
        status = response.status
        if req.method in ("GET", "HEAD") and status == 200 and payload:
            etag = f'W/"{hashlib.sha256(payload).hexdigest()}"'
            headers["ETag"] = etag
            updated = response.body.get("updated_at") if isinstance(response.body, dict) else None
            if isinstance(updated, str):
                headers["Last-Modified"] = _http_date(updated)
            if req.headers.get("if-none-match") == etag:
                status, payload = 304, b""
        headers = _merge(headers, response.headers)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if req.method != "HEAD" and status not in (204, 304):
            self.wfile.write(payload)


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], app: App) -> None:
        super().__init__(address, Handler)
        self.app = app
        self.stopping = threading.Event()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client gave up (its timeout ran out): expected in fault tests
        super().handle_error(request, client_address)


def _parse_json(raw: bytes) -> tuple[Any, bool]:
    """The request body and whether it failed to parse (GitHub's 400)."""
    if not raw.strip():
        return None, False
    try:
        return json.loads(raw), False
    except ValueError:
        return None, True


def _encode(body: Any) -> tuple[bytes, str]:
    if body is None:
        return b"", "application/json; charset=utf-8"
    if isinstance(body, bytes | str):  # an HTML error page, as GitHub's load balancers send
        return (body.encode() if isinstance(body, str) else body), "text/html; charset=utf-8"
    return json.dumps(body).encode(), "application/json; charset=utf-8"


def _merge(base: dict[str, str], extra: dict[str, str]) -> dict[str, str]:
    """``extra`` wins over ``base`` whatever the case of the header names."""
    merged = {k: v for k, v in base.items() if k.lower() not in {e.lower() for e in extra}}
    merged.update(extra)
    return merged


def _redacted(headers: dict[str, str]) -> dict[str, str]:
    out = dict(headers)
    if "authorization" in out:
        scheme = out["authorization"].partition(" ")[0]
        out["authorization"] = f"{scheme} ***"
    return out


def _http_date(stamp: str) -> str:
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return formatdate(moment.timestamp(), usegmt=True)
