"""Time as a dependency: a :class:`Clock` protocol, the system clock and a manual one for tests.

Services read the time and wait through a ``Clock`` instead of calling :func:`time.time` or
:func:`asyncio.sleep` directly, so an in-process test can drive them with a
:class:`ManualClock` (time moves only when the test says so). The rules core never reads a
clock: services pass ``clock.now()`` into it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable
from typing import Protocol


class Clock(Protocol):
    """Wall-clock seconds since the epoch, and waiting in that time."""

    def now(self) -> float:
        """The current time (seconds since the epoch, as :func:`time.time`)."""
        ...

    def sleep(self, seconds: float) -> Awaitable[None]:
        """An awaitable done once ``seconds`` have passed on this clock from now — from this
        call, not from the first await (at once when <= 0)."""
        ...


class SystemClock:
    """The machine's clock: :func:`time.time` and :func:`asyncio.sleep`."""

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> Awaitable[None]:
        return asyncio.sleep(max(0.0, seconds))


class ManualClock:
    """A clock that moves only on :meth:`advance` / :meth:`set`; sleepers wake when it passes
    their deadline. For in-process tests (one event loop)."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    def sleep(self, seconds: float) -> Awaitable[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if seconds <= 0:
            future.set_result(None)
        else:
            heapq.heappush(self._sleepers, (self._now + seconds, next(self._order), future))
        return future

    def advance(self, seconds: float) -> None:
        """Move the time forward by ``seconds`` and wake every sleeper now due."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        self.set(self._now + seconds)

    def set(self, now: float) -> None:
        if now < self._now:
            raise ValueError("a clock does not go backwards")
        self._now = now
        while self._sleepers and self._sleepers[0][0] <= now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)

    @property
    def next_wakeup(self) -> float | None:
        """The earliest deadline of a live sleeper, or None."""
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)
        return self._sleepers[0][0] if self._sleepers else None
