"""Retrying GitHub REST calls, and turning whatever PyGithub, requests or urllib3 raise into
a ForgeError that says what we were doing, what GitHub said and what to do about it.

PyGithub's own retry (GithubRetry) is switched off: it replays POSTs after a 5xx, so a pull
request GitHub made before answering 502 is created again and fails as a 422 duplicate.
Here one loop retries every call, and a write that may have been applied is first looked
up (`reconcile`) instead of being sent again.

What is retried: 5xx (500, 502, 503, 504), no answer at all (connection refused or reset,
timeouts, a cut-off body), and rate limits. Those wait what GitHub asks (Retry-After, or
until x-ratelimit-reset); the rest back off exponentially with full jitter. A wait longer
than `max_wait_s` gives up at once: a job sleeping an hour for a quota helps nobody.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from enum import Enum
from typing import Any, TypeVar

import requests
import urllib3
from github.GithubException import BadAttributeException, GithubException

from selfcorrect_action.github.forge import ForgeError
from selfcorrect_action.redact import redact

T = TypeVar("T")

MAX_ATTEMPTS = 5
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 30.0
# GitHub's advice for a secondary limit that names no time: wait at least a minute.
SECONDARY_WAIT_S = 60.0
SERVER_ERRORS = frozenset({500, 502, 503, 504})
RATE_LIMIT_STATUSES = frozenset({403, 429})

# No answer, or half of one: the request may or may not have reached GitHub. A JSONDecodeError
# is PyGithub reading a body that was cut off mid-way.
_NO_ANSWER: tuple[type[Exception], ...] = (
    requests.exceptions.ConnectionError, requests.exceptions.Timeout,
    requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError,
    urllib3.exceptions.ProtocolError, urllib3.exceptions.TimeoutError,
    urllib3.exceptions.NewConnectionError, http.client.HTTPException, ConnectionError,
    TimeoutError, json.JSONDecodeError,
)
# Everything the client side can raise at this boundary; anything else is a bug of ours.
API_ERRORS: tuple[type[Exception], ...] = (
    GithubException, BadAttributeException, requests.exceptions.RequestException,
    urllib3.exceptions.HTTPError, *_NO_ANSWER,
)


class Kind(Enum):
    SERVER = "server error"  # GitHub failed: the request may have been applied
    NO_ANSWER = "no answer"  # the wire failed: the request may have been applied
    RATE_LIMIT = "rate limit"  # refused before anything was done
    FINAL = "final"  # an answer that asking again will not change


@dataclass(frozen=True)
class Failure:
    kind: Kind
    status: int | None
    detail: str  # GitHub's own message, or what went wrong on the wire
    errors: tuple[str, ...] = ()  # a 422's validation errors
    wait_s: float | None = None  # what GitHub asked for: Retry-After, or until the reset
    primary: bool = False  # the hourly quota (x-ratelimit-remaining: 0), not a burst limit

    @property
    def retryable(self) -> bool:
        return self.kind is not Kind.FINAL

    @property
    def maybe_applied(self) -> bool:
        return self.kind in (Kind.SERVER, Kind.NO_ANSWER)


def classify(exc: Exception, now: float) -> Failure:
    if isinstance(exc, GithubException):
        return _classify_answer(exc, now)
    detail = _clip(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, _NO_ANSWER):
        return Failure(Kind.NO_ANSWER, None, detail)
    return Failure(Kind.FINAL, None, detail)


def _classify_answer(exc: GithubException, now: float) -> Failure:
    status, headers = exc.status, {k.lower(): str(v) for k, v in (exc.headers or {}).items()}
    detail = github_message(exc)
    retry_after = _retry_after(headers.get("retry-after"), now)
    if status in SERVER_ERRORS:
        return Failure(Kind.SERVER, status, detail, wait_s=retry_after)
    if status in RATE_LIMIT_STATUSES:
        limited = _rate_limited(status, detail, headers, retry_after, now)
        if limited is not None:
            return limited
    return Failure(Kind.FINAL, status, detail, validation_errors(exc.data))


def _rate_limited(status: int, detail: str, headers: Mapping[str, str],
                  retry_after: float | None, now: float) -> Failure | None:
    """A 403/429 that is a rate limit, with the wait GitHub asks for; None for a plain 403
    (no permission), which no wait will fix."""
    reset = _number(headers.get("x-ratelimit-reset"))
    primary = headers.get("x-ratelimit-remaining") == "0"
    if retry_after is not None:
        wait = retry_after
    elif primary and reset is not None:
        # The quota refills at the reset time; a second more covers clock skew. At least a
        # second, so a reset already past is not hammered.
        wait = max(reset + 1 - now, 1.0)
    elif primary or "secondary rate limit" in detail.lower() or status == 429:
        wait = SECONDARY_WAIT_S
    else:
        return None
    return Failure(Kind.RATE_LIMIT, status, detail, wait_s=wait, primary=primary)


def github_message(exc: GithubException) -> str:
    """GitHub's own words from an error answer."""
    data = exc.data
    if isinstance(data, Mapping):
        message = data.get("message")
        if isinstance(message, str) and message.strip():
            return _clip(message.strip())
        raw = data.get("data")  # PyGithub's wrapping of a body that is not JSON
        if isinstance(raw, str) and raw.strip():
            return "an HTML error page" if raw.lstrip().startswith("<") else _clip(raw.strip())
    return exc.message or f"HTTP {exc.status}"


