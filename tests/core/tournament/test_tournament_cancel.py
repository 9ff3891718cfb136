"""Cancelling a tournament in progress (rules/000 'Tournament Cancellation Policy'), and the
tournament table settings (extra time)."""

import random

from cardroom.core.engine.simulation import shuffled_deck
from cardroom.core.table.settings import GameKind
from cardroom.core.tournament import CancellationPolicy, Status
from cardroom.core.tournament.events import Cancelled
from tests.core.tournament.helpers import of_type, started


def test_fifty_fifty_when_nobody_is_in_the_money() -> None:
    """rules/000 '50/50 Tournament Policy' — 20 entrants, equal stacks: each remaining player gets
    an equal half share and an equal chip share of the 20,000 pool, and his 100 fee."""
    t = started(20, late_registration_seconds=0.0)
    t.deal(next(iter(t.tables)), shuffled_deck(random.Random(1)), 3600.0)  # a hand in progress
    payout = t.cancel(3601.0)
    assert t.status is Status.CANCELLED and payout.policy is CancellationPolicy.FIFTY_FIFTY
    assert payout.awards == {p: 1000 for p in t.entrants}  # 500 equal + 500 by chips (rolled back)
    assert payout.fees == {p: 100 for p in t.entrants}
    (event,) = of_type(t, Cancelled)
    assert dict(event.payouts) == {p: 1100 for p in t.entrants}


def test_in_the_money_each_gets_the_lowest_prize_not_awarded_then_by_chips() -> None:
    """rules/000 'In the Money Tournament Policy' — 3 entrants, 3 places paid (50/30/20 % of
    3,000): each gets the 3rd prize (600) and a third of the remaining 1,200, plus his fee."""
    t = started(3, late_registration_seconds=0.0)
    payout = t.cancel(3600.0)
    assert payout.policy is CancellationPolicy.IN_THE_MONEY
    assert payout.awards == {p: 600 + 400 for p in t.entrants}
    assert sum(payout.awards.values()) == t.prize_pool == 3000


def test_a_guaranteed_pool_is_not_paid_on_cancellation() -> None:
    """rules/000: 'If the cancelled tournament has a guaranteed prize pool only the entry fee will
    be returned not the guaranteed prize.'"""
    t = started(10, guarantee=50_000, late_registration_seconds=0.0)
    assert t.prize_pool == 50_000
    payout = t.cancel(3600.0)
    assert sum(payout.awards.values()) == 10_000  # what the players paid in, not the guarantee
    assert set(payout.fees.values()) == {100}


def test_tournament_tables_give_extra_time() -> None:
    """rules/000: 'Each player is given Extra Time, beside the normal time, to make a decision
    during a tournament.'"""
    t = started(12, extra_time_seconds=45.0)
    for table in t.tables.values():
        assert table.settings.kind is GameKind.TOURNAMENT and table.settings.time_bank_seconds == 45.0
        assert all(table.time_bank[s] == 45.0 for s in table.seating.seats)
