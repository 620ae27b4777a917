"""One retry policy for every HTTP client of ptbench (the trial's gateway, the judge client, the
bootcamp rollout client): which statuses are worth another attempt, how long to wait, and when a
server's `Retry-After` is honoured.

- Retryable: transport errors (the caller's), 408, 409, 425, 429 and every 5xx but 501/505 (529 is
  Anthropic's "overloaded"). 400, 401, 403, 404 and the rest are the request's fault: never retried.
- Wait: a `Retry-After` (seconds or an HTTP date) on any retryable reply is waited as told; longer than
  `max_retry_after_s` and the call gives up at once (the caller reports the server's answer). Without
  one: exponential backoff from `base_s`, capped at `max_backoff_s`, with jitter (50-100 %) so many
  clients retrying at once do not march in step.
- At most `max_retries` retries after the first attempt.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass, field

_NOT_TRANSIENT_5XX = frozenset({501, 505})
_RETRYABLE_4XX = frozenset({408, 409, 425, 429})


def retryable_status(status: int) -> bool:
    """Whether a reply with this HTTP status may succeed if sent again."""
    return status in _RETRYABLE_4XX or (500 <= status < 600 and status not in _NOT_TRANSIENT_5XX)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or HTTP date); None if absent or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    base_s: float = 0.5
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0
    """A server asking for a longer wait than this is treated as a failure, not waited for."""
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait after failed attempt number `attempt` (1-based) before the next one; None: give up.

        Call it only for a retryable failure (a transport error, or `retryable_status`)."""
        if attempt > self.max_retries:
            return None
        if retry_after is not None:
            return None if retry_after > self.max_retry_after_s else retry_after
        backoff = min(self.max_backoff_s, self.base_s * 2 ** (attempt - 1))
        return backoff * (0.5 + self.rng.random() / 2)

    def delay_for_reply(self, attempt: int, status: int, retry_after_header: str | None) -> float | None:
        """`delay` for an HTTP reply: None at once for a status that is not retryable."""
        if not retryable_status(status):
            return None
        return self.delay(attempt, parse_retry_after(retry_after_header))
