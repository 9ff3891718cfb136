"""The payout structure of rules/000 ('Tournament Payout Structure') and prize amounts."""

import itertools
import random

import pytest

from cardroom.core.tournament.payouts import (
    BASIS,
    PAYOUT_TABLE,
    SatelliteRemainder,
    UnassignedShare,
    guaranteed_pool,
    payout_column,
    place_shares,
    places_paid,
    prizes,
    satellite_prizes,
    split_tied,
)

# Every column of the document, transcribed independently as (places, percent) pairs.
DOCUMENT = {
    (3, 19): [(1, 50), (1, 30), (1, 20)],
    (20, 34): [(1, 45), (1, 25), (1, 17.5), (1, 12.5)],
    (35, 39): [(1, 40), (1, 24), (1, 16), (1, 12), (1, 8)],
    (40, 49): [(1, 40), (1, 22), (1, 15), (1, 10), (1, 7), (1, 6)],
    (50, 79): [(1, 30), (1, 20), (1, 13), (1, 9.4), (1, 6.6), (1, 5.8), (1, 4.8), (1, 4), (1, 3.4), (1, 3)],
    (80, 119): [(1, 27), (1, 18), (1, 12), (1, 8.7), (1, 6), (1, 5.2), (1, 4.4), (1, 3.5), (1, 2.8), (1, 2.4), (5, 2)],
    (120, 169): [
        (1, 26),
        (1, 17),
        (1, 11),
        (1, 8),
        (1, 5.8),
        (1, 4.8),
        (1, 4.2),
        (1, 3.4),
        (1, 2.6),
        (1, 2.2),
        (5, 1.6),
        (5, 1.4),
    ],
    (170, 249): [
        (1, 25),
        (1, 16),
        (1, 10),
        (1, 6.8),
        (1, 4.8),
        (1, 4.2),
        (1, 3.4),
        (1, 2.8),
        (1, 2.2),
        (1, 1.8),
        (5, 1.4),
        (5, 1.2),
        (10, 1),
    ],
    (250, 349): [
        (1, 25),
        (1, 16),
        (1, 10),
        (1, 6.6),
        (1, 4.6),
        (1, 3.8),
        (1, 3),
        (1, 2.4),
        (1, 2),
        (1, 1.6),
        (5, 1.2),
        (5, 1),
        (10, 0.8),
        (10, 0.6),
    ],
    (350, 449): [
        (1, 25),
        (1, 16),
        (1, 10),
        (1, 6.4),
        (1, 4.4),
        (1, 3.4),
        (1, 2.6),
        (1, 2.1),
        (1, 1.7),
        (1, 1.4),
        (5, 1),
        (5, 0.8),
        (10, 0.7),
        (10, 0.6),
        (10, 0.5),
    ],
    (450, 549): [
        (1, 25),
        (1, 15),
        (1, 9),
        (1, 6.4),
        (1, 4.4),
        (1, 3.3),
        (1, 2.5),
        (1, 2),
        (1, 1.6),
        (1, 1.3),
        (5, 1),
        (5, 0.8),
        (10, 0.7),
        (10, 0.5),
        (10, 0.45),
        (10, 0.4),
    ],
    (550, 699): [
        (1, 25),
        (1, 15),
        (1, 9),
        (1, 6.2),
        (1, 4.2),
        (1, 3.2),
        (1, 2.3),
        (1, 1.9),
        (1, 1.5),
        (1, 1.2),
        (5, 1),
        (5, 0.8),
        (10, 0.6),
        (10, 0.5),
        (10, 0.4),
        (10, 0.35),
        (10, 0.3),
    ],
    (700, 949): [
        (1, 24),
        (1, 14),
        (1, 8.8),
        (1, 6.2),
        (1, 4.2),
        (1, 3.2),
        (1, 2.3),
        (1, 1.9),
        (1, 1.5),
        (1, 1.2),
        (5, 0.8),
        (5, 0.7),
        (10, 0.55),
        (10, 0.45),
        (10, 0.37),
        (10, 0.33),
        (10, 0.3),
        (10, 0.27),
        (10, 0.25),
    ],
    (950, None): [
        (1, 23.2),
        (1, 13.5),
        (1, 8.5),
        (1, 6.1),
        (1, 4.1),
        (1, 3.1),
        (1, 2.2),
        (1, 1.8),
        (1, 1.4),
        (1, 1.1),
        (5, 0.7),
        (5, 0.6),
        (10, 0.5),
        (10, 0.4),
        (10, 0.35),
        (10, 0.3),
        (10, 0.25),
        (10, 0.23),
        (10, 0.22),
        (10, 0.21),
        (10, 0.2),
    ],
}


