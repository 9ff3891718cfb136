"""Registrations of one tournament pay side by side (docs/capacity.md, the registration burst): the
tournament's lock is held to check, record and apply, never across the wallet's calls — and each payment
in flight holds a seat, so a full event is never oversold, a repeated request id still pays once, and a
caller giving up mid-payment leaves the payment to finish (the next try gets its answer).

The bug measured: a 200-player burst took 5 s (39 registrations/s) with no process busy, each
registration waiting for the one before it to finish its three wallet calls."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import grpc
import pytest

from cardroom.core.tournament import Status
from cardroom.runtime.errors import ServiceError
from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import Room, run_async, sng
from tests.fast.tournament.fakes import FakeBank
from tournament import house
from tournament.store import MoneyOp


@dataclass
class GatedBank(FakeBank):
    """A wallet whose transfers wait at a gate: how many are waiting at once is the concurrency."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: int = 0

    async def transfer(self, op: MoneyOp) -> bool:
        self.waiting += 1
        try:
            await self.gate.wait()
        finally:
            self.waiting -= 1
        return await super().transfer(op)


def gated(room: Room) -> GatedBank:
    bank = GatedBank(balances=room.bank.balances)
    room.bank = bank
    room.house.bank = bank
    return bank


def cash(room: Room, player: str) -> int:
    return room.bank.balances.get(f"player_cash:{player}:cash", 0)


async def settle() -> None:
    for _ in range(50):
        await asyncio.sleep(0)


async def burst(room: Room, players: list[str], seats: int) -> tuple[GatedBank, list[asyncio.Task[dict]]]:
    """A Sit & Go of ``seats``; each of ``players`` (funded) registers at once, their payments held
    at the wallet's gate."""
    room.fund(*players)
    await room.house.create(sng(players=seats))
    bank = gated(room)
    calls = [asyncio.create_task(room.house.register("sng1", p, f"r-{p}")) for p in players]
    await settle()
    return bank, calls


