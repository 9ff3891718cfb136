"""Rolling a deal back (``Seating.before_deal`` / ``Seating.rolled_back``): rules/000 'Crash': "the hands in
progress at every table will be restored by rolling back these hands. Each player's chip count will be reset
to the amount at the beginning of the hand." A table's snapshot taken while a hand is played keeps the seating
as that rollback leaves it: the button, the blinds and the debts from before the deal, the seat changes made
since as they are."""

from __future__ import annotations

import copy
import random

import pytest

from cardroom.core.engine import ActionKind
from cardroom.core.table import RolledBack
from cardroom.core.table.seating import Seating
from tests.core.table.test_seating import table
from tests.core.table.test_table import DECK_ORDER, holdem


def test_a_deal_rolled_back_gives_the_seating_from_before_it() -> None:
    s = table(1, 2, 3, 4, 5)
    s.next_hand()  # button 1, SB 2, BB 3
    s.sit_out(4)
    before = copy.deepcopy(s)
    memo = s.before_deal()
    plan = s.next_hand()  # the big blind passes seat 4: missed; the button moves
    assert plan is not None and s.seats[4].missed_big and s.last_button != before.last_button
    assert s.rolled_back(memo, plan.dealt) == before
    assert s.seats[4].missed_big  # the seating itself is left as it is


def test_seat_changes_made_during_the_hand_are_kept() -> None:
    s = table(1, 2, 3)
    s.sit_down(5, "p5", 100)
    s.sit_out(5)
    memo = s.before_deal()
    plan = s.next_hand()
    assert plan is not None and 5 not in plan.dealt
    s.sit_down(6, "late", 300)  # sat down while the hand was played
    s.set_stack(5, 150)  # chips added by a player not dealt in
    s.come_back(5, post_now=True)
    rolled = s.rolled_back(memo, plan.dealt)
    assert rolled.seats[6].player == "late" and rolled.seats[6].stack == 300 and rolled.seats[6].new
    assert rolled.seats[5].stack == 150 and not rolled.seats[5].sitting_out and rolled.seats[5].post_now
    assert rolled.last_big_blind is None  # the first hand: no rotation before it
    assert all(rolled.seats[x].new for x in (1, 2, 3))  # the debts the deal cleared are owed again


def test_a_player_not_dealt_in_who_left_during_the_hand_is_remembered_as_he_was_before_the_deal() -> None:
    s = table(1, 2, 3, 4, 5)
    s.next_hand()
    s.sit_out(4)
    memo = s.before_deal()
    plan = s.next_hand()  # marks seat 4's missed big blind
    assert plan is not None and s.seats[4].missed_big
    s.stand_up(4)
    assert "p4" in s.remembered
    assert "p4" not in s.rolled_back(memo, plan.dealt).remembered  # he owed nothing before the deal


def _command(s: Seating, rng: random.Random, dealt: tuple[int, ...], n: int) -> tuple[str, tuple[object, ...]]:
    """A random seat change a table allows while a hand is played: on a seat not dealt in."""
    seat = rng.randint(1, n)
    if seat in dealt:
        return "", ()
    if seat not in s.seats:
        pid = f"p{rng.randint(0, 40)}"
        if any(x.player == pid for x in s.seats.values()):
            return "", ()
        return "sit_down", (seat, pid, rng.randint(1, 300))
    return rng.choice([("stand_up", (seat,)), ("sit_out", (seat,)), ("come_back", (seat,)), ("set_stack", (seat, 77))])


def _apply(s: Seating, name: str, args: tuple[object, ...]) -> None:
    if name == "come_back":
        s.come_back(*args, post_now=True)  # type: ignore[arg-type]
    elif name:
        getattr(s, name)(*args)


@pytest.mark.parametrize("seed", range(6))
def test_rolled_back_is_the_seat_changes_applied_to_the_seating_from_before_the_deal(seed: int) -> None:
    """Over random sessions: a deal, then seat changes on seats not dealt in, rolled back, equals the same
    changes made to the seating as it was before the deal (with no hand dealt at all)."""
    rng = random.Random(seed)
    n = 9
    s = Seating(n, small_blind=1, big_blind=2)
    for _ in range(300):
        for _ in range(rng.randint(0, 2)):
            _apply(s, *_command(s, rng, (), n))
        before = copy.deepcopy(s)
        memo = s.before_deal()
        plan = s.next_hand()
        if plan is None:
            continue
        for _ in range(rng.randint(0, 3)):
            name, args = _command(s, rng, plan.dealt, n)
            _apply(s, name, args)
            _apply(before, name, args)
        assert s.rolled_back(memo, plan.dealt) == before


def test_a_table_rolls_back_the_hand_it_deals_and_nothing_between_hands() -> None:
    t = holdem(seats=(1, 2, 3))
    assert t.rolled_back().seating is t.seating  # between hands: the seating itself
    before = copy.deepcopy(t.seating)
    t.start_hand(DECK_ORDER)
    assert t.seating.last_button is not None and t.rolled_back() == RolledBack(before)
    while t.in_hand:  # everyone folds to the big blind
        t.act(t.hand.actor_seat, ActionKind.FOLD)  # type: ignore[union-attr]
    t.finish()
    assert t.rolled_back().seating is t.seating and t.seating.last_button is not None
