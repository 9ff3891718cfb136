"""The bots' table stakes (``cardroom bots --stakes``, :func:`cardroom.client.bots.stakes_for`) against the
house rake (rules/003 'RAKE'): the live Prometheus proof (tests/infra/test_live_prometheus.py) needs a cash
table whose pots the rake table rakes, which the smallest stakes (1/2 cents) almost never make."""

from __future__ import annotations

import argparse

import pytest

from cardroom.cli.commands.bots import stakes_arg
from cardroom.client.bots import stakes_for
from cardroom.v1 import common_pb2, dealer_pb2
from dealer.tablespec import build

HEADS_UP_PLAYERS = 2


def _cash_table(variant: str, named: tuple[int, int] | None) -> object:
    config = dealer_pb2.TableConfig(
        name="bots", variant=variant, currency=common_pb2.CURRENCY_CASH, seats=2, stakes=stakes_for(variant, named)
    )
    spec = build(config)
    return spec, spec.new_table(None, "bots")


def test_the_smallest_cash_stakes_rake_only_a_pot_of_both_whole_stacks() -> None:
    # rules/003: "| 0 - 3.50 | € 0.00 |" and "| 3.75 - 9.75 | € 0.25 |": below 375 cents no rake.
    spec, table = _cash_table("NT", None)
    policy = table.rake_policy
    biggest_pot = HEADS_UP_PLAYERS * spec.buy_in.maximum  # both players all in for the maximum buy-in
    assert policy.rake(biggest_pot - 30, HEADS_UP_PLAYERS) == 0
    assert policy.rake(HEADS_UP_PLAYERS * spec.stakes.big_blind, HEADS_UP_PLAYERS) == 0  # a limped flop


@pytest.mark.parametrize("variant", ["NT", "PO/8", "PT"])
def test_one_two_euro_blinds_rake_every_flopped_pot(variant: str) -> None:
    # rules/003: "Only pots where there is a flop in Texas or Omaha ... are raked"; at €1/€2 the
    # smallest flopped pot (both players in for the big blind) is 4.00 >= 3.75.
    spec, table = _cash_table(variant, (100, 200))
    smallest_flopped = HEADS_UP_PLAYERS * spec.stakes.big_blind
    assert smallest_flopped >= 375
    assert table.rake_policy.rake(smallest_flopped, HEADS_UP_PLAYERS) == 25
    assert spec.buy_in.minimum <= 100_000  # what the live test funds each bot with


def test_named_stakes_are_the_blinds_of_big_bet_games_and_the_bets_of_limit_and_stud_games() -> None:
    assert (stakes_for("NT", (100, 200)).small_blind, stakes_for("NT", (100, 200)).big_blind) == (100, 200)
    limit = stakes_for("FT", (100, 200))
    assert (limit.small_bet, limit.big_bet, limit.small_blind) == (100, 200, 0)
    stud = stakes_for("F7S", (100, 200))
    assert (stud.small_bet, stud.big_bet) == (100, 200)
    assert stakes_for("NT") == dealer_pb2.Stakes(small_blind=1, big_blind=2)


@pytest.mark.parametrize("text", ["100", "0/2", "3/2", "a/b", "100/"])
def test_the_stakes_option_refuses_what_is_not_low_slash_high(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        stakes_arg(text)
    assert stakes_arg("100/200") == (100, 200)
