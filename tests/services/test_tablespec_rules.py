"""The dealer's TableConfig reaches the rules core's settings (issue 12 items 4, 5, 7). Pure."""

from __future__ import annotations

import pytest

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind
from cardroom.core.table import BIG_BET_RAKE_TABLE, STANDARD_RAKE_TABLE
from cardroom.v1 import common_pb2, dealer_pb2 as d
from dealer.errors import DealerError
from dealer.tablespec import build


def _config(variant: str, **stakes: object) -> d.TableConfig:
    return d.TableConfig(name="t", variant=variant, currency=common_pb2.CURRENCY_CASH, stakes=d.Stakes(**stakes))


def test_spread_limit_maxima_are_set_from_the_table_config():
    """rules/003 'Spread Limit': "In the limit that is called € 1-2-3 the maximum bet on the
    first two betting rounds is € 1, on fourth street € 2 and on fifth street €3"."""
    spec = build(_config("ST", small_blind=50, big_blind=100, small_bet=100, spread_maxima=[100, 100, 200, 300]))
    assert spec.stakes.spread_maxima == (100, 100, 200, 300)
    assert list(spec.config.stakes.spread_maxima) == [100, 100, 200, 300]


@pytest.mark.parametrize("variant", ["S7S", "SSK"])
def test_spread_limit_stud_and_soko_default_stakes_allow_bets_after_the_bring_in(variant):
    spec = build(_config(variant, small_bet=200, ante=20, bring_in=50))
    assert spec.stakes.spread_maxima and min(spec.stakes.spread_maxima) >= 200
    table = spec.new_table(None, "t")
    for seat in (1, 2, 3):
        table.sit_down(seat, f"p{seat}", 5000)
    table.start_hand(list(DECK))
    hand = table.hand
    hand.act(ActionKind.BRING_IN)
    assert ActionKind.COMPLETE in hand.legal_actions().kinds


def test_bad_spread_maxima_are_refused():
    with pytest.raises(DealerError, match="config.stakes.spread_maxima") as err:
        build(_config("NT", small_blind=1, big_blind=2, spread_maxima=[2]))
    assert err.value.args


def test_rake_table_is_chosen_by_game_and_stakes_or_by_the_operator():
    """rules/003 'Big Bet Poker': Omaha PL €15/€25 uses the Big Bet Poker rake table."""
    auto = build(_config("PO", small_blind=1500, big_blind=2500)).new_table(None, "t")
    assert auto.rake_policy.table is BIG_BET_RAKE_TABLE
    chosen = _config("PO", small_blind=1500, big_blind=2500)
    chosen.rake.kind = d.RakeSettings.KIND_STANDARD_TABLE
    assert build(chosen).new_table(None, "t").rake_policy.table is STANDARD_RAKE_TABLE


def test_cash_limit_small_blind_rounds_down_to_the_dollar_unless_exactly_half():
    """rules/002 'Button and Blinds': "The small blind is half the lower limit bet, rounded down
    to the nearest dollar"; rules/002 [1]: "exactly half the limit" (a setting)."""
    assert build(_config("FT", small_bet=300)).stakes.small_blind == 100
    assert build(_config("FT", small_bet=300, small_blind_exactly_half=True)).stakes.small_blind == 150


def test_chip_denomination_and_forced_antes_reach_the_engine():
    spec = build(_config("NT", small_blind=25, big_blind=50, chip=25, big_blind_ante=50))
    assert spec.stakes.chip == 25 and spec.stakes.big_blind_ante == 50
