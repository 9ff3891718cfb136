"""A cash player's time bank across a crash: what he used stays used.

A cash table gives each player its time bank when he sits down (``time_bank_seconds``) and takes from it
each turn he runs past the action clock; nothing refills it. Before, a restore gave every seated player the
full bank again (the snapshots did not hold it), so a dealer crash or a move of the table to another replica
handed out extra time. rules/000's Extra Time "is limited ... It decreases as it is being used"."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from cardroom.v1 import dealer_pb2
from tests.fast.dealer.fakes import Harness, harness, nl_config, restarted

CLOCK = dealer_pb2.ClockSettings(action_seconds=10, time_bank_seconds=20)
RICH = {p: 5000 for p in ("ann", "bob", "cat")}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10))


def banks(h: Harness) -> dict[str, float]:
    seating = h.actor.table.seating.seats
    return {seating[seat].player: left for seat, left in h.actor.table.time_bank.items() if seat in seating}


async def a_bank_used() -> tuple[Harness, str, str]:
    """Heads-up, the first to act runs 5 s into his time bank, then folds: the table, him and the other."""
    h = harness(nl_config(clock=CLOCK), balances=RICH)
    await h.sit("ann", 1000, seat=1)
    await h.sit("bob", 1000, seat=2)  # dealt at once: his action clock starts now
    la = h.actor.table.legal_actions()
    assert la is not None
    slow = h.actor.table.seating.seats[la.seat].player
    await h.advance(15.0)  # the action clock (10 s) then 5 s of his bank
    fold = dealer_pb2.ActRequest(table_id=h.actor.table_id, player_id=slow, action=dealer_pb2.ACTION_TYPE_FOLD)
    await h.actor.submit(lambda: h.actor.act(fold))
    await h.settle()
    other = "bob" if slow == "ann" else "ann"
    assert banks(h) == {slow: 15.0, other: 20.0}
    return h, slow, other


def test_a_restore_after_the_hand_keeps_the_time_bank_used() -> None:
    async def body() -> None:
        h, slow, other = await a_bank_used()
        assert not h.actor.table.in_hand and not h.snapshots[-1].hand_in_progress  # the hand's end written
        again = await restarted(h)
        assert banks(again) == {slow: 15.0, other: 20.0}
        await again.stop()

    run(body)


def test_a_restore_during_a_hand_keeps_the_time_bank_used_and_gives_a_newcomer_his() -> None:
    async def body() -> None:
        h, slow, other = await a_bank_used()
        await h.advance(1.0)  # the next hand dealt
        assert h.actor.table.in_hand
        await h.sit("cat", 1000, seat=3)  # written during the hand: the crash cancels it
        assert h.snapshots[-1].hand_in_progress
        again = await restarted(h)
        assert banks(again) == {slow: 15.0, other: 20.0, "cat": 20.0}
        await again.stop()

    run(body)