@run_async
async def test_registrations_pay_side_by_side_and_a_full_sit_and_go_is_not_oversold(room: Room) -> None:
    players = [f"p{i}" for i in range(5)]
    bank, calls = await burst(room, players, 3)
    assert bank.waiting == 3  # three seats, three payments at once (one at a time before)
    bank.gate.set()
    answers = await asyncio.gather(*calls, return_exceptions=True)
    registered = [p for p, a in zip(players, answers, strict=True) if isinstance(a, dict)]
    refused = [a for a in answers if isinstance(a, ServiceError)]
    assert registered == players[:3] and len(refused) == 2
    assert {(e.code, e.reason) for e in refused} == {(grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENT_FULL")}
    assert room.house.runners["sng1"].t.status is Status.RUNNING
    assert [cash(room, p) for p in players] == [10_000 - 1100] * 3 + [10_000] * 2  # the two never paid
    assert len(bank.transfers) == 3 * 2 and bank.total() == 0  # buy-in and fee legs, no refund


@run_async
async def test_a_repeat_of_a_request_id_in_flight_gets_the_first_answer_and_pays_once(room: Room) -> None:
    room.fund("ann")
    await room.house.create(sng(players=3))
    bank = gated(room)
    first = asyncio.create_task(room.house.register("sng1", "ann", "req-1"))
    await settle()
    again = asyncio.create_task(room.house.register("sng1", "ann", "req-1"))
    await settle()
    bank.gate.set()
    a, b = await asyncio.gather(first, again)
    assert (a["replayed"], b["replayed"]) == (False, True) and a["paid"] == b["paid"] == 1100
    assert cash(room, "ann") == 10_000 - 1100 and len(bank.transfers) == 2


@run_async
async def test_a_player_short_of_funds_holds_no_seat(room: Room) -> None:
    room.fund("bob", "cat")
    room.fund("ann", amount=100)
    await room.house.create(sng(players=2))
    bank = gated(room)
    calls = [asyncio.create_task(room.house.register("sng1", p, f"r-{p}")) for p in ("ann", "bob", "cat")]
    await settle()
    bank.gate.set()
    ann, bob, cat = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(ann, ServiceError) and ann.reason == "INSUFFICIENT_FUNDS"
    assert isinstance(bob, dict) and isinstance(cat, dict)
    assert cash(room, "ann") == 100 and room.house.runners["sng1"].t.status is Status.RUNNING


@run_async
async def test_a_caller_giving_up_mid_payment_leaves_the_payment_to_finish(room: Room) -> None:
    """Principle 6: a caller giving up never breaks the server's state — the payment's intent is
    stored before any money moves, the payment goes on to its end, and the same request id gets its
    answer, charged once."""
    room.fund("ann", "bob")
    await room.house.create(sng(players=3))
    bank = gated(room)
    call = asyncio.create_task(room.house.register("sng1", "ann", "req-1"))
    await settle()
    assert bank.waiting == 1
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert "ann" not in room.house.runners["sng1"].t.entrants and cash(room, "ann") == 10_000
    bank.gate.set()
    await settle()
    assert "ann" in room.house.runners["sng1"].t.entrants  # the payment went on to its end by itself
    answer = await room.house.register("sng1", "ann", "req-1")
    assert answer["paid"] == 1100 and "ann" in room.house.runners["sng1"].t.entrants
    assert cash(room, "ann") == 10_000 - 1100
    await room.house.register("sng1", "bob", "req-2")  # the seat ann held is not held any more
    assert len(room.house.runners["sng1"].t.entrants) == 2


@run_async
async def test_at_most_paying_at_once_registrations_call_the_wallet_together(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One grpc.aio process with more than ~1,100 unary calls in flight cancels some of its own
    (docs/capacity.md): the side-by-side payments are bounded, the others wait their turn."""
    monkeypatch.setattr(house, "PAYING_AT_ONCE", 2)
    room.reopen()
    bank, calls = await burst(room, [f"p{i}" for i in range(5)], 6)
    assert bank.waiting == 2
    bank.gate.set()
    await asyncio.gather(*calls)
    assert len(room.house.runners["sng1"].t.entrants) == 5 and bank.total() == 0


def test_an_owed_wave_pays_side_by_side_up_to_a_transfer_that_may_need_an_earlier_ones_money() -> None:
    def op(key: str, source: str, target: str) -> MoneyOp:
        return MoneyOp(key, "t1", source, target, 100, 1, "t1")

    refunds = [op(f"r{i}", "pool", f"p{i}") for i in range(5)] + [op(f"f{i}", "fees", f"p{i}") for i in range(5)]
    assert house.owed_wave(refunds) == refunds  # every refund from money already in the pool and fees
    overlay_then_prizes = [op("o", "external:house", "pool"), op("w1", "pool", "p1"), op("w2", "pool", "p2")]
    assert house.owed_wave(overlay_then_prizes) == overlay_then_prizes[:1]  # the prizes wait for the overlay
    assert house.owed_wave(overlay_then_prizes[1:]) == overlay_then_prizes[1:]
    many = [op(f"r{i}", "pool", f"p{i}") for i in range(house.PAYING_AT_ONCE + 5)]
    assert house.owed_wave(many) == many[: house.PAYING_AT_ONCE]


@run_async
async def test_the_refunds_of_a_cancelled_tournament_are_paid_side_by_side(room: Room) -> None:
    """rules/000: 'If a tournament is cancelled prior to starting, all players will receive a refund of
    their full tournament registration fees' — 1,000 of them took over 20 s one transfer at a time."""
    players = [f"p{i}" for i in range(6)]
    room.fund(*players)
    await room.house.create(sng("mtt1", format=pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=600, max_entrants=0))
    for p in players:
        await room.house.register("mtt1", p, f"r-{p}")
    await room.house.cancel("mtt1", "c1")
    bank = gated(room)
    paying = asyncio.create_task(room.house.pay_owed())
    await settle()
    assert bank.waiting == 2 * len(players)  # buy-in and fee back to each, all at once
    bank.gate.set()
    assert await paying == 0
    assert all(cash(room, p) == 10_000 for p in players) and bank.total() == 0
