"""Re-buys and add-ons pay side by side, as registrations do (docs/capacity.md, the registration burst):
the tournament's lock is held to check, record and apply, never across the wallet's calls — so a break
where every player takes the add-on, or the end of a re-buy period, is not one wallet round trip after
another with the tournament's hands waiting behind them. rules/000: 'all Re-buys and Add-ons are added
to the tournament prize pool'; a re-buy 'ONLY if their chip count is less than or equal to' the starting
stack; the add-on is 'available during the first five minute break'."""

from __future__ import annotations

import asyncio

import pytest

from cardroom.core.tournament import Status
from cardroom.runtime.errors import ServiceError
from tests.fast.tournament.conftest import Room, rebuy_event, run_async
from tests.fast.tournament.test_register_burst import GatedBank, cash, gated, settle

PLAYERS = [f"p{i:02d}" for i in range(12)]  # two tables: a multi-table event has its breaks
POOL = "tournament_prize_pool:rb1:cash"


async def started(room: Room) -> list[str]:
    """A re-buy tournament of twelve at two tables (a multi-table event has its breaks), just started;
    no auto policy buys anything. The players who may re-buy now (their stack at most the starting
    stack: all but the first hands' winners)."""
    room.fund(*PLAYERS, amount=20_000)
    await room.house.create(rebuy_event(break_seconds=10))
    for p in PLAYERS:
        await room.house.register("rb1", p, f"r-{p}")
    runner = room.house.runners["rb1"]
    await room.play("rb1", until=lambda: runner.t.status is Status.RUNNING)
    eligible = [p for p in PLAYERS if runner.t.can_rebuy(p, room.clock.now())]
    assert len(eligible) >= 2
    return eligible


@run_async
async def test_re_buys_pay_side_by_side_and_each_goes_into_the_pool(room: Room) -> None:
    eligible = await started(room)
    runner = room.house.runners["rb1"]
    pool = room.bank.balances.get(POOL, 0)
    chips = {p: runner.t.chips(p) for p in eligible}
    bank = gated(room)
    calls = [asyncio.create_task(room.house.rebuy("rb1", p, f"rb-{p}")) for p in eligible]
    await settle()
    assert bank.waiting == len(eligible)  # all at once (one at a time before, the lock held across the wallet)
    bank.gate.set()
    answers = await asyncio.gather(*calls)
    assert all(a["paid"] == 1000 and a["chips"] == 1500 and not a["replayed"] for a in answers)
    assert {p: runner.t.chips(p) for p in eligible} == {p: chips[p] + 1500 for p in eligible}
    assert room.bank.balances[POOL] == pool + 1000 * len(eligible)
    assert all(cash(room, p) == 20_000 - 1100 - 1000 for p in eligible) and bank.total() == 0


@run_async
async def test_a_repeated_re_buy_in_flight_gets_the_first_answer_and_a_second_one_is_given_back(room: Room) -> None:
    (p0, *_) = await started(room)
    runner = room.house.runners["rb1"]
    before = runner.t.chips(p0)
    bank = gated(room)
    first = asyncio.create_task(room.house.rebuy("rb1", p0, "rb-1"))
    again = asyncio.create_task(room.house.rebuy("rb1", p0, "rb-1"))
    other = asyncio.create_task(room.house.rebuy("rb1", p0, "rb-2"))  # checked before the first is applied
    await settle()
    bank.gate.set()
    a, b, c = await asyncio.gather(first, again, other, return_exceptions=True)
    assert isinstance(a, dict) and isinstance(b, dict) and (a["replayed"], b["replayed"]) == (False, True)
    # rules/000: once above the starting stack, no re-buy: the second id's payment is given back
    assert isinstance(c, ServiceError) and c.reason == "REBUY_NOT_ALLOWED"
    assert runner.t.chips(p0) == before + 1500
    assert cash(room, p0) == 20_000 - 1100 - 1000 and bank.total() == 0


@run_async
async def test_a_caller_giving_up_mid_re_buy_leaves_the_payment_to_finish_and_a_retry_gets_its_answer(
    room: Room,
) -> None:
    """Principle 6: a caller giving up never breaks the server's state — its payment's intent is stored
    before any money moves and the payment goes on to its end; the same request id then gets its answer."""
    (p1, *_) = await started(room)
    runner = room.house.runners["rb1"]
    before = runner.t.chips(p1)
    bank = gated(room)
    call = asyncio.create_task(room.house.rebuy("rb1", p1, "rb-1"))
    await settle()
    assert bank.waiting == 1
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert runner.t.chips(p1) == before  # not applied yet: its payment waits at the wallet
    bank.gate.set()
    await settle()
    assert runner.t.chips(p1) == before + 1500  # finished with nobody waiting for it
    answer = await room.house.rebuy("rb1", p1, "rb-1")
    assert answer["paid"] == 1000 and answer["replayed"] and runner.t.chips(p1) == before + 1500
    assert cash(room, p1) == 20_000 - 1100 - 1000


@run_async
async def test_every_player_takes_the_add_on_in_the_break_side_by_side(room: Room) -> None:
    await started(room)
    runner = room.house.runners["rb1"]
    await room.play("rb1", step=0.25, until=lambda: any(runner.t.can_add_on(p, room.clock.now()) for p in PLAYERS))
    buyers = [p for p in PLAYERS if runner.t.can_add_on(p, room.clock.now())]
    assert len(buyers) >= 2
    pool = room.bank.balances.get(POOL, 0)
    chips = {p: runner.t.chips(p) for p in buyers}
    bank: GatedBank = gated(room)
    calls = [asyncio.create_task(room.house.add_on("rb1", p, f"ao-{p}")) for p in buyers]
    await settle()
    assert bank.waiting == len(buyers)
    bank.gate.set()
    answers = await asyncio.gather(*calls)
    assert all(a["paid"] == 1000 and not a["replayed"] for a in answers)
    assert {p: runner.t.chips(p) for p in buyers} == {p: chips[p] + answers[0]["chips"] for p in buyers}
    assert room.bank.balances[POOL] == pool + 1000 * len(buyers) and bank.total() == 0


@run_async
async def test_a_busted_player_s_re_buy_asked_in_time_is_not_declined_while_it_pays(room: Room) -> None:
    """A busted player has the time between hands to re-buy, else he is out; his re-buy asked in that
    time and still paying when it runs out is decided by its payment, not declined meanwhile."""
    from cardroom.core.tournament import PlayerStatus

    await started(room)
    runner = room.house.runners["rb1"]

    def pending() -> list[str]:
        return [p for p, e in runner.t.entrants.items() if e.status is PlayerStatus.PENDING_REBUY]

    await room.play("rb1", step=0.25, until=lambda: bool(pending()))
    (busted, *_) = pending()
    bank = gated(room)
    call = asyncio.create_task(room.house.rebuy("rb1", busted, "rb-late"))
    await settle()
    assert bank.waiting == 1
    room.clock.advance(5.0)  # far past the time to decide
    await room.house.step()
    assert runner.t.entrants[busted].status is PlayerStatus.PENDING_REBUY  # not declined: his payment decides
    bank.gate.set()
    answer = await call
    assert answer["paid"] == 1000 and runner.t.entrants[busted].status is PlayerStatus.ACTIVE
    assert runner.t.chips(busted) == 1500