def validation_errors(data: Any) -> tuple[str, ...]:
    """A 422's `errors`, each as a short line: its message, else resource.field: code."""
    errors = data.get("errors") if isinstance(data, Mapping) else None
    if not isinstance(errors, list):
        return ()
    lines = []
    for error in errors:
        if isinstance(error, Mapping):
            if error.get("message"):
                lines.append(str(error["message"]))
                continue
            where = ".".join(str(error[k]) for k in ("resource", "field") if error.get(k))
            lines.append(f"{where}: {error.get('code', 'invalid')}" if where
                         else str(error.get("code", "invalid")))
        else:
            lines.append(str(error))
    return tuple(lines)


def mentions(exc: BaseException, status: int, phrase: str) -> bool:
    """Whether `exc` is GitHub answering `status` with `phrase` in its message or in one of
    its validation errors (messages and codes), case-insensitively."""
    if not isinstance(exc, GithubException) or exc.status != status:
        return False
    data = exc.data if isinstance(exc.data, Mapping) else {}
    texts = [github_message(exc), *validation_errors(data)]
    errors = data.get("errors")
    if isinstance(errors, list):
        texts += [str(e.get("code", "")) for e in errors if isinstance(e, Mapping)]
    return any(phrase.lower() in text.lower() for text in texts)


