"""The pots in the middle during a hand (``Hand.pots(include_bets=False)``), as a table shows them
(issue 13: "side pots separately" in the table view, from the rules core's pots)."""

from __future__ import annotations

from cardroom.core.engine import Stakes
from tests.core.engine.helpers import make


def pots(hand, **kw) -> list[tuple[int, tuple[int, ...]]]:  # noqa: ANN001
    return [(p.amount, tuple(sorted(p.members))) for p in hand.pots(**kw)]


def test_side_pot_in_the_middle_once_the_round_closes() -> None:
    """rules/003 'All-Ins': "A player that is all-in can only win as much chips from every other
    player that he has put into the pot". Seat 2 is all-in for 100; seats 1 and 3 bet on."""
    hand = make("NT", Stakes.blinds(5, 10), {1: 1000, 2: 100, 3: 1000}, button=3)
    assert pots(hand, include_bets=False) == []  # the blinds are bets in front of the players
    # with the bets counted, the big blind's unmatched 5 would show as a pot of his own
    assert pots(hand) == [(10, (1, 2)), (5, (2,))]
    hand.bet_or_raise_to(300)  # seat 3 (the button) raises
    hand.call()  # seat 1 (small blind) calls
    hand.call()  # seat 2 (big blind) calls all-in for 100
    assert hand.street_index == 1
    assert pots(hand, include_bets=False) == [(300, (1, 2, 3)), (400, (1, 3))]
    hand.bet_or_raise_to(50)  # seat 1 bets on the flop: in front of him, not yet in a pot
    assert pots(hand, include_bets=False) == [(300, (1, 2, 3)), (400, (1, 3))]
    assert pots(hand) == [(300, (1, 2, 3)), (400, (1, 3)), (50, (1,))]
    hand.call()
    assert pots(hand, include_bets=False) == [(300, (1, 2, 3)), (500, (1, 3))]
