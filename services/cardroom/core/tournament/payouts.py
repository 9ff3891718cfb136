"""The payout structure of rules/000 ('Tournament Payout Structure') and prize amounts in cents.

The table pays a share of the prize pool per place, by the number of entrants (14 columns,
3-19 players ... 950+ players; a row such as ``11-15`` pays that share to each of those
places). Shares are kept exactly, in basis points (1 bp = 0.01 %, so 17.50 % is 1750).

Integer cents (the house rule is silent; documented in docs/ARCHITECTURE.md):

* each place gets ``floor(pool * share / 10000)``;
* the cents left over (fewer than the number of paid places) go one cent at a time to the
  places in order, 1st place first, so a better place never gets less than a worse one and
  the payouts always sum to the pool exactly.

The 950+ column of the document sums to 98.10 %, not 100 % (every other column sums to
100 %). What happens to the unassigned 1.90 % is a setting (:class:`UnassignedShare`): by
default the column is scaled pro rata (each place gets ``share / 9810`` of the pool), or
the unassigned part goes to the winner.

Below 3 entrants the table has no column: a setting, default winner takes all
(:data:`BELOW_TABLE_SHARES`).

Ties (rules/000: 'any prizes due to those players will be equally distributed between
them'): :func:`split_tied` sums the prizes of the tied places and splits them equally; the
remainder cents go one each to the tied players in the order given (the tournament gives
them in registration order).

Satellites (rules/000 'Satellites'): prizes are seats of a value in the target event;
:func:`satellite_prizes` gives ``pool // seat_value`` seats and the remainder as cash to
the next place (a setting: :class:`SatelliteRemainder`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, unique

BASIS = 10_000
"""100 % in basis points."""


@dataclass(frozen=True, slots=True)
class PlaceShare:
    """Places ``first``..``last`` each get ``basis_points`` of the pool."""

    first: int
    last: int
    basis_points: int


@dataclass(frozen=True, slots=True)
class PayoutColumn:
    """One column of the table: entrants ``low``..``high`` (None: and more)."""

    low: int
    high: int | None
    shares: tuple[PlaceShare, ...]

    def covers(self, entrants: int) -> bool:
        return entrants >= self.low and (self.high is None or entrants <= self.high)

    @property
    def places_paid(self) -> int:
        return self.shares[-1].last

    def per_place(self) -> tuple[int, ...]:
        """Basis points of each paid place, 1st first."""
        out: list[int] = []
        for share in self.shares:
            out += [share.basis_points] * (share.last - share.first + 1)
        return tuple(out)


def _column(low: int, high: int | None, *percents: str) -> PayoutColumn:
    """Build a column from the table's rows: 1..10 then 11-15, 16-20, 21-30, ... 101-110."""
    ranges = [(p, p) for p in range(1, 11)] + [(11, 15), (16, 20)] + [(a, a + 9) for a in range(21, 111, 10)]
    shares = []
    for (first, last), text in zip(ranges, percents, strict=False):
        whole, _, frac = text.partition(".")
        shares.append(PlaceShare(first, last, int(whole or "0") * 100 + int((frac + "00")[:2])))
    return PayoutColumn(low, high, tuple(shares))


PAYOUT_TABLE: tuple[PayoutColumn, ...] = (
    _column(3, 19, "50", "30", "20"),
    _column(20, 34, "45", "25", "17.5", "12.5"),
    _column(35, 39, "40", "24", "16", "12", "8"),
    _column(40, 49, "40", "22", "15", "10", "7", "6"),
    _column(50, 79, "30", "20", "13", "9.4", "6.6", "5.8", "4.8", "4", "3.4", "3"),
    _column(80, 119, "27", "18", "12", "8.7", "6", "5.2", "4.4", "3.5", "2.8", "2.4", "2"),
    _column(120, 169, "26", "17", "11", "8", "5.8", "4.8", "4.2", "3.4", "2.6", "2.2", "1.6", "1.4"),
    _column(170, 249, "25", "16", "10", "6.8", "4.8", "4.2", "3.4", "2.8", "2.2", "1.8", "1.4", "1.2", "1"),
    _column(250, 349, "25", "16", "10", "6.6", "4.6", "3.8", "3", "2.4", "2", "1.6", "1.2", "1", ".8", ".6"),
    _column(350, 449, "25", "16", "10", "6.4", "4.4", "3.4", "2.6", "2.1", "1.7", "1.4", "1", ".8", ".7", ".6", ".5"),
    _column(
        450, 549, "25", "15", "9", "6.4", "4.4", "3.3", "2.5", "2", "1.6", "1.3", "1", ".8", ".7", ".5", ".45", ".4"
    ),
    _column(
        550,
        699,
        "25",
        "15",
        "9",
        "6.2",
        "4.2",
        "3.2",
        "2.3",
        "1.9",
        "1.5",
        "1.2",
        "1",
        ".8",
        ".6",
        ".5",
        ".4",
        ".35",
        ".3",
    ),
    _column(
        700,
        949,
        "24",
        "14",
        "8.8",
        "6.2",
        "4.2",
        "3.2",
        "2.3",
        "1.9",
        "1.5",
        "1.2",
        ".8",
        ".7",
        ".55",
        ".45",
        ".37",
        ".33",
        ".3",
        ".27",
        ".25",
    ),
    _column(
        950,
        None,
        "23.2",
        "13.5",
        "8.5",
        "6.1",
        "4.1",
        "3.1",
        "2.2",
        "1.8",
        "1.4",
        "1.1",
        ".7",
        ".6",
        ".5",
        ".4",
        ".35",
        ".3",
        ".25",
        ".23",
        ".22",
        ".21",
        ".2",
    ),
)