def expected_bp(rows: list[tuple[int, float]]) -> list[int]:
    out: list[int] = []
    for count, pct in rows:
        out += [round(pct * 100)] * count
    return out


@pytest.mark.parametrize("column", sorted(DOCUMENT, key=lambda c: c[0]))
def test_every_column_of_the_payout_table_pays_exactly_its_percentages(column: tuple[int, int | None]) -> None:
    """rules/000: 'The prize pool payouts for all poker tournaments will adhere to the
    betinternet.com payout schedule' — every entrant count of each column, every place."""
    low, high = column
    want = expected_bp(DOCUMENT[column])
    top = high if high is not None else 5000
    for entrants in range(low, top + 1):
        assert list(place_shares(entrants)) == want, entrants
    # a pool of 1,000,000.00 pays exactly the share (up to the documented scaling of 950+)
    pool = 100_000_000
    amounts = prizes(pool, low)
    if high is not None:
        assert list(amounts) == [pool * bp // BASIS for bp in want]
    assert sum(amounts) == pool


def test_the_table_has_fourteen_columns_and_ranges_pay_the_same_share() -> None:
    """rules/000 table: ranges of places such as 11-15 pay the same share to each place."""
    assert len(PAYOUT_TABLE) == 14
    assert [c.places_paid for c in PAYOUT_TABLE] == [3, 4, 5, 6, 10, 15, 20, 30, 40, 50, 60, 70, 90, 110]
    shares = place_shares(100)
    assert len(set(shares[10:15])) == 1 and shares[10] == 200


def test_the_950_plus_column_sums_to_98_10_percent_and_is_scaled_pro_rata_by_default() -> None:
    """rules/000 950+ column sums to 98.10 %: the unassigned 1.90 % is a setting."""
    assert sum(place_shares(950)) == 9810
    pool = 981_000
    pro_rata = prizes(pool, 1200)
    assert pro_rata[0] == 232_000 and sum(pro_rata) == pool
    to_winner = prizes(1_000_000, 1200, UnassignedShare.TO_WINNER)
    assert to_winner[0] == 232_000 + 19_000
    assert to_winner[1:] == tuple(100 * bp for bp in place_shares(1200)[1:])
    assert sum(to_winner) == 1_000_000


def test_below_three_entrants_the_winner_takes_all() -> None:
    assert payout_column(2) is None
    assert prizes(1000, 2) == (1000,)
    assert places_paid(1) == 1


def test_payouts_sum_exactly_to_the_pool_for_any_pool_and_entrant_count() -> None:
    """Property: integer cents, remainder to the best places; never more for a worse place."""
    rng = random.Random(7)
    for _ in range(3000):
        entrants = rng.randint(1, 3000)
        pool = rng.randint(0, 10**9)
        amounts = prizes(pool, entrants)
        assert sum(amounts) == pool
        assert all(a >= b for a, b in itertools.pairwise(amounts))
        assert len(amounts) == places_paid(entrants)


def test_remainder_cents_go_to_the_best_places_first() -> None:
    assert prizes(1001, 10) == (501, 300, 200)
    assert prizes(102, 3) == (52, 30, 20)
    assert prizes(2, 3) == (2, 0, 0)  # floors 1, 0, 0; the spare cent to 1st


def test_tied_prizes_are_summed_and_split_equally_remainder_in_order() -> None:
    """rules/000: 'both players tie for that rank, and any prizes due to those players will be
    equally distributed between them'."""
    assert split_tied(300 + 200, ["a", "b"]) == {"a": 250, "b": 250}
    assert split_tied(301, ["a", "b"]) == {"a": 151, "b": 150}
    assert split_tied(5, ["a", "b", "c"]) == {"a": 2, "b": 2, "c": 1}


def test_satellite_prizes_are_seats_and_the_remainder_is_cash() -> None:
    """rules/000 'Satellites': 'events where prizes are entries into other larger tournaments'."""
    sat = satellite_prizes(10_550, 2_000)
    assert (sat.seats, sat.cash, sat.total) == (5, 550, 10_550)
    assert sat.remainder is SatelliteRemainder.CASH_TO_NEXT_PLACE
    with pytest.raises(ValueError):
        satellite_prizes(100, 0)


def test_a_guaranteed_prize_pool_is_topped_up_by_the_house() -> None:
    assert guaranteed_pool(7_000, 10_000) == (10_000, 3_000)
    assert guaranteed_pool(12_000, 10_000) == (12_000, 0)
