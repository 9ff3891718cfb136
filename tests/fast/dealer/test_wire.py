"""What the dealer's public table events say happened (fast tier, in-process)."""

from __future__ import annotations

import asyncio

from cardroom.v1 import dealer_pb2
from tests.fast.dealer.fakes import harness


def test_an_artificial_all_in_is_sent_as_one_not_as_a_call() -> None:
    """rules/003: a disconnected limit player whose clock runs out facing a bet 'will be
    treated as all-in' for what he put in the pot. The wire must say so (issue 10: it was
    sent as an all-in call), with no chips added and his bet unchanged."""

    async def body() -> None:
        config = dealer_pb2.TableConfig(
            name="fl",
            variant="FT",
            seats=2,
            stakes=dealer_pb2.Stakes(small_bet=10),
            clock=dealer_pb2.ClockSettings(action_seconds=5),
            hand_pause_seconds=1,
        )
        h = harness(config, balances={"ann": 5000, "bob": 5000})
        await h.sit("ann", 500)
        await h.sit("bob", 500)
        await h.settle()
        assert h.actor.table.in_hand
        la = h.actor.table.legal_actions()
        assert la is not None
        first = h.actor.table.seating.seats[la.seat].player
        hand = h.actor.table.hand
        assert hand is not None
        bet_before = hand.bets[hand.position(la.seat)]
        assert bet_before > 0 and la.call_amount > 0  # money in the pot, facing a bet
        await h.actor.submit(lambda: h.actor.set_connected(first, False))
        await h.advance(5.5)
        actions = [e.action for e in h.events if e.WhichOneof("event") == "action" and e.action.seat == la.seat]
        assert actions, "the clock did not act"
        made = actions[0]
        assert made.action == dealer_pb2.ACTION_TYPE_ARTIFICIAL_ALL_IN, dealer_pb2.ActionType.Name(made.action)
        assert made.all_in and made.timeout and made.added == 0 and made.player_id == first
        assert made.to == bet_before  # his bet as it stood
        await h.stop()

    asyncio.run(asyncio.wait_for(body(), 10))
