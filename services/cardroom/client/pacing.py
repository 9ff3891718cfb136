"""A client's own pace: it waits before a call rather than have the gateway refuse it.

The gateway limits each player's calls and Play messages with a token bucket and names the budget
at login (``LoginResponse.calls_per_second`` / ``call_burst``); a call over it is refused with
RESOURCE_EXHAUSTED (PLAYER_RATE_LIMITED). A :class:`Pace` keeps the same kind of bucket on the
client, a little under the gateway's (:data:`SHARE` of its rate, half its burst), so that
arrivals bunched on the way still fit: a bot with no think time heads-up, or a player polling his
status right after a run of actions, waits a few milliseconds instead of being refused."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

#: The share of the gateway's rate a client paces itself to.
SHARE = 0.9


@dataclass
class Pace:
    """``rate`` calls/s after a burst of ``burst``; ``rate`` 0: unpaced (no budget named yet).
    Each :meth:`take` reserves the next token in turn, so callers go in the order they asked."""

    rate: float = 0.0
    burst: float = 1.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    tokens: float = field(default=0.0, init=False)
    updated: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.set(self.rate, self.burst)

    def set(self, rate: float, burst: float) -> None:
        """Pace to ``rate`` after a burst of ``burst`` (a full bucket)."""
        self.rate, self.burst = max(rate, 0.0), max(burst, 1.0)
        self.tokens, self.updated = self.burst, self.clock()

    def keep_under(self, calls_per_second: float, call_burst: float) -> None:
        """Stay under the gateway's budget as its login names it (0: none named, unpaced); the same
        budget again (a refreshed token) keeps the bucket as it is."""
        rate, burst = calls_per_second * SHARE, max(1.0, call_burst / 2)
        if (rate, burst) != (self.rate, self.burst):
            self.set(rate, burst)

    def delay(self) -> float:
        """Take the next token: how long to wait before the call it is for (0: at once)."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        self.tokens -= 1
        return -self.tokens / self.rate if self.tokens < 0 else 0.0

    async def take(self) -> None:
        """Wait for the next token."""
        wait = self.delay()
        if wait > 0:
            await self.sleep(wait)


__all__ = ["SHARE", "Pace"]
