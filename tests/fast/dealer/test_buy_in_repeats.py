"""A buy-in request sent again after the dealer restarted, or after its table moved to another replica, is
never credited twice. The table's mailbox answers a repeated request id with its first answer, but it does
not survive a restart; the wallet replays a repeated idempotency key without moving money again. Before
the table's snapshots named the buy-ins done, a repeat whose first answer the crash lost (the client, or
the gateway on UNAVAILABLE, sends it again) put the chips on the table a second time with no money
behind them: "Money is integers; every chip is accounted for ... idempotent transfers, a table's
escrow equals its players' stacks" (the developers' guide, architecture principle 2)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc
import pytest

from cardroom.v1 import dealer_pb2
from dealer.errors import DealerError
from dealer.state import BUY_INS_KEPT
from dealer.writeahead import buy_in_digest
from tests.fast.dealer.fakes import accounted, harness, restarted, stack_of

RICH = {"ann": 5000, "bob": 5000}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10))


def test_an_add_chips_sent_again_after_a_restart_is_answered_and_not_credited_twice() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000, request_id="r-sit")
        await h.add("ann", 200, request_id="r-add")  # alone at the table: no hand, added at once
        assert stack_of(h, "ann") == 1200 and accounted(h)

        again = await restarted(h)  # the answer to r-add was lost with the process
        answer = await again.add("ann", 200, request_id="r-add")
        assert answer.seat.player_id == "ann" and answer.seat.stack == 1200  # the first outcome
        assert stack_of(again, "ann") == 1200 and again.wallet.balances["ann"] == 3800
        assert accounted(again), (again.wallet.escrow, again.actor.escrow, again.actor.chips())
        # a new request adds chips as always
        await again.add("ann", 300, request_id="r-add-2")
        assert stack_of(again, "ann") == 1500 and again.wallet.balances["ann"] == 3500 and accounted(again)
        await again.stop()

    run(body)


def test_a_sit_down_sent_again_after_a_restart_is_answered_with_the_seat() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        first = await h.sit("ann", 1000, request_id="r-sit")
        again = await restarted(h)
        answer = await again.sit("ann", 1000, request_id="r-sit")
        assert answer.seat.seat == first.seat.seat and answer.seat.stack == 1000
        assert again.wallet.balances["ann"] == 4000 and accounted(again)
        await again.stop()

    run(body)


def test_a_sit_down_sent_again_after_the_player_left_is_refused_and_moves_nothing() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000, request_id="r-sit")
        await h.stand("ann", request_id="r-stand")
        assert h.wallet.balances["ann"] == 5000 and h.actor.table.seat_of("ann") is None

        again = await restarted(h)  # a stale copy of r-sit arrives at the new process
        with pytest.raises(DealerError) as refused:
            await again.sit("ann", 1000, request_id="r-sit")
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
        assert "already carried out" in refused.value.message
        assert again.actor.table.seat_of("ann") is None and again.actor.chips() == 0
        assert again.wallet.balances["ann"] == 5000 and accounted(again)
        await again.stop()

    run(body)


def test_a_buy_in_redone_on_restore_is_done_for_the_request_sent_again() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000, request_id="r-sit")
        mid_flight: list[dealer_pb2.TableSnapshot] = []
        # the process dies while the wallet carries out the add-chips: only the write-ahead is on record
        h.wallet.during_buy_in = lambda: mid_flight.append(h.snapshots[-1])
        await h.add("ann", 200, request_id="r-add")
        [write_ahead] = mid_flight
        assert write_ahead.HasField("pending_buy_in") and write_ahead.seats[0].stack == 1000

        again = await restarted(h, write_ahead)  # recover() redoes the buy-in: the wallet replays its key
        assert stack_of(again, "ann") == 1200 and accounted(again)
        answer = await again.add("ann", 200, request_id="r-add")
        assert answer.seat.stack == 1200 and stack_of(again, "ann") == 1200
        assert again.wallet.balances["ann"] == 3800 and accounted(again)
        await again.stop()

    run(body)


def test_the_buy_ins_done_are_in_every_snapshot_and_the_oldest_are_forgotten() -> None:
    async def body() -> None:
        h = harness(balances=RICH, start=False)
        keys = [f"dealer:addchips:fast-1:ann/r-{n}" for n in range(BUY_INS_KEPT + 6)]
        for key in keys:
            h.actor._mark_buy_in_done(key)
        snap = h.actor.snapshot()
        assert list(snap.buy_ins_done) == [buy_in_digest(k) for k in keys[6:]]
        again = harness(start=False)
        again.actor.restore(snap)
        assert again.actor.buy_in_done(keys[-1]) and again.actor.buy_in_done(keys[6])
        assert not again.actor.buy_in_done(keys[5])
        assert buy_in_digest(keys[0]) != buy_in_digest(keys[1]) and buy_in_digest(keys[0]) < 2**64

    run(body)
