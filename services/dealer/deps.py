"""What every table actor shares (clients, publisher, topics, allowances) and its watchers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from cardroom.core.table import AllInAllowance
from cardroom.runtime.clock import Clock, SystemClock
from cardroom.runtime.publisher import AsyncPublisher
from cardroom.v1 import dealer_pb2
from dealer.connections import MonitoredAllowance
from dealer.money import Wallet
from dealer.showdown_check import ShowdownChecker


@dataclass(frozen=True)
class Topics:
    events: str = "cardroom.table.events"
    records: str = "cardroom.hand.records"
    settled: str = "cardroom.hand.settled"
    snapshots: str = "cardroom.table.snapshots"


@dataclass
class Deps:
    """What every table shares: service clients, the publisher and the all-in allowances."""

    wallet: Wallet
    publisher: AsyncPublisher
    checker: ShowdownChecker
    topics: Topics = field(default_factory=Topics)
    monitor_addr: str | None = None
    allowances: dict[int, MonitoredAllowance] = field(default_factory=dict)
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    clock: Clock = field(default_factory=SystemClock)

    def allowance(self, per_day: int) -> AllInAllowance:
        """One allowance per player across all tables (per configured daily count), backed
        by the connection monitor."""
        if per_day not in self.allowances:
            self.allowances[per_day] = MonitoredAllowance(per_day, self.monitor_addr)
        return self.allowances[per_day]


@dataclass(eq=False)
class Watcher:
    """One Watch stream: its viewer, its events, and why it ended (None in the queue)."""

    viewer: str
    queue: asyncio.Queue[dealer_pb2.TableEvent | None]
    ended: str = ""   # "closed" (the table), "slow" (buffer overflow), "stopping" (shutdown)

    def end(self, why: str) -> None:
        self.ended = why
        while True:
            try:
                self.queue.get_nowait()
            except asyncio.QueueEmpty:
                break
        self.queue.put_nowait(None)
