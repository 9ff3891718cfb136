"""Fast tier: each player's recent hands kept by the dealer, redacted for him (issue 12: "their
own hole cards only, others' only where shown at showdown"; the house rule: mucked hands are never
shown). The table actor on fakes plays hands to a showdown and to a fold; every record is checked
against the engine's own hand."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

from cardroom.core.engine import ActionKind, Hand, HandMucked, HandShown
from cardroom.v1 import dealer_pb2
from dealer.player_hands import PlayerHands
from tests.fast.dealer.fakes import Harness, harness, nl_config

RICH = {"ann": 5000, "bob": 5000, "cat": 5000}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


def to_act(h: Harness) -> str:
    la = h.actor.table.legal_actions()
    assert la is not None
    return h.actor.table.seating.seats[la.seat].player


async def act(h: Harness, player: str, action: int) -> None:
    req = dealer_pb2.ActRequest(table_id=h.actor.table_id, player_id=player, action=action)
    await h.actor.submit(lambda: h.actor.act(req))
    await h.settle()


def keep_hands(h: Harness) -> dict[str, Hand]:
    """The engine's finished hands by hand id (the truth), from the showdown checker's calls."""
    kept: dict[str, Hand] = {}
    checker: Any = h.actor.deps.checker

    async def check(hand: Hand, hand_id: str) -> str:
        kept[hand_id] = hand
        return "skipped"

    checker.check = check
    return kept


async def play_hand(h: Harness, fold_first: bool) -> None:
    """One hand: the first to act folds (``fold_first``), the others check or call it down."""
    number = h.actor.table.hand_number
    first = True
    while h.actor.table.in_hand and h.actor.table.hand_number == number:
        la = h.actor.table.legal_actions()
        assert la is not None
        if first and fold_first:
            await act(h, to_act(h), dealer_pb2.ACTION_TYPE_FOLD)
        elif ActionKind.CHECK in la.kinds:
            await act(h, to_act(h), dealer_pb2.ACTION_TYPE_CHECK)
        else:
            await act(h, to_act(h), dealer_pb2.ACTION_TYPE_CALL)
        first = False
    await h.advance(1.0)


def bracketed(text: str) -> set[str]:
    return {card for group in re.findall(r"\[([^\]]*)\]", text) for card in group.split()}


def check_record(record: dealer_pb2.RecentHand, hand: Hand) -> None:
    shown = {e.seat for e in hand.events if isinstance(e, HandShown)}
    mucked = {e.seat for e in hand.events if isinstance(e, HandMucked)}
    mine = record.seat
    assert hand.players[hand.position(mine)] == record.player_id
    written = bracketed(record.pokerstars)
    assert f"Dealt to {record.player_id} [" in record.pokerstars
    for s in record.seats:
        real = [str(c) for c in hand.hole_cards(s.seat)]
        assert (s.shown, s.mucked, s.folded) == (s.seat in shown, s.seat in mucked, hand.is_folded(s.seat))
        if s.seat == mine or s.seat in shown:
            assert s.cards == real and set(real) <= written
        else:  # folded or mucked: never shown, in the record or in its PokerStars text
            assert s.cards == [] and not set(real) & written, (record.player_id, s)


def test_each_player_keeps_his_own_redacted_hands() -> None:
    async def body() -> None:
        h = harness(nl_config(clock=dealer_pb2.ClockSettings(action_seconds=60)), balances=RICH)
        truth = keep_hands(h)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=2)
        await h.sit("cat", 1000, seat=3)
        await h.advance(0.1)
        for n in range(16):  # 8 showdowns: a loser who shows after the first mucks in most of them
            await play_hand(h, fold_first=n % 2 == 1)
        await h.settle()
        store = h.actor.deps.player_hands
        seen_shown = seen_mucked = seen_folded = 0
        for player in ("ann", "bob", "cat"):
            records = store.recent(player)
            assert records and all(r.player_id == player for r in records)
            numbers = [r.hand_number for r in records]
            assert numbers == sorted(numbers, reverse=True)  # newest first
            for record in records:
                check_record(record, truth[record.hand_id])
                others = [s for s in record.seats if s.seat != record.seat]
                seen_shown += any(s.shown for s in others)
                seen_mucked += any(s.mucked for s in others)
                seen_folded += any(s.folded for s in others)
            assert store.recent(player, 2) == records[:2]
        assert seen_shown and seen_folded, "the hands played had no showdown or no fold"
        assert seen_mucked, "no hand was mucked in 8 three-way showdowns"
        await h.stop()

    run(body)


def test_the_ring_is_bounded() -> None:
    async def body() -> None:
        h = harness(nl_config(clock=dealer_pb2.ClockSettings(action_seconds=60)), balances=RICH)
        h.actor.deps.player_hands = PlayerHands(keep=3)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=2)
        await h.advance(0.1)
        for _ in range(5):
            await play_hand(h, fold_first=True)
        numbers = [r.hand_number for r in h.actor.deps.player_hands.recent("ann")]
        assert numbers == [5, 4, 3]
        assert h.actor.deps.player_hands.recent("nobody") == []
        await h.stop()

    run(body)


def test_the_players_kept_are_bounded_the_longest_idle_forgotten() -> None:
    async def body() -> None:
        h = harness(nl_config(clock=dealer_pb2.ClockSettings(action_seconds=60)), balances=RICH)
        h.actor.deps.player_hands = PlayerHands(keep=3, players=2)
        await h.sit("ann", 1000, seat=1)
        await h.sit("bob", 1000, seat=2)
        await h.advance(0.1)
        await play_hand(h, fold_first=True)
        assert h.actor.deps.player_hands.recent("ann") and h.actor.deps.player_hands.recent("bob")
        await h.stand("bob")
        await h.sit("cat", 1000, seat=3)
        await h.advance(1.0)
        for _ in range(3):
            await play_hand(h, fold_first=True)
        store = h.actor.deps.player_hands
        assert store.recent("bob") == [] and store.recent("ann") and store.recent("cat")
        await h.stop()

    run(body)
