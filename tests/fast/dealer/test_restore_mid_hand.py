"""A cash table restored from a snapshot written while a hand was played. rules/000 'Crash': "the hands in
progress at every table will be restored by rolling back these hands. Each player's chip count will be
reset to the amount at the beginning of the hand"; rules/003: "All games that were running at the moment of
the crash will be cancelled and all the chips in the pot returned to the players who participated."

A table writes snapshots during a hand too (a player sits down, sits out, adds chips); before, those kept the
seating as the deal had left it: the restored table had the cancelled hand's button and blinds already taken,
and the next hand moved the button again, past a player's turn to deal and to post."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from cardroom.v1 import dealer_pb2
from tests.fast.dealer.fakes import Harness, accounted, harness, restarted, stack_of

RICH = {p: 5000 for p in ("ann", "bob", "cat", "dan")}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10))


async def second_hand(h: Harness) -> None:
    """Three players; the first hand played out by the clock, the second dealt."""
    for player in ("ann", "bob", "cat"):
        await h.sit(player, 1000)
    await h.advance(1.0)
    for _ in range(40):
        await h.advance(11)
        if h.actor.table.hand_number >= 2 and h.actor.table.in_hand:
            return
    raise AssertionError("no second hand dealt")


def snapshot_at_deal(h: Harness) -> dealer_pb2.TableSnapshot:
    """The snapshot the table wrote when it dealt the hand it is playing."""
    dealt = h.actor.table.hand_number
    return next(s for s in h.snapshots if s.hand_in_progress and s.hands_dealt == dealt)


async def hand_with_a_late_sitter() -> tuple[Harness, dealer_pb2.TableSnapshot, dealer_pb2.TableSnapshot]:
    """The second hand dealt, then dan sits down while it is played (the table writes a snapshot): the table,
    its snapshot at the deal and the one after dan sat down."""
    h = harness(balances=RICH)
    await second_hand(h)
    at_deal = snapshot_at_deal(h)
    await h.sit("dan", 1000)
    during = h.snapshots[-1]
    assert during.hand_in_progress and len(during.seats) == 4
    return h, at_deal, during


async def replayed(h: Harness, snapshot: dealer_pb2.TableSnapshot) -> tuple[Harness, tuple[int, int, list[int]]]:
    """The table restored from ``snapshot`` and its next deal: hand number, button, seats dealt in."""
    again = await restarted(h, snapshot)
    await again.advance(1.0)
    started = [e.hand_started for e in again.events if e.HasField("hand_started")][-1]
    return again, (started.hand_number, started.button, sorted(s.seat for s in started.seats))


def test_a_snapshot_written_during_a_hand_restores_the_seating_from_before_its_deal() -> None:
    async def body() -> None:
        h, at_deal, _ = await hand_with_a_late_sitter()
        rolled_back, expected = await replayed(h, at_deal)  # the rollback the deal's snapshot holds
        await rolled_back.stop()

        h, _, during = await hand_with_a_late_sitter()
        again, replay = await replayed(h, during)
        # the cancelled hand dealt again: its number, its button, its players (dan waits for the big blind)
        assert replay == expected, (replay, expected)
        # ... and the player who sat down during the hand keeps his seat and his chips
        assert stack_of(again, "dan") == 1000 and accounted(again)
        await again.stop()

    run(body)


# ---------------------------------------------------------------- chips queued during the hand
# rules/002: chips are added between hands only, so a player in the hand who asks for more is answered
# "queued": they are added before the next deal. Before, the queue was not in the table's snapshots: a crash
# during the hand lost it (the player, told his chips were coming, found none), and the request sent again
# then added them as new.


async def queued_in_hand(h: Harness) -> tuple[int, int]:
    """ann, dealt in the second hand, asks for 300 more (request "r-top"): her seat and her stack at the deal."""
    await second_hand(h)
    seat = h.actor.table.seat_of("ann")
    assert seat is not None and h.actor.table.dealt_in(seat)
    answer = await h.add("ann", 300, request_id="r-top")
    assert answer.queued
    return seat, next(s.stack for s in snapshot_at_deal(h).seats if s.player_id == "ann")


def test_chips_queued_during_a_hand_are_added_after_a_crash_cancels_it() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        _, start_stack = await queued_in_hand(h)
        assert [(q.player_id, q.amount) for q in h.snapshots[-1].queued_chips] == [("ann", 300)]

        again = await restarted(h)  # the hand cancelled: stacks as at its deal, then the queued chips added
        assert stack_of(again, "ann") == start_stack + 300
        assert again.wallet.balances["ann"] == 5000 - 1000 - 300 and accounted(again)
        # the request sent again (its answer lost with the process) adds nothing more
        answer = await again.add("ann", 300, request_id="r-top")
        assert not answer.queued and answer.seat.stack == start_stack + 300
        assert again.wallet.balances["ann"] == 3700 and accounted(again)
        assert not again.snapshots[-1].queued_chips
        await again.stop()

    run(body)


def test_a_crash_while_the_queued_chips_are_moved_adds_them_once() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        seat, _ = await queued_in_hand(h)
        mid_flight: list[dealer_pb2.TableSnapshot] = []
        h.wallet.during_buy_in = lambda: mid_flight.append(h.snapshots[-1])
        for _ in range(40):  # the hand played out by the clock: the chips move after it
            await h.advance(11)
            if mid_flight:
                break
        [write_ahead] = mid_flight
        assert write_ahead.HasField("pending_buy_in") and not write_ahead.queued_chips  # one or the other
        after_hand = next(s.stack for s in write_ahead.seats if s.player_id == "ann")

        again = await restarted(h, write_ahead)  # the process died while the wallet moved them
        assert stack_of(again, "ann") == after_hand + 300 and accounted(again)
        answer = await again.add("ann", 300, request_id="r-top")  # sent again: done already
        assert answer.seat.stack == after_hand + 300 and accounted(again)
        assert again.wallet.balances["ann"] == 3700
        await again.stop()

    run(body)


def test_a_request_sent_again_during_the_hand_is_queued_once() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        seat, _ = await queued_in_hand(h)
        # no request id to the mailbox: the table itself must know the request (as after its answers expired)
        answer = await h.actor.submit(
            lambda: h.actor.add_chips(
                dealer_pb2.AddChipsRequest(table_id=h.actor.table_id, player_id="ann", amount=300, request_id="r-top"),
                f"dealer:addchips:{h.actor.table_id}:r-top",
            )
        )
        assert answer.queued and h.actor.table.queued_chips(seat) == 300
        assert [q.amount for q in h.actor.chips_queued.values()] == [300]
        await h.stop()

    run(body)


# ---------------------------------------------------------------- leaving or sitting out during the hand
# A player in the hand who stands up leaves when it ends (his answer: pending); one who sits out is not dealt
# the next hand. Before, neither was in the table's snapshots: after a crash cancelled the hand he was
# seated and dealt in again (a player who had left the table, his chips in play while he was gone).


def test_a_player_who_left_during_the_hand_is_gone_after_a_crash_and_his_chips_are_back() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await second_hand(h)
        dealt = h.actor.table.hand_number
        at_deal = snapshot_at_deal(h)
        # one whose stack is his buy-in (the fake wallet's escrow positions leave out the hands' nets)
        leaver, seat = next((s.player_id, s.seat) for s in at_deal.seats if s.stack == 1000)
        answer = await h.stand(leaver, request_id="r-leave")
        assert answer.pending

        again = await restarted(h)  # the hand cancelled: stacks as at its deal, and he is gone with his
        assert again.actor.table.seat_of(leaver) is None
        assert [c for c in again.wallet.calls if c[:2] == ("cash_out", leaver)] == [
            ("cash_out", leaver, 1000, f"dealer:leave:{again.actor.hand_id(dealt)}:{seat}")
        ]
        assert again.wallet.balances[leaver] == 5000 and accounted(again)
        await again.advance(1.0)
        started = [e.hand_started for e in again.events if e.HasField("hand_started")][-1]
        assert leaver not in [s.player_id for s in started.seats]  # the two others play on
        await again.stop()

    run(body)


def test_a_player_who_sat_out_during_the_hand_is_not_dealt_in_after_a_crash() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await second_hand(h)
        await h.actor.submit(
            lambda: h.actor.sit_out(dealer_pb2.SeatCommandRequest(table_id=h.actor.table_id, player_id="bob"))
        )
        again = await restarted(h)
        bob = again.actor.table.seat_of("bob")
        assert bob is not None and again.actor.table.is_sitting_out(bob) and accounted(again)
        await again.advance(1.0)
        assert again.actor.table.hand is None or bob not in again.actor.table.plan.dealt  # type: ignore[union-attr]
        await again.stop()

    run(body)
