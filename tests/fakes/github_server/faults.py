"""Scripted failures and the log of requests: what makes the stand-in worth more than a mock.

A :class:`Fault` matches requests by method and path (the path without the API prefix and
the query, as PyGithub sent it: ``/repos/octo/hello/pulls``), answers the next ``times`` of
them with ``status``, and can first apply the request (``after_apply``), sleep (``delay``) or
hang up without answering (``hang_up``).
"""

from __future__ import annotations

import fnmatch
import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

from .routing import error_body

_DEFAULT_MESSAGES = {400: "Problems parsing JSON", 401: "Bad credentials", 403: "Forbidden",
                     404: "Not Found", 409: "Conflict", 422: "Validation Failed",
                     429: "Too Many Requests", 500: "Server Error", 502: "Server Error",
                     503: "Service Unavailable", 504: "We couldn't respond to your request in "
                     "time. Sorry about that. Please try resubmitting your request and contact "
                     "us if the problem persists."}
PRIMARY_MESSAGE = ("API rate limit exceeded for installation ID 4242424. If you reach out to "
                   "GitHub Support for help, please include the request ID {request_id}.")
SECONDARY_MESSAGE = ("You have exceeded a secondary rate limit. Please wait a few minutes "
                     "before you try again. If you reach out to GitHub Support for help, please "
                     "include the request ID {request_id}.")
RATE_DOC = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"


def default_body(status: int) -> dict[str, Any]:
    return error_body(status, _DEFAULT_MESSAGES.get(status, "Server Error"))


@dataclass
class Fault:
    method: str  # "*" for any
    path: str | re.Pattern[str]  # exact path, a glob ("/repos/*/pulls"), or a regex
    status: int | None  # None: answer normally (a pure delay)
    body: Any = None  # None: GitHub's body for the status; str/bytes: sent as text/html
    headers: dict[str, str] = field(default_factory=dict)
    times: int | None = 1  # None: every matching request, until cleared
    after_apply: bool = False
    delay: float = 0.0
    hang_up: bool = False
    hits: int = 0

    def matches(self, method: str, path: str) -> bool:
        if self.method != "*" and self.method.upper() != method:
            return False
        if isinstance(self.path, re.Pattern):
            return self.path.fullmatch(path) is not None
        if any(c in self.path for c in "*?["):
            return fnmatch.fnmatchcase(path, self.path)
        return path.rstrip("/") == self.path.rstrip("/")

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.hits >= self.times


def primary_rate_limit(method: str, path: str | re.Pattern[str], *, status: int = 403,
                       reset_in: int = 60, limit: int = 5000, times: int | None = 1) -> Fault:
    """GitHub's primary limit: remaining 0 and the reset time in the headers."""
    reset = str(int(time.time()) + reset_in)
    headers = {"X-RateLimit-Limit": str(limit), "X-RateLimit-Remaining": "0",
               "X-RateLimit-Used": str(limit), "X-RateLimit-Reset": reset,
               "X-RateLimit-Resource": "core"}
    body = error_body(status, PRIMARY_MESSAGE, doc=f"{RATE_DOC}#about-primary-rate-limits")
    return Fault(method, path, status, body, headers, times)


def secondary_rate_limit(method: str, path: str | re.Pattern[str], *, retry_after: int | None
                         = 1, times: int | None = 1) -> Fault:
    """GitHub's secondary (abuse) limit: a 403 with Retry-After and its own message."""
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    body = error_body(403, SECONDARY_MESSAGE, doc=f"{RATE_DOC}#about-secondary-rate-limits")
    return Fault(method, path, 403, body, headers, times)


@dataclass
class RecordedRequest:
    """One request as the fake saw it; the token is never kept, only who it belonged to."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    login: str | None = None
    status: int | None = None  # None while in flight, or when the fault hung up
    fault: bool = False


class FaultBook:
    """Pending faults and seen requests, behind their own lock (never the state's, so a test
    can look while a delayed request is still in flight)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._seen: list[RecordedRequest] = []

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, method: str, path: str) -> Fault | None:
        """The first live fault for this request, counting the hit."""
        with self._lock:
            for fault in self._faults:
                if not fault.exhausted and fault.matches(method, path):
                    fault.hits += 1
                    return fault
        return None

    def pending(self) -> list[Fault]:
        with self._lock:
            return [f for f in self._faults if not f.exhausted]

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._seen.append(request)

    def finish(self, request: RecordedRequest, status: int | None, login: str | None,
               fault: bool) -> None:
        with self._lock:
            request.status, request.login, request.fault = status, login, fault

    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [replace(r) for r in self._seen]

    def forget_requests(self) -> None:
        with self._lock:
            self._seen.clear()
