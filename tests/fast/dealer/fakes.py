"""In-memory fakes for the dealer's table actor (fast tier): wallet, publisher, checker.

They keep the behaviour the actor relies on — the wallet's idempotency keys and balances,
the publisher's acknowledgement or failure — so failure branches can be driven in-process.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from cardroom.runtime.clock import ManualClock
from cardroom.runtime.transactions import Outgoing
from cardroom.v1 import dealer_pb2, events_pb2, wallet_pb2
from dealer.actor import TableActor
from dealer.deps import Deps
from dealer.errors import DealerError, precondition, unavailable
from dealer.fences import Fences
from dealer.tablespec import build


@dataclass
class FakeWallet:
    """Player balances and table escrows; a replayed idempotency key moves nothing again."""

    balances: dict[str, int] = field(default_factory=dict)
    escrow: dict[str, int] = field(default_factory=dict)
    applied: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # key -> (kind, player, amount)
    calls: list[tuple[str, str, int, str]] = field(default_factory=list)
    down: bool = False  # every call UNAVAILABLE
    refuse_buy_in: DealerError | None = None  # the next buy-ins fail with this
    during_buy_in: Callable[[], None] | None = None  # runs while a buy-in is in flight
    lose_reply: bool = False  # the next buy-in is applied, then its answer is lost (UNAVAILABLE)
    positions: dict[tuple[str, str], int] = field(default_factory=dict)  # (table, player) -> chips (no hand nets)
    reversed: set[str] = field(default_factory=set)  # buy-in keys a reconciliation paid back
    refuse_reconcile: int = 0  # the next reconciliations: FAILED_PRECONDITION (last hand not applied yet)
    reconciles: list[tuple[str, list[str], str, str]] = field(default_factory=list)  # table, seated, id, hand

    claims: dict[int, int] = field(default_factory=dict)  # partition -> highest epoch claimed

    async def open_escrow(self, table_id: str, currency: int) -> None:
        self.escrow.setdefault(table_id, 0)

    async def claim_tables(self, partition: int, epoch: int) -> None:
        if self.claims.get(partition, 0) > epoch:
            raise precondition(f"partition {partition} is held at epoch {self.claims[partition]}")
        self.claims[partition] = epoch

    async def buy_in(self, table_id: str, player: str, currency: int, amount: int, key: str) -> None:
        self.calls.append(("buy_in", player, amount, key))
        if self.during_buy_in is not None:
            hook, self.during_buy_in = self.during_buy_in, None
            hook()
        await asyncio.sleep(0)
        if self.down:
            raise unavailable("wallet unavailable (buy-in); retry with the same request_id")
        if self.refuse_buy_in is not None:
            raise self.refuse_buy_in
        if key in self.reversed:
            raise precondition(f"buy-in: {key} was paid back by an escrow reconciliation")
        if key in self.applied:
            return
        if self.balances.get(player, 0) < amount:
            raise precondition(f"buy-in: insufficient funds in the account of {player}")
        self.balances[player] -= amount
        self.escrow[table_id] = self.escrow.get(table_id, 0) + amount
        self.positions[table_id, player] = self.positions.get((table_id, player), 0) + amount
        self.applied[key] = ("buy_in", player, amount)
        if self.lose_reply:
            self.lose_reply = False
            raise unavailable("wallet unavailable (buy-in); retry with the same request_id")

    async def cash_out(self, table_id: str, player: str, currency: int, amount: int, key: str) -> None:
        self.calls.append(("cash_out", player, amount, key))
        await asyncio.sleep(0)
        if self.down:
            raise unavailable("wallet unavailable (cash-out); retry with the same request_id")
        if key in self.applied:
            return
        self.escrow[table_id] = self.escrow.get(table_id, 0) - amount
        self.balances[player] = self.balances.get(player, 0) + amount
        self.positions[table_id, player] = self.positions.get((table_id, player), 0) - amount
        self.applied[key] = ("cash_out", player, amount)

    async def reconcile_escrow(
        self, table_id: str, currency: int, seated: list[str], request_id: str, settled_hand_id: str = ""
    ) -> wallet_pb2.ReconcileEscrowResponse:
        self.reconciles.append((table_id, list(seated), request_id, settled_hand_id))
        await asyncio.sleep(0)
        if self.down:
            raise unavailable("wallet unavailable (reconcile)")
        if self.refuse_reconcile:
            self.refuse_reconcile -= 1
            raise precondition(f"settled_hand_id: hand {settled_hand_id!r} is not applied yet; retry")
        reply = wallet_pb2.ReconcileEscrowResponse()
        for (table, player), amount in sorted(self.positions.items()):
            if table != table_id or player in seated or amount <= 0:
                continue
            self.positions[table, player] = 0
            self.escrow[table_id] -= amount
            self.balances[player] = self.balances.get(player, 0) + amount
            self.reversed |= {k for k, (kind, p, _) in self.applied.items() if kind == "buy_in" and p == player}
            reply.transfers.add(to_account=player, amount=amount)
            reply.total_returned += amount
        return reply

    async def close(self) -> None:
        return None


@dataclass
class Published:
    topic: str
    type: str
    key: str
    sequence: int
    payload: Message
    event_id: str | None
    #: published with ``linger``: in the request of the records fired meanwhile
    linger: bool = False


@dataclass
class FakePublisher:
    """Records what was published; topics in ``failing`` raise as an unreachable broker would."""

    enabled: bool = True
    sent: list[Published] = field(default_factory=list)
    fired: list[Published] = field(default_factory=list)
    failing: set[str] = field(default_factory=set)

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
    ) -> None:
        await asyncio.sleep(0)
        if topic in self.failing:
            raise TimeoutError(f"no acknowledgement from the broker for {topic}")
        copy = type_of(payload)()
        copy.CopyFrom(payload)
        self.sent.append(Published(topic, type, key, sequence, copy, event_id, linger))

    def fire(
        self, topic: str, *, type: str, key: str, sequence: int, payload: Message, event_id: str | None = None
    ) -> None:
        copy = type_of(payload)()
        copy.CopyFrom(payload)
        self.fired.append(Published(topic, type, key, sequence, copy, event_id))

    def on(self, topic: str) -> list[Any]:
        return [p.payload for p in self.sent if p.topic == topic]

    def close(self) -> None:
        return None


@dataclass
class FakeWriters:
    """Kafka transactions on the fake publisher: a batch's records all land in ``publisher.sent``
    together, or none (any of their topics in ``publisher.failing``); ``commits`` lists the batches."""

    publisher: FakePublisher
    commits: list[tuple[str, list[Published]]] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)  # the partitions given up, in order

    async def commit(self, key: str, batch_id: str, records: Sequence[Outgoing], timeout: float = 15.0) -> None:
        await asyncio.sleep(0)
        failing = sorted({o.topic for o in records} & self.publisher.failing)
        if failing:
            raise TimeoutError(f"transaction not committed: no acknowledgement from the broker for {failing}")
        batch = []
        for o in records:
            copy = type_of(o.payload)()
            copy.CopyFrom(o.payload)
            batch.append(Published(o.topic, o.type, o.key, o.sequence, copy, o.event_id))
        self.publisher.sent.extend(batch)
        self.commits.append((batch_id, batch))

    def close(self, partition: int) -> None:
        self.closed.append(partition)


def type_of(message: Message) -> Any:
    return type(message)


class FakeChecker:
    """The evaluator cross-check, skipped."""

    def __init__(self) -> None:
        self.checked: list[str] = []

    async def check(self, hand: Any, hand_id: str) -> str:
        self.checked.append(hand_id)
        return "skipped"

    async def close(self) -> None:
        return None


@dataclass
class Harness:
    """One table actor on fakes and a manual clock, with helpers to drive it."""

    actor: TableActor
    wallet: FakeWallet
    publisher: FakePublisher
    clock: ManualClock

    @property
    def snapshots(self) -> list[dealer_pb2.TableSnapshot]:
        return self.publisher.on(self.actor.deps.topics.snapshots)

    @property
    def settled(self) -> list[events_pb2.HandSettled]:
        return self.publisher.on(self.actor.deps.topics.settled)

    @property
    def events(self) -> list[dealer_pb2.TableEvent]:
        """The table events published (each record a batch of them)."""
        return [e for p in self.publisher.fired for e in p.payload.events]

    async def settle(self, rounds: int = 50) -> None:
        """Let the actor's task run until it waits for the clock or a command."""
        for _ in range(rounds):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        await self.settle()
        self.clock.advance(seconds)
        await self.settle()

    async def sit(self, player: str, buy_in: int, seat: int = 0, request_id: str = "") -> dealer_pb2.SeatResponse:
        req = dealer_pb2.SitDownRequest(
            table_id=self.actor.table_id, player_id=player, seat=seat, buy_in=buy_in, request_id=request_id
        )
        key = f"dealer:buyin:{self.actor.table_id}:{request_id or uuid.uuid4().hex}"  # as the service keys it
        return await self.actor.submit(lambda: self.actor.sit_down(req, key), request_id, fingerprint(req))

    async def add(self, player: str, amount: int, request_id: str = "") -> dealer_pb2.SeatResponse:
        req = dealer_pb2.AddChipsRequest(
            table_id=self.actor.table_id, player_id=player, amount=amount, request_id=request_id
        )
        key = f"dealer:addchips:{self.actor.table_id}:{request_id or uuid.uuid4().hex}"  # as the service keys it
        return await self.actor.submit(lambda: self.actor.add_chips(req, key), request_id, fingerprint(req))

    async def stand(self, player: str, request_id: str = "") -> dealer_pb2.StandUpResponse:
        req = dealer_pb2.SeatCommandRequest(table_id=self.actor.table_id, player_id=player, request_id=request_id)
        return await self.actor.submit(
            lambda: self.actor.stand_up(req, request_id or player), request_id, b"standup" + fingerprint(req)
        )

    async def stop(self) -> None:
        await self.actor.stop()


