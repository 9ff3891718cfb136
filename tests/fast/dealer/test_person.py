"""Fast tier: table integrity as a person meets it (issue 13) — the dealer's table actor on fakes
and a manual clock: leaving on one's turn, absent players, queued chips, Stud antes, leave."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc
import pytest

from cardroom.v1 import dealer_pb2
from dealer.errors import DealerError
from dealer.tablespec import build
from tests.fast.dealer.fakes import Harness, harness, nl_config

RICH = {"ann": 5000, "bob": 5000, "cat": 5000}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def balanced(h: Harness) -> bool:
    pending = sum(c.amount for c in h.actor.pending_cashouts)
    return (
        h.actor.imbalance() == 0
        and h.wallet.escrow.get(h.actor.table_id, 0) == h.actor.escrow
        and h.actor.escrow == h.actor.chips() + pending
    )


def timeouts(h: Harness) -> list[dealer_pb2.Action]:
    return [e.action for e in h.events if e.WhichOneof("event") == "action" and e.action.timeout]


def changes(h: Harness, change: str) -> list[dealer_pb2.SeatView]:
    return [
        e.seat_changed.seat
        for e in h.events
        if e.WhichOneof("event") == "seat_changed" and e.seat_changed.change == change
    ]


async def act(h: Harness, player: str, action: int, amount: int = 0) -> None:
    req = dealer_pb2.ActRequest(table_id=h.actor.table_id, player_id=player, action=action, amount=amount)
    await h.actor.submit(lambda: h.actor.act(req))
    await h.settle()


def to_act(h: Harness) -> str:
    la = h.actor.table.legal_actions()
    assert la is not None
    return h.actor.table.seating.seats[la.seat].player


async def three_players(h: Harness) -> None:
    """ann, bob and cat dealt into hand 2 (hand 1 is heads-up: cat waits for the big blind)."""
    await h.sit("ann", 1000, seat=1)
    await h.sit("bob", 1000, seat=2)
    await h.sit("cat", 1000, seat=3)
    while h.actor.table.in_hand:
        await act(h, to_act(h), dealer_pb2.ACTION_TYPE_FOLD)
    await h.advance(1.0)
    assert h.actor.table.in_hand and h.actor.table.plan is not None and len(h.actor.table.plan.dealt) == 3


def test_leaving_on_ones_turn_does_not_time_the_next_player_out() -> None:
    """Issue 13 bug 1: `leave` on one's turn folded that player and the next seat 'timed out'
    within ms. rules/003 'Time limits': each player has the action clock for his decision."""

    async def body() -> None:
        h = harness(nl_config(clock=dealer_pb2.ClockSettings(action_seconds=10)), balances=RICH)
        await three_players(h)
        await h.advance(4.0)
        leaver = to_act(h)
        seat = h.actor.table.seat_of(leaver)
        assert seat is not None
        behind = h.actor.table.stack(seat)
        reply = await h.stand(leaver)
        await h.settle()
        assert reply.pending and reply.returning == behind > 0  # coming back when the hand ends
        nxt = to_act(h)
        assert nxt != leaver and timeouts(h) == []
        clock = h.actor.table.clock
        assert clock is not None and clock.deadline == h.clock.now() + 10
        await h.advance(9.0)
        assert timeouts(h) == [] and to_act(h) == nxt  # his full clock
        await h.stop()

    run(body)


def test_chips_added_during_ones_hand_are_queued_and_added_before_the_next_deal() -> None:
    """Issue 13 bug 5; rules/002 'All-Ins': 'You can increase your "table stake" at any time in
    between hands. NEVER DURING A HAND.'"""

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=2)
        await h.advance(0.1)
        assert h.actor.table.in_hand
        reply = await h.add("ann", 300)
        assert reply.queued and reply.seat.queued_chips == 300
        assert h.wallet.balances["ann"] == 4000  # nothing moved during the hand
        await act(h, to_act(h), dealer_pb2.ACTION_TYPE_FOLD)
        await h.settle()
        assert h.actor.table.hand_number == 1 and not h.actor.table.in_hand
        assert h.wallet.balances["ann"] == 3700 and [s.stack for s in changes(h, "chips_added")]
        stacks = {s.player: s.stack for s in h.actor.table.seating.seats.values()}
        assert stacks["ann"] + stacks["bob"] == 2300 and balanced(h)
        await h.advance(1.0)
        assert h.actor.table.hand_number == 2
        await h.stop()

    run(body)


