from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from selfcorrect_action.llm.retry import RetryPolicy, backoff_delay, retry_after_seconds


def test_backoff_is_full_jitter_under_a_doubling_cap() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    rng = random.Random(1)

    for attempt, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 5.0), (9, 5.0)]:
        delays = [backoff_delay(policy, attempt, rng) for _ in range(200)]
        assert all(0.0 <= delay <= cap for delay in delays)
        assert max(delays) > cap * 0.9  # the draw spans the whole range, not a fixed step


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "12"}, 12.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"Retry-After": "Wed, 21 Oct 2026 07:28:30 GMT"}, 30.0),
        ({"Retry-After": "Wed, 21 Oct 2026 07:27:00 GMT"}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "nan"}, None),  # would crash time.sleep
        ({"retry-after-ms": "NaN", "retry-after": "2"}, 2.0),
        ({"Retry-After": "inf"}, float("inf")),  # longer than any wait: give up
        ({}, None),
    ],
)
def test_retry_after_reads_seconds_millis_and_dates(
    headers: dict[str, str], seconds: float | None
) -> None:
    now = datetime(2026, 10, 21, 7, 28, 0, tzinfo=UTC)

    assert retry_after_seconds(headers, now) == seconds


def test_policy_needs_one_attempt() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RetryPolicy(max_attempts=0)
