"""The tournament cancellation policy of rules/000 ('Tournament Cancellation Policy')."""

import random

from cardroom.core.tournament.cancellation import (
    CancellationPolicy,
    EntryPaid,
    GuaranteeCancellation,
    Payment,
    fifty_fifty,
    in_the_money,
    refund_before_start,
    share_by_chips,
    share_equally,
)
from cardroom.core.tournament.payouts import prizes


def test_before_the_start_every_registration_is_refunded_in_the_way_it_was_paid() -> None:
    """rules/000: 'all players will receive a refund of their full tournament registration fees.
    Tournament fees will be refunded in the exact manner that they were paid. (This may include
    any combination of cash, Gold Chips or Gold Cards).'"""
    entries = [
        EntryPaid("ann", 1000, 100, (Payment("cash", 600), Payment("gold_chips", 500))),
        EntryPaid("bob", 1000, 100),
    ]
    out = refund_before_start(entries)
    assert out.policy is CancellationPolicy.BEFORE_START
    assert out.refunds["ann"] == (Payment("cash", 600), Payment("gold_chips", 500))
    assert out.refunds["bob"] == (Payment("cash", 1100),)
    assert out.total_to("ann") == out.total_to("bob") == 1100


def test_fifty_fifty_half_equally_half_by_chips_plus_the_entry_fee() -> None:
    """rules/000 '50/50 Tournament Policy': 'awarding 50% of the prize pool to all remaining
    players and the other 50% of the prize pool will be awarded proportionately based on each
    players chip count. All remaining players will also receive their entry fee.'"""
    # 10 entrants at $10+$1: pool $100; three remain with 6000, 3000, 1000 chips
    stacks = {"ann": 6000, "bob": 3000, "cy": 1000}
    out = fifty_fifty(10_000, stacks, {p: 100 for p in stacks})
    # 5000 equally (1667, 1667, 1666: the remainder cent to the bigger stacks), 5000 by chips
    assert out.awards == {"ann": 1667 + 3000, "bob": 1667 + 1500, "cy": 1666 + 500}
    assert out.fees == {"ann": 100, "bob": 100, "cy": 100}
    assert sum(out.awards.values()) == 10_000


def test_eliminated_players_get_nothing_on_cancellation() -> None:
    """rules/000: 'Any player who was eliminated prior to the interruption will not be entitled
    to a refund.'"""
    out = fifty_fifty(10_000, {"ann": 1, "bob": 1}, {"ann": 100, "bob": 100, "out": 100})
    assert "out" not in out.awards and "out" not in out.fees


def test_in_the_money_each_gets_the_minimum_prize_not_yet_awarded_rest_by_chips() -> None:
    """rules/000 'In the Money Tournament Policy': 'awarding each remaining player with the
    minimum prize not yet awarded and the rest of the prize pool will be awarded proportionately
    based on each players chip count'."""
    # 10 entrants, pool 10000: prizes 5000/3000/2000; three remain -> each 2000, rest 4000 by chips
    table = prizes(10_000, 10)
    stacks = {"ann": 5000, "bob": 3000, "cy": 2000}
    out = in_the_money(table, stacks, {p: 100 for p in stacks})
    assert out.awards == {"ann": 2000 + 2000, "bob": 2000 + 1200, "cy": 2000 + 800}
    assert sum(out.awards.values()) == sum(table)
    # two remain (3rd place already paid): the minimum not yet awarded is 2nd's 3000
    out2 = in_the_money(table[:2], {"ann": 1, "bob": 3}, {})
    assert out2.awards == {"ann": 3000 + 500, "bob": 3000 + 1500}


def test_guaranteed_pool_cancellation_does_not_pay_the_guarantee() -> None:
    """rules/000: 'If the cancelled tournament has a guaranteed prize pool only the entry fee will
    be returned not the guaranteed prize.'"""
    stacks = {"ann": 3, "bob": 1}
    # guarantee 50000, collected 8000: only the collected money is distributed (default)
    out = fifty_fifty(8_000, stacks, {"ann": 100, "bob": 100}, guaranteed=True)
    assert sum(out.awards.values()) == 8_000 and out.house_kept == 0
    literal = fifty_fifty(
        8_000, stacks, {"ann": 100, "bob": 100}, guaranteed=True, guarantee_rule=GuaranteeCancellation.FEES_ONLY
    )
    assert literal.awards == {} and literal.fees == {"ann": 100, "bob": 100}
    assert literal.house_kept == 8_000


def test_every_cancellation_pays_out_exactly_the_pool() -> None:
    """Property: no cent created or lost, whatever the pool, stacks and policy."""
    rng = random.Random(3)
    for _ in range(2000):
        n = rng.randint(1, 40)
        stacks = {f"p{i}": rng.choice([0, rng.randint(1, 10**6)]) for i in range(n)}
        if not any(stacks.values()):
            stacks["p0"] = 1
        pool = rng.randint(0, 10**7)
        out = fifty_fifty(pool, stacks, {})
        assert sum(out.awards.values()) + out.house_kept == pool
        entrants = rng.randint(n, 500)
        table = prizes(pool, entrants)
        if len(table) >= n:
            money = sum(table[:n])
            itm = in_the_money(table[:n], stacks, {})
            assert sum(itm.awards.values()) == money
            short = rng.randint(0, money)
            capped = in_the_money(table[:n], stacks, {}, available=short, guaranteed=True)
            assert sum(capped.awards.values()) == short


def test_shares_by_chips_use_the_largest_remainder() -> None:
    assert share_by_chips(100, {"a": 1, "b": 1, "c": 1}) == {"a": 34, "b": 33, "c": 33}
    assert share_by_chips(10, {"a": 2, "b": 1}) == {"a": 7, "b": 3}
    assert share_equally(10, {"a": 1, "b": 5, "c": 1}) == {"a": 3, "b": 4, "c": 3}
