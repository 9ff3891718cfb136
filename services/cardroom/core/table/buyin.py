"""Table stakes and buy-in limits (rules/002 'Buy-Ins', rules/003 'Buy-in').

Stakes are named by their lower number: the small bet of a limit game ("$10/$20" fixed
limit) or the small blind of a big-bet game ("$10/$20" no limit). Amounts are integers.

Default (``BuyInRule.MULTIPLES``, rules/002): minimum buy-in = 20 x the lower number for
No Limit, Pot Limit and Half-Pot Limit, 10 x for Fixed and Spread Limit. Alternative
(``BuyInRule.RULES_003_TABLE``): the rules/003 sample table for fixed limit
(EUR 0.25/0.50 -> 3, 1/2 -> 10, 2/4 -> 20, 3/6 -> 30, 5/10 -> 50), falling back to the
multiples for stakes not in the table. Maximum: none ("full bankroll") for limit games;
PL/NL tables have a maximum, which the rules leave unnamed: default 100 big blinds
(200 x the small blind), a setting. Play-money tables use the same limits in play chips.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique

from cardroom.core.engine.spec import Structure


@unique
class BuyInRule(Enum):
    """Which document sets the minimum buy-in."""

    MULTIPLES = "rules/002"
    RULES_003_TABLE = "rules/003"


RULES_003_FIXED_LIMIT_MINIMUMS: dict[tuple[int, int], int] = {
    (25, 50): 300,
    (100, 200): 1000,
    (200, 400): 2000,
    (300, 600): 3000,
    (500, 1000): 5000,
}
"""rules/003 sample minimum buy-ins, Hold'em/Omaha fixed limit, in cents."""


def _big_bet(structure: Structure) -> bool:
    return structure in (Structure.NO_LIMIT, Structure.POT_LIMIT, Structure.HALF_POT_LIMIT)


@dataclass(frozen=True, slots=True)
class BuyInLimits:
    """Minimum and maximum chips a player may bring to (or have at) the table.

    ``maximum`` None means no maximum ("full bankroll").
    """

    minimum: int
    maximum: int | None

    def check(self, amount: int) -> None:
        """Raise ``ValueError`` if ``amount`` is not an allowed buy-in."""
        if amount < self.minimum:
            raise ValueError(f"buy-in {amount} is below the table minimum {self.minimum}")
        if self.maximum is not None and amount > self.maximum:
            raise ValueError(f"buy-in {amount} is above the table maximum {self.maximum}")

    def check_top_up(self, stack: int, amount: int) -> None:
        """Raise ``ValueError`` unless a player with ``stack`` may add ``amount`` now.

        Chips are added between hands only (the table checks that); the stack after adding
        may not exceed the maximum. The minimum applies to the first buy-in only.
        """
        if amount <= 0:
            raise ValueError("the amount added must be positive")
        if self.maximum is not None and stack + amount > self.maximum:
            raise ValueError(f"stack {stack + amount} after adding is above the table maximum {self.maximum}")


def buy_in_limits(
    structure: Structure,
    low: int,
    high: int,
    *,
    rule: BuyInRule = BuyInRule.MULTIPLES,
    big_bet_min_multiple: int = 20,
    limit_min_multiple: int = 10,
    big_bet_max_multiple: int = 200,
) -> BuyInLimits:
    """Buy-in limits of a ``low``/``high`` table (e.g. 1000/2000 cents for $10/$20).

    >>> buy_in_limits(Structure.NO_LIMIT, 1000, 2000).minimum   # rules/002: $200
    20000
    >>> buy_in_limits(Structure.FIXED_LIMIT, 1000, 2000).minimum  # rules/002: $100
    10000
    """
    if low <= 0 or high < low:
        raise ValueError(f"bad stakes {low}/{high}")
    if _big_bet(structure):
        return BuyInLimits(big_bet_min_multiple * low, big_bet_max_multiple * low)
    minimum = limit_min_multiple * low
    if rule is BuyInRule.RULES_003_TABLE:
        minimum = RULES_003_FIXED_LIMIT_MINIMUMS.get((low, high), minimum)
    return BuyInLimits(minimum, None)
