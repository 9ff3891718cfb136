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


async def hand_with_a_late_sitter() -> tuple[Harness, dealer_pb2.TableSnapshot, dealer_pb2.TableSnapshot]:
    """The second hand dealt, then dan sits down while it is played (the table writes a snapshot): the table,
    its snapshot at the deal and the one after dan sat down."""
    h = harness(balances=RICH)
    await second_hand(h)
    dealt = h.actor.table.hand_number
    at_deal = next(s for s in h.snapshots if s.hand_in_progress and s.hands_dealt == dealt)
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
