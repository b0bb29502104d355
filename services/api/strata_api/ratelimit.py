"""Per-key rate limiting in Redis: a fixed one-minute window per caller.

One ``INCR`` + ``EXPIRE`` per request, shared by every API process. A fixed
window lets a caller burst up to twice the limit across a minute boundary; that
is the price of one round trip, and the limit is a guard, not a quota.
"""

from __future__ import annotations

import math
import time

import redis
import structlog

from strata.errors import StrataError

log = structlog.get_logger(component="ratelimit")

_KEY = "strata:ratelimit:{subject}:{window}"
WINDOW_S = 60


class RateLimited(StrataError):
    """Too many requests for this key in the current minute."""

    code = "rate_limited"
    http_status = 429

    @property
    def retry_after(self) -> int:
        return int(self.details.get("retry_after", WINDOW_S))


class RateLimiter:
    """Counts requests per subject (API key id, JWT subject, or anonymous client)."""

    def __init__(self, client: redis.Redis, per_minute: int) -> None:
        self._redis = client
        self._limit = per_minute

    def hit(self, subject: str, *, now: float | None = None) -> None:
        """Count one request; raise :class:`RateLimited` past the limit (blocking)."""
        now = time.time() if now is None else now
        window = int(now // WINDOW_S)
        key = _KEY.format(subject=subject, window=window)
        pipe = self._redis.pipeline()
        pipe.incr(key)
        pipe.expire(key, WINDOW_S * 2)
        try:
            count = int(pipe.execute()[0])
        except redis.RedisError as exc:
            # Fail open: reads from Neo4j stay available while Redis is down.
            log.warning("ratelimit.unavailable", error=str(exc))
            return
        if count > self._limit:
            retry_after = max(1, math.ceil((window + 1) * WINDOW_S - now))
            raise RateLimited(
                f"rate limit of {self._limit} requests per minute exceeded",
                hint=f"retry after {retry_after} s",
                retry_after=retry_after,
            )