BELOW_TABLE_SHARES: tuple[int, ...] = (BASIS,)
"""Basis points per place below 3 entrants (the table starts at 3): winner takes all."""


def payout_column(entrants: int) -> PayoutColumn | None:
    """The table's column for ``entrants`` (None below 3)."""
    return next((c for c in PAYOUT_TABLE if c.covers(entrants)), None)


def place_shares(entrants: int) -> tuple[int, ...]:
    """Basis points of each paid place for ``entrants`` (1st first)."""
    if entrants < 1:
        raise ValueError("a tournament has at least one entrant")
    column = payout_column(entrants)
    return column.per_place() if column is not None else BELOW_TABLE_SHARES


def places_paid(entrants: int) -> int:
    return len(place_shares(entrants))


@unique
class UnassignedShare(Enum):
    """Where the part of the pool a column does not assign goes (the 950+ column: 1.90 %)."""

    PRO_RATA = "pro_rata"
    """Default: every paid place's share is scaled up so the column sums to 100 %."""
    TO_WINNER = "to_winner"
    """The unassigned part is added to 1st place."""


def distribute(
    pool: int, shares: Sequence[int], unassigned: UnassignedShare = UnassignedShare.PRO_RATA
) -> tuple[int, ...]:
    """Integer amounts for ``shares`` (basis points) of ``pool`` cents: floors, then the
    remainder one cent at a time from the first share on (module docstring)."""
    if pool < 0:
        raise ValueError("a prize pool is never negative")
    if not shares or any(s <= 0 for s in shares):
        raise ValueError("at least one place is paid, each a positive share")
    total = sum(shares)
    if total > BASIS:
        raise ValueError("shares exceed 100 %")
    if unassigned is UnassignedShare.PRO_RATA:
        amounts = [pool * s // total for s in shares]
    else:
        amounts = [pool * s // BASIS for s in shares]
        amounts[0] += pool * (BASIS - total) // BASIS
    left = pool - sum(amounts)
    i = 0
    while left > 0:
        amounts[i % len(amounts)] += 1
        left -= 1
        i += 1
    return tuple(amounts)


def prizes(pool: int, entrants: int, unassigned: UnassignedShare = UnassignedShare.PRO_RATA) -> tuple[int, ...]:
    """Prize of each paid place in cents (1st first); sums to ``pool`` exactly."""
    return distribute(pool, place_shares(entrants), unassigned)


def split_tied(total: int, players: Sequence[str]) -> dict[str, int]:
    """``total`` split equally among ``players``; remainder cents one each in the order given."""
    if not players:
        raise ValueError("a tie has at least one player")
    base, left = divmod(total, len(players))
    return {p: base + (1 if i < left else 0) for i, p in enumerate(players)}


@unique
class SatelliteRemainder(Enum):
    """Where the part of a satellite pool short of a whole seat goes."""

    CASH_TO_NEXT_PLACE = "cash_to_next_place"
    """Default: paid in cash to the place after the last seat winner."""
    CASH_SPLIT_AMONG_WINNERS = "cash_split_among_winners"
    """Split equally among the seat winners (remainder cents in place order)."""


@dataclass(frozen=True, slots=True)
class SatellitePrizes:
    """``seats`` seats of ``seat_value`` each; ``cash`` left over (see :class:`SatelliteRemainder`)."""

    seats: int
    seat_value: int
    cash: int
    remainder: SatelliteRemainder

    @property
    def total(self) -> int:
        return self.seats * self.seat_value + self.cash


def satellite_prizes(
    pool: int, seat_value: int, remainder: SatelliteRemainder = SatelliteRemainder.CASH_TO_NEXT_PLACE
) -> SatellitePrizes:
    """Seats in the target event bought by ``pool`` and the cash left over."""
    if seat_value <= 0:
        raise ValueError("a satellite seat has a positive value")
    seats, cash = divmod(pool, seat_value)
    return SatellitePrizes(seats, seat_value, cash, remainder)


def guaranteed_pool(collected: int, guarantee: int) -> tuple[int, int]:
    """(prize pool, overlay paid by the house) for a guaranteed prize pool."""
    overlay = max(0, guarantee - collected)
    return collected + overlay, overlay


__all__ = [
    "BASIS",
    "BELOW_TABLE_SHARES",
    "PAYOUT_TABLE",
    "PayoutColumn",
    "PlaceShare",
    "SatellitePrizes",
    "SatelliteRemainder",
    "UnassignedShare",
    "distribute",
    "guaranteed_pool",
    "payout_column",
    "place_shares",
    "places_paid",
    "prizes",
    "satellite_prizes",
    "split_tied",
]
