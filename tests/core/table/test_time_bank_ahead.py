"""``Table.time_bank_ahead``: the time bank the player on turn gets when his action clock runs out,
from the same timeout decision the table applies (for the table view's two clocks, issue 13)."""

from __future__ import annotations

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind as A, Game, Stakes, Structure
from cardroom.core.table.clock import TimeoutDecision
from cardroom.core.table.settings import GameKind, TableSettings
from cardroom.core.table.table import Table


def table() -> Table:
    settings = TableSettings(Game.HOLDEM, Structure.NO_LIMIT, GameKind.TOURNAMENT, seat_count=6, time_bank_seconds=20.0)
    t = Table(settings, Stakes.blinds(100, 200))
    for s in (1, 2, 3):
        t.sit_down(s, f"p{s}", 10000)
    return t


def test_the_time_bank_ahead_is_the_one_the_timeout_decision_gives() -> None:
    """rules/000 'Extra time': used "when the clock runs out with an active connection and money in
    the pot". Seat 1 (first to act, nothing in the pot) gets none; seat 2 (small blind) gets his 20 s,
    not once it runs, and not while disconnected."""
    t = table()
    t.start_hand(list(DECK), now=0.0)
    la = t.legal_actions()
    assert la is not None and la.seat == 1
    assert t.time_bank_ahead(0.0) == 0.0  # no money in the pot
    t.act(1, A.CALL, now=1.0)
    assert t.time_bank_ahead(1.0) == 20.0
    t.set_connected(2, False)
    assert t.time_bank_ahead(1.0) == 0.0
    t.set_connected(2, True)
    assert t.tick(31.0) == [(2, TimeoutDecision.USE_TIME_BANK)]
    assert t.time_bank_ahead(31.0) == 0.0  # running: the turn's deadline says the rest