def fingerprint(request: Message) -> bytes:
    return hashlib.sha256(request.SerializeToString(deterministic=True)).digest()


def nl_config(**kw: Any) -> dealer_pb2.TableConfig:
    config = dealer_pb2.TableConfig(
        name="fast",
        variant="NT",
        seats=6,
        stakes=dealer_pb2.Stakes(small_blind=5, big_blind=10),
        min_buy_in=200,
        max_buy_in=2000,
        clock=dealer_pb2.ClockSettings(action_seconds=10),
        hand_pause_seconds=0.5,
    )
    for key, value in kw.items():
        if isinstance(value, Message):
            getattr(config, key).CopyFrom(value)
        else:
            setattr(config, key, value)
    return config


def harness(
    config: dealer_pb2.TableConfig | None = None,
    balances: dict[str, int] | None = None,
    table_id: str = "fast-1",
    start: bool = True,
    fences: Fences | None = None,
) -> Harness:
    """A started actor (call inside a running loop); ``fences``: the replica's holds (unsharded if None)."""
    clock = ManualClock()
    wallet = FakeWallet(balances=dict(balances or {}))
    publisher = FakePublisher()
    deps = Deps(
        wallet, publisher, FakeChecker(), clock=clock, writers=FakeWriters(publisher), fences=fences or Fences()
    )
    actor = TableActor(table_id, build(config or nl_config()), deps)
    if start:
        actor.start()
    return Harness(actor, wallet, publisher, clock)


def accounted(h: Harness) -> bool:
    """The wallet's escrow holds what the table says it holds: the chips on it and the cash-outs pending."""
    pending = sum(c.amount for c in h.actor.pending_cashouts)
    return h.wallet.escrow.get(h.actor.table_id, 0) == h.actor.escrow == h.actor.chips() + pending


async def restarted(h: Harness, snapshot: dealer_pb2.TableSnapshot | None = None) -> Harness:
    """The dealer process dies; a new one (or another replica) restores the table from ``snapshot`` (the
    last one written by default) with the same wallet."""
    written = snapshot if snapshot is not None else h.snapshots[-1]
    await h.stop()
    again = harness(written.config, balances=dict(h.wallet.balances), start=False)  # as server.py builds it
    again.wallet.escrow, again.wallet.positions = dict(h.wallet.escrow), dict(h.wallet.positions)
    again.wallet.applied = dict(h.wallet.applied)
    again.actor.restore(written)
    await again.actor.recover(close=False)
    again.actor.start()
    return again


def stack_of(h: Harness, player: str) -> int:
    seat = h.actor.table.seat_of(player)
    assert seat is not None, f"{player} is not seated"
    return h.actor.table.stack(seat)