def test_a_disconnected_player_is_sat_out_then_stood_up_with_his_chips_returned() -> None:
    """Issue 13 bug 2: a disconnected player times out (rules/000 'Disconnects': check, else fold),
    is sat out after the table's timeouts in a row, and after the sit-out limit stood up with his
    chips back in his account."""

    async def body() -> None:
        config = nl_config(
            clock=dealer_pb2.ClockSettings(action_seconds=5, sit_out_after_timeouts=2, stand_up_after_seconds=60)
        )
        h = harness(config, balances=RICH)
        await three_players(h)
        await h.actor.submit(lambda: h.actor.set_connected("cat", False))
        for _ in range(40):
            if changes(h, "timed_out_sat_out"):
                break
            if h.actor.table.in_hand and to_act(h) != "cat":
                la = h.actor.table.legal_actions()
                assert la is not None
                kinds = {k.value for k in la.kinds}
                await act(
                    h, to_act(h), dealer_pb2.ACTION_TYPE_CHECK if "check" in kinds else dealer_pb2.ACTION_TYPE_CALL
                )
            else:
                await h.advance(5.5)
        assert [s.player_id for s in changes(h, "timed_out_sat_out")] == ["cat"]
        assert {a.player_id for a in timeouts(h)} == {"cat"}
        cat = h.actor.table.seat_of("cat")
        assert cat is not None and h.actor.table.seating.seats[cat].sitting_out
        stack = h.actor.table.stack(cat)
        before = h.wallet.balances["cat"]
        for _ in range(30):  # the others play on; cat is not dealt in
            if h.actor.table.seat_of("cat") is None:
                break
            if h.actor.table.in_hand:
                assert not h.actor.table.dealt_in(cat)
                await act(h, to_act(h), dealer_pb2.ACTION_TYPE_FOLD)
            else:
                await h.advance(5.0)
        assert h.actor.table.seat_of("cat") is None
        assert [(s.player_id, s.stack) for s in changes(h, "absent_stood_up")] == [("cat", stack)]
        assert h.wallet.balances["cat"] == before + stack and balanced(h)
        await h.stop()

    run(body)


def test_stud_ante_is_derived_and_an_explicit_zero_refused_unless_chosen() -> None:
    """rules/001 (Stud): 'an ante ... normally 10% of the minimum bet' ($1 in $10-$20)."""

    def stud(**stakes: int | bool) -> dealer_pb2.TableConfig:
        return dealer_pb2.TableConfig(name="s", variant="F7S", stakes=dealer_pb2.Stakes(**stakes))  # type: ignore[arg-type]

    assert build(stud(small_bet=10, big_bet=20)).stakes.ante == 1
    assert build(stud(small_bet=2, big_bet=4)).stakes.ante == 1  # at least one chip
    assert build(stud(small_bet=100)).stakes.ante == 10
    assert build(stud(small_bet=10, ante=2)).stakes.ante == 2
    with pytest.raises(DealerError) as info:
        build(stud(small_bet=10, ante=0))
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT and "ante" in info.value.message
    assert build(stud(small_bet=10, ante=0, no_ante=True)).stakes.ante == 0
    assert build(stud(small_bet=10, no_ante=True)).stakes.ante == 0


def test_a_new_player_may_post_the_big_blind_now_instead_of_waiting() -> None:
    """rules/002 'Button and Blinds': 'When a player first sits at an active table, they may post
    the equivalent of the big blind.'"""

    async def body() -> None:
        h = harness(balances={**RICH, "dan": 5000})
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=3)
        await h.sit("cat", 1000, seat=5)
        for _ in range(2):  # hand 1 heads-up, hand 2 with cat in the big blind
            await h.advance(1.0)
            while h.actor.table.in_hand:
                await act(h, to_act(h), dealer_pb2.ACTION_TYPE_FOLD)
        await h.sit("dan", 1000, seat=2)  # just after the next big blind (seat 1)
        view = h.actor.state("dan").seats
        assert [s.waiting_for_big_blind for s in view if s.player_id == "dan"] == [True]
        req = dealer_pb2.SeatCommandRequest(table_id=h.actor.table_id, player_id="dan", post_now=True)
        reply = await h.actor.submit(lambda: h.actor.come_back(req))
        assert not reply.seat.waiting_for_big_blind
        await h.advance(1.0)
        dan = h.actor.table.seat_of("dan")
        assert h.actor.table.hand_number == 3 and dan is not None and h.actor.table.dealt_in(dan)
        await h.stop()

    run(body)


def test_sitting_out_during_the_hand_keeps_ones_own_cards_visible() -> None:
    """Issue 13 view: after `sitout` during a hand his own cards turned into '?? ??' (the seat
    change went out redacted for everyone); hole cards only to their owner (principle 3)."""

    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=2)
        watcher_ann, _ = h.actor.subscribe("ann")
        watcher_bob, _ = h.actor.subscribe("bob")
        await h.advance(0.1)
        req = dealer_pb2.SeatCommandRequest(table_id=h.actor.table_id, player_id="ann")
        await h.actor.submit(lambda: h.actor.sit_out(req))

        def sat_out(w: object) -> dealer_pb2.SeatView:
            events = []
            while not w.queue.empty():  # type: ignore[attr-defined]
                events.append(w.queue.get_nowait())  # type: ignore[attr-defined]
            return [
                e.seat_changed.seat
                for e in events
                if isinstance(e, dealer_pb2.TableEvent)
                and e.WhichOneof("event") == "seat_changed"
                and e.seat_changed.change == "sat_out"
            ][0]

        own, other = sat_out(watcher_ann), sat_out(watcher_bob)
        assert len(own.cards) == 2 and "??" not in own.cards
        assert list(other.cards) == ["??", "??"]
        await h.stop()

    run(body)


def test_the_demo_and_bot_stud_tables_have_an_ante() -> None:
    """Issue 13 bug 3: the demo Stud table (scripts/run.py's bots, `stakes_for`) had no ante."""
    from cardroom.client.bots import stakes_for

    for variant in ("F7S", "F7S/8", "FSK"):
        spec = build(dealer_pb2.TableConfig(name="demo", variant=variant, stakes=stakes_for(variant)))
        assert spec.stakes.ante >= 1 and spec.stakes.bring_in > spec.stakes.ante
