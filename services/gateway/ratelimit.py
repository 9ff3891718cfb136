"""Token buckets, one per client connection (gRPC peer)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(slots=True)
class TokenBucket:
    """``rate`` tokens per second up to ``burst``; each request takes one."""

    rate: float
    burst: float
    tokens: float
    updated: float

    def take(self, now: float) -> bool:
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


@dataclass
class RateLimiter:
    """A bucket per key; idle full buckets are forgotten."""

    rate: float
    burst: float
    clock: Callable[[], float] = time.monotonic
    buckets: dict[str, TokenBucket] = field(default_factory=dict)
    _last_prune: float = 0.0

    def allow(self, key: str) -> bool:
        now = self.clock()
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.rate, self.burst, self.burst, now)
        allowed = bucket.take(now)
        if now - self._last_prune > 60:
            self._prune(now)
        return allowed

    def _prune(self, now: float) -> None:
        self._last_prune = now
        full_after = self.burst / self.rate if self.rate > 0 else float("inf")
        for key in [k for k, b in self.buckets.items() if now - b.updated > full_after]:
            del self.buckets[key]
