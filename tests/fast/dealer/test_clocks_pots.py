"""Fast tier: what the dealer sends for the table view's two clocks and the pots during the hand
(issue 13, 'The table view'), the table actor on fakes and a manual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from cardroom.core.engine import ActionKind
from cardroom.v1 import dealer_pb2
from tests.fast.dealer.fakes import Harness, harness, nl_config

RICH = {"ann": 5000, "bob": 5000, "cat": 5000}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def seconds(ts: object) -> float:
    return ts.seconds + ts.nanos / 1e9  # type: ignore[attr-defined]


def turns(h: Harness) -> list[dealer_pb2.LegalActionsView]:
    return [e.turn_started.to_act for e in h.events if e.WhichOneof("event") == "turn_started"]


def pots_sent(h: Harness) -> list[list[tuple[int, tuple[int, ...]]]]:
    return [
        [(p.amount, tuple(sorted(p.members))) for p in e.pots_changed.pots]
        for e in h.events
        if e.WhichOneof("event") == "pots_changed"
    ]


def to_act(h: Harness) -> str:
    la = h.actor.table.legal_actions()
    assert la is not None
    return h.actor.table.seating.seats[la.seat].player


async def act(h: Harness, player: str, action: int, amount: int = 0) -> None:
    req = dealer_pb2.ActRequest(table_id=h.actor.table_id, player_id=player, action=action, amount=amount)
    await h.actor.submit(lambda: h.actor.act(req))
    await h.settle()


def test_the_dealer_sends_the_action_clock_then_starts_the_time_bank_with_a_new_turn() -> None:
    """rules/000 'Tournament Rules': extra time is used when the clock runs out with an active
    connection and money in the pot; the view counts the two down separately, so the dealer says
    when the action clock ends and, in a new TurnStarted, that the time bank runs and until when."""

    async def body() -> None:
        clock = dealer_pb2.ClockSettings(action_seconds=10, time_bank_seconds=20)
        h = harness(nl_config(clock=clock), balances=RICH)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=2)
        await h.advance(1.0)
        assert h.actor.table.in_hand
        first = turns(h)[-1]
        started = seconds(first.action_deadline) - 10
        assert not first.time_bank_running and first.time_bank_seconds == 20
        assert seconds(first.deadline) == seconds(first.action_deadline)  # the bank is not running yet
        sent = len(turns(h))
        await h.advance(10.5)  # the action clock runs out: the small blind has money in the pot
        assert len(turns(h)) == sent + 1, "no TurnStarted when the time bank started"
        banked = turns(h)[-1]
        assert banked.seat == first.seat and banked.time_bank_running and banked.time_bank_seconds == 20
        assert seconds(banked.action_deadline) == started + 10 and seconds(banked.deadline) == started + 30
        state = h.actor.state("ann")
        assert state.to_act.time_bank_running and seconds(state.to_act.deadline) == started + 30
        await h.advance(5.0)
        assert len(turns(h)) == sent + 1  # nothing new while the time bank runs
        await h.stop()

    run(body)


def test_the_dealer_sends_the_side_pots_as_the_betting_goes_on() -> None:
    """rules/003 'All-Ins': "A player that is all-in can only win as much chips from every other
    player that he has put into the pot" — bob is all-in for 200 before the flop; what ann and cat
    bet after it is a side pot without him, sent (from the rules core's pots) when the round closes."""

    async def body() -> None:
        h = harness(nl_config(clock=dealer_pb2.ClockSettings(action_seconds=60)), balances=RICH)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 200, seat=2)
        await h.sit("cat", 1000, seat=3)
        while h.actor.table.in_hand:  # hand 1 is heads-up (cat waits for the big blind)
            await act(h, to_act(h), dealer_pb2.ACTION_TYPE_FOLD)
        await h.advance(1.0)
        table = h.actor.table
        assert table.in_hand and table.plan is not None and len(table.plan.dealt) == 3
        seats = {p: table.seat_of(p) for p in ("ann", "bob", "cat")}
        hand = table.hand
        assert hand is not None
        while hand.street_index == 0 and table.in_hand:
            la = table.legal_actions()
            assert la is not None
            who = to_act(h)
            if who == "bob" and ActionKind.RAISE in la.kinds:
                await act(h, who, dealer_pb2.ACTION_TYPE_RAISE, la.max_to)  # all-in
            elif ActionKind.CALL in la.kinds:
                await act(h, who, dealer_pb2.ACTION_TYPE_CALL)
            else:
                await act(h, who, dealer_pb2.ACTION_TYPE_CHECK)
        assert hand.is_all_in(seats["bob"])  # type: ignore[arg-type]
        everyone = tuple(sorted(seats.values()))  # type: ignore[type-var]
        main = hand.pot_total  # bob's 200 from each, and the blinds' dead money if any
        assert main >= 600 and pots_sent(h)[-1] == [(main, everyone)]
        la = table.legal_actions()
        assert la is not None
        bettor = to_act(h)
        await act(h, bettor, dealer_pb2.ACTION_TYPE_BET, 50)
        assert pots_sent(h)[-1] == [(main, everyone)]  # the bet is in front of him, not in a pot yet
        caller = to_act(h)
        await act(h, caller, dealer_pb2.ACTION_TYPE_CALL)
        side = tuple(sorted((seats["ann"], seats["cat"])))  # type: ignore[type-var]
        assert pots_sent(h)[-1] == [(main, everyone), (100, side)]
        state = h.actor.state("ann")
        assert [(p.amount, tuple(sorted(p.members))) for p in state.pots] == pots_sent(h)[-1]
        await h.stop()

    run(body)


def test_the_time_bank_ahead_follows_the_timeout_decision() -> None:
    """rules/000 'Extra time' is used "with an active connection and money in the pot": the first
    player to act with nothing in the pot is told of no time bank; a player on turn who loses his
    connection gets a new TurnStarted without it."""

    async def body() -> None:
        clock = dealer_pb2.ClockSettings(action_seconds=10, time_bank_seconds=20)
        h = harness(nl_config(clock=clock), balances=RICH)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=2)
        await h.sit("cat", 1000, seat=3)
        while h.actor.table.in_hand:  # hand 1 is heads-up (cat waits for the big blind)
            await act(h, to_act(h), dealer_pb2.ACTION_TYPE_FOLD)
        await h.advance(1.0)
        table = h.actor.table
        assert table.in_hand and table.plan is not None and len(table.plan.dealt) == 3
        first = turns(h)[-1]
        hand = table.hand
        assert hand is not None and hand.committed[hand.position(first.seat)] == 0  # under the gun
        assert first.time_bank_seconds == 0
        await act(h, first.player_id, dealer_pb2.ACTION_TYPE_CALL)
        blind = turns(h)[-1]  # the small blind: money in the pot
        assert blind.seat != first.seat and blind.time_bank_seconds == 20
        sent = len(turns(h))
        await h.actor.submit(lambda: h.actor.set_connected(blind.player_id, False))
        await h.settle()
        assert len(turns(h)) == sent + 1
        again = turns(h)[-1]
        assert again.seat == blind.seat and again.time_bank_seconds == 0 and not again.time_bank_running
        await h.stop()

    run(body)
