"""How long to wait before the next attempt: exponential backoff with full jitter, or the
server's own Retry-After when it sends one.

Full jitter (a uniform draw between 0 and the exponential cap) spreads out the matrix jobs that
all hit the same rate limit at once; see the AWS Architecture Blog, "Exponential Backoff And
Jitter" (2015). Pure functions: the client owns the sleeping, through an injected sleeper.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


@dataclass(frozen=True)
class RetryPolicy:
    """``max_attempts`` counts the first try: 4 means up to 3 retries."""

    max_attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    # A server asking for a longer pause than this is down for us: give up rather than idle.
    max_retry_after_s: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")


def backoff_delay(policy: RetryPolicy, attempt: int, rng: random.Random) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
    cap = min(policy.max_delay_s, policy.base_delay_s * 2 ** (attempt - 1))
    return rng.uniform(0.0, cap)


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait a 429/503 asks for, from ``retry-after-ms`` (OpenAI) or ``Retry-After``.

    Retry-After is either delta-seconds or an HTTP date (RFC 9110 section 10.2.3).
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    if (millis := _as_float(lowered.get("retry-after-ms"))) is not None:
        return max(millis / 1000.0, 0.0)
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    if (seconds := _as_float(raw)) is not None:
        return max(seconds, 0.0)
    return _seconds_until(raw, now or datetime.now(UTC))


def _as_float(raw: str | None) -> float | None:
    """A number of the header, or None. NaN counts as none: it would pass every comparison
    with the longest wait we accept and then crash time.sleep. (inf is kept: it asks for a
    wait longer than any we accept, so the call gives up.)"""
    try:
        value = float(raw) if raw is not None else None
    except ValueError:
        return None
    return None if value is not None and math.isnan(value) else value


def _seconds_until(http_date: str, now: datetime) -> float | None:
    try:
        when = parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - now).total_seconds(), 0.0)
