"""The one retry policy (ptbench.core.retry) that the gateway, the judge client and the rollout client share."""

from __future__ import annotations

import email.utils
import random
import time

import pytest

from ptbench.core.retry import RetryPolicy, parse_retry_after, retryable_status


@pytest.mark.parametrize("status", [408, 409, 425, 429, 500, 502, 503, 504, 529])
def test_transient_statuses_are_retryable(status: int) -> None:
    assert retryable_status(status)


@pytest.mark.parametrize("status", [200, 400, 401, 402, 403, 404, 422, 501, 505])
def test_the_requests_own_faults_are_not(status: int) -> None:
    assert not retryable_status(status)


def test_retry_after_in_seconds_and_as_a_date() -> None:
    assert parse_retry_after("3") == 3.0 and parse_retry_after("-5") == 0.0
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after(when) or 0) <= 31
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None


def test_backoff_doubles_with_jitter_up_to_the_cap_then_gives_up() -> None:
    policy = RetryPolicy(max_retries=5, base_s=1.0, max_backoff_s=4.0, rng=random.Random(0))
    for attempt, full in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 4.0), (5, 4.0)):
        wait = policy.delay(attempt)
        assert wait is not None and full / 2 <= wait <= full, (attempt, wait)
    assert policy.delay(6) is None


def test_retry_after_is_waited_as_told_and_too_long_a_wait_gives_up() -> None:
    policy = RetryPolicy(max_retries=3, max_backoff_s=1.0, max_retry_after_s=60.0)
    assert policy.delay(1, 45.0) == 45.0  # above the backoff cap: the server's word wins
    assert policy.delay(1, 61.0) is None
    assert policy.delay_for_reply(1, 429, "7") == 7.0
    assert policy.delay_for_reply(1, 503, None) is not None
    assert policy.delay_for_reply(1, 401, "1") is None  # not retryable whatever the header says
    assert policy.delay_for_reply(4, 429, "1") is None  # retries spent
