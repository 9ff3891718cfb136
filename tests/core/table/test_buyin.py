"""Buy-in limits (rules/002 'Buy-Ins', rules/003 'Buy-in'). Amounts in cents."""

import pytest

from cardroom.core.engine.spec import Structure
from cardroom.core.table.buyin import BuyInRule, buy_in_limits


@pytest.mark.parametrize(
    "low,high,minimum", [(1000, 2000, 20000), (500, 1000, 10000), (300, 600, 6000), (50, 100, 1000)]
)
@pytest.mark.parametrize("structure", [Structure.NO_LIMIT, Structure.POT_LIMIT])
def test_minimum_buy_in_for_no_limit_and_pot_limit_is_20_times_the_small_blind(
    structure: Structure, low: int, high: int, minimum: int
) -> None:
    """rules/002: '$200 to enter the $10/$20 game, $100 ... $5/$10, $60 ... $3/$6, $10.00 ... $0.50/$1.00'."""
    assert buy_in_limits(structure, low, high).minimum == minimum


@pytest.mark.parametrize("low,high,minimum", [(1000, 2000, 10000), (500, 1000, 5000), (300, 600, 3000), (50, 100, 500)])
def test_minimum_buy_in_for_fixed_limit_is_10_times_the_small_bet(low: int, high: int, minimum: int) -> None:
    """rules/002: '$100 to enter the $10/$20 game, $50 ... $5/$10, $30 ... $3/$6, $5.00 ... $0.50/$1.00'."""
    limits = buy_in_limits(Structure.FIXED_LIMIT, low, high)
    assert limits.minimum == minimum
    assert limits.maximum is None  # 'Full bankroll'


@pytest.mark.parametrize(
    "low,high,minimum", [(25, 50, 300), (100, 200, 1000), (200, 400, 2000), (300, 600, 3000), (500, 1000, 5000)]
)
def test_rules_003_sample_of_minimum_buy_ins_as_alternative(low: int, high: int, minimum: int) -> None:
    """rules/003 'Sample of minimum buy-ins': EUR 0.25/0.50 -> 3, 1/2 -> 10, ... 5/10 -> 50."""
    limits = buy_in_limits(Structure.FIXED_LIMIT, low, high, rule=BuyInRule.RULES_003_TABLE)
    assert limits.minimum == minimum
    assert limits.maximum is None


def test_on_the_pl_and_nl_tables_there_is_also_a_maximum_buy_in() -> None:
    """rules/003 'Buy-in': PL and NL tables have a maximum (default 100 big blinds)."""
    limits = buy_in_limits(Structure.NO_LIMIT, 100, 200)
    assert limits.maximum == 20000
    limits.check(2000)
    limits.check(20000)
    with pytest.raises(ValueError, match="below"):
        limits.check(1999)
    with pytest.raises(ValueError, match="above"):
        limits.check(20001)


def test_you_can_increase_your_table_stake_up_to_the_maximum() -> None:
    """rules/002 'You can increase your table stake at any time in between hands' (below the maximum)."""
    limits = buy_in_limits(Structure.POT_LIMIT, 100, 200)
    limits.check_top_up(1500, 18500)
    with pytest.raises(ValueError):
        limits.check_top_up(1500, 18501)
    with pytest.raises(ValueError):
        limits.check_top_up(1500, 0)
    buy_in_limits(Structure.FIXED_LIMIT, 100, 200).check_top_up(10**9, 10**9)
