"""What every table actor shares (clients, publisher, topics, allowances, clock) and its watchers.

The wallet, the publisher and the showdown checker are typed by what the actor uses of them
(:class:`WalletPort`, :class:`PublisherPort`, :class:`CheckerPort`): the real ones are
:class:`dealer.money.Wallet`, :class:`cardroom.runtime.publisher.AsyncPublisher` and
:class:`dealer.showdown_check.ShowdownChecker`; the fast tier passes in-memory fakes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from google.protobuf.message import Message

from cardroom.core.engine import Hand
from cardroom.core.table import AllInAllowance, Table
from cardroom.runtime.clock import Clock, SystemClock
from cardroom.runtime.transactions import Outgoing
from cardroom.v1 import wallet_pb2
from dealer import redact, views
from dealer.connections import MonitoredAllowance
from dealer.fences import Fences
from dealer.player_hands import PlayerHands


class WalletPort(Protocol):
    """The wallet calls of a table (idempotent by key; failures raise ``DealerError``)."""

    async def open_escrow(self, table_id: str, currency: int) -> None: ...

    async def buy_in(self, table_id: str, player: str, currency: int, amount: int, key: str) -> None: ...

    async def cash_out(self, table_id: str, player: str, currency: int, amount: int, key: str) -> None: ...

    async def reconcile_escrow(
        self, table_id: str, currency: int, seated: list[str], request_id: str, settled_hand_id: str = ""
    ) -> wallet_pb2.ReconcileEscrowResponse: ...

    async def claim_tables(self, partition: int, epoch: int) -> None: ...

    async def close(self) -> None: ...


class PublisherPort(Protocol):
    """Kafka publishing: ``publish`` awaits the acknowledgement, ``fire`` does not."""

    @property
    def enabled(self) -> bool: ...

    async def publish(
        self,
        topic: str,
        *,
        type: str,
        key: str,
        sequence: int,
        payload: Message,
        event_id: str | None = None,
        timeout: float = 15.0,
        linger: bool = False,
    ) -> None: ...

    def fire(
        self, topic: str, *, type: str, key: str, sequence: int, payload: Message, event_id: str | None = None
    ) -> None: ...

    def close(self) -> None: ...


class TransactionsPort(Protocol):
    """Records that go out together in one Kafka transaction of a table's partition, or not at all
    (:class:`cardroom.runtime.transactions.PartitionWriters`)."""

    async def commit(self, key: str, batch_id: str, records: Sequence[Outgoing], timeout: float = 15.0) -> None: ...

    def close(self, partition: int) -> None:
        """``partition`` is given up: its writer takes no more batches (never blocks on the broker)."""
        ...


class CheckerPort(Protocol):
    """The evaluator's audit of a finished hand; never raises."""

    async def check(self, hand: Hand, hand_id: str) -> str: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Topics:
    events: str = "cardroom.table.events"
    records: str = "cardroom.hand.records"
    settled: str = "cardroom.hand.settled"
    snapshots: str = "cardroom.table.snapshots"
    tournament_tables: str = "cardroom.tournament.tables"


@dataclass
class Deps:
    """What every table shares: service clients, the publisher and the all-in allowances."""

    wallet: WalletPort
    publisher: PublisherPort
    checker: CheckerPort
    topics: Topics = field(default_factory=Topics)
    monitor_addr: str | None = None
    allowances: dict[int, MonitoredAllowance] = field(default_factory=dict)
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    clock: Clock = field(default_factory=SystemClock)
    player_hands: PlayerHands = field(default_factory=PlayerHands)
    """Every player's recent finished hands, redacted for him (``Dealer/PlayerHands``)."""
    fences: Fences = field(default_factory=Fences)
    """The partitions of the tables this replica holds (docs/sharding.md; unsharded: every table)."""
    writers: TransactionsPort | None = None
    """Kafka transactions per partition held; None: records one by one (no Kafka, the fast tests)."""

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
    queue: asyncio.Queue[Any]
    """Its events (a :class:`~dealer.feed.FeedWatcher`'s: feed entries), None last."""
    ended: str = ""  # "closed" (the table), "slow" (buffer overflow), "stopping" (shutdown), "moved"

    def offer(self, item: redact.Outgoing, table: Table) -> None:
        """``item`` as this watcher's viewer may see it (``asyncio.QueueFull``: the watcher is too slow)."""
        seat = views.seat_of(table, self.viewer) if self.viewer else None
        self.queue.put_nowait(redact.for_viewer(item, seat))

    def end(self, why: str) -> None:
        """No more events: the stream sends those queued (the table's last, e.g. its TableClosed), then
        ends with ``why``; a watcher dropped as too slow (its queue full) ends at once."""
        self.ended = why
        if why == "slow" or self.queue.full():
            while True:
                try:
                    self.queue.get_nowait()
                except asyncio.QueueEmpty:
                    break
        self.queue.put_nowait(None)