def _retry_after(value: str | None, now: float) -> float | None:
    """Retry-After in seconds: a number, or (rarely) an HTTP date."""
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(seconds, 0.0)
    try:
        return max(parsedate_to_datetime(value).timestamp() - now, 0.0)
    except (TypeError, ValueError):
        return None


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Retrier:
    """Runs one GitHub call with retries; every ForgeError it makes is redacted."""

    def __init__(self, *, repository: str, api_url: str, secrets: Sequence[str],
                 sleep: Callable[[float], None], clock: Callable[[], float],
                 jitter: Callable[[], float], max_wait_s: float,
                 max_attempts: int = MAX_ATTEMPTS) -> None:
        self._repository = repository
        self._api_url = api_url
        self._secrets = list(secrets)
        self._sleep = sleep
        self._clock = clock
        self._jitter = jitter
        self._max_wait_s = max_wait_s
        self._max_attempts = max_attempts

    def call(self, doing: str, action: Callable[[], T], *,
             reconcile: Callable[[], T | None] | None = None) -> T:
        """`action()`, retried. `doing` says what for, in error messages ("creating the pull
        request for selfcorrect/issue-12"). `reconcile` runs before retrying an attempt that
        GitHub may have applied (a 5xx, no answer) and returns what that attempt made, or
        None when it made nothing, so a write is never done twice."""
        attempt = 0
        unverified = False  # an attempt failed in a way that may have applied it
        while True:
            attempt += 1
            try:
                if unverified and reconcile is not None:
                    found = reconcile()
                    if found is not None:
                        return found
                    unverified = False
                return action()
            except API_ERRORS as exc:
                failure = classify(exc, self._clock())
                if not failure.retryable or attempt >= self._max_attempts:
                    raise self.error(doing, failure, attempts=attempt) from exc
                unverified = unverified or failure.maybe_applied
                self._sleep(self._wait_for(doing, failure, attempt, exc))

    def _wait_for(self, doing: str, failure: Failure, attempt: int, exc: Exception) -> float:
        if failure.wait_s is not None:
            if failure.wait_s > self._max_wait_s:
                raise self._too_long(doing, failure) from exc
            return failure.wait_s
        # Full jitter: anywhere between nothing and the exponential step, so parallel jobs
        # that failed together do not come back together.
        return self._jitter() * min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0 ** (attempt - 1))

    def error(self, doing: str, failure: Failure, *, attempts: int = 1,
              hint: str | None = None) -> ForgeError:
        if failure.status is not None:
            what = f"GitHub answered {failure.status}: {failure.detail}"
        else:
            what = f"no answer from GitHub ({failure.detail})"
        message = f"{doing} failed: {what}"
        if attempts > 1:
            message += f" (after {attempts} attempts)"
        return self.forge_error(message, status=failure.status,
                                hint=hint or self._hint(failure))

    def translate(self, doing: str, exc: Exception, *, hint: str | None = None) -> ForgeError:
        """The ForgeError for one exception, not retried (the caller decided)."""
        return self.error(doing, classify(exc, self._clock()), hint=hint)

    def forge_error(self, message: str, *, status: int | None = None,
                    hint: str | None = None) -> ForgeError:
        return ForgeError(redact(message, secrets=self._secrets), status=status,
                          hint=redact(hint, secrets=self._secrets) if hint else None)

    def _too_long(self, doing: str, failure: Failure) -> ForgeError:
        assert failure.wait_s is not None
        if failure.kind is not Kind.RATE_LIMIT:
            why, hint = "Retry-After", "GitHub is busy; re-run the job later"
        elif failure.primary:
            why = "its hourly rate limit"
            hint = "the token's API quota is used up until the reset; re-run the job after it"
        else:
            why = "its secondary rate limit"
            hint = "GitHub is throttling this token's bursts of requests; re-run the job later"
        message = (f"{doing} failed: GitHub asks us to wait {failure.wait_s:.0f} s before "
                   f"trying again ({why}), longer than the {self._max_wait_s:.0f} s we wait; "
                   f"it answered {failure.status}: {failure.detail}")
        return self.forge_error(message, status=failure.status, hint=hint)

    def _hint(self, failure: Failure) -> str | None:
        status, detail = failure.status, failure.detail.lower()
        if failure.kind is Kind.NO_ANSWER:
            return (f"nothing answered at {self._api_url}: check GITHUB_API_URL and the "
                    "runner's network, or re-run the job")
        if failure.kind is Kind.SERVER:
            return ("GitHub kept failing (see https://www.githubstatus.com); re-run the job "
                    "later")
        if failure.kind is Kind.RATE_LIMIT:
            return "GitHub kept rate-limiting this token; re-run the job later"
        if status == 401:
            return ("the token is invalid or expired: check the action's github-token input "
                    "(a personal access token may have been revoked or have expired)")
        if status == 403 and "not accessible by integration" in detail:
            return ("the workflow's `permissions:` block must grant `contents: write`, "
                    "`pull-requests: write` and `issues: write`; or this run is for a pull "
                    "request from a fork, whose GITHUB_TOKEN is read-only")
        if status == 403 and "not permitted to create or approve pull requests" in detail:
            return ("turn on Settings > Actions > General > Workflow permissions > \"Allow "
                    "GitHub Actions to create and approve pull requests\" (off by default), "
                    "or pass a token that may open pull requests as github-token")
        if status == 403:
            return f"the token is not allowed to do this in {self._repository}"
        if status == 404:
            return f"there is no such thing in {self._repository}, or the token cannot see it"
        if status == 409:
            return ("GitHub refused it as a conflict (an empty repository answers 409: push "
                    "a first commit)")
        if status == 422:
            if failure.errors:
                return "GitHub's validation errors: " + "; ".join(failure.errors)
            return "GitHub refused the request as invalid"
        return None
