"""rules/003 'Big Bet Poker': the rake table is selected by game and stakes (issue 12 item 5)."""

from __future__ import annotations

import pytest

from cardroom.core.engine import Game, Stakes, Structure
from cardroom.core.table import BIG_BET_RAKE_TABLE, STANDARD_RAKE_TABLE, Table, TableRake, TableSettings
from cardroom.core.table.rake import RakeTableChoice, rake_table_for, stakes_name


@pytest.mark.parametrize(
    ("game", "structure", "stakes"),
    [
        (Game.TRIPLE_DRAW_27, Structure.FIXED_LIMIT, Stakes.limit(10000, 20000)),
        (Game.OMAHA_HILO, Structure.FIXED_LIMIT, Stakes.limit(10000, 20000)),
        (Game.OMAHA, Structure.POT_LIMIT, Stakes.blinds(1500, 2500)),
        (Game.FIVE_CARD_DRAW, Structure.POT_LIMIT, Stakes.blinds(2500, 5000)),
    ],
)
def test_big_bet_poker_games_use_the_big_bet_rake_table(game, structure, stakes):
    """rules/003: "another rake table is used for Big Bet Poker. The games included in Big Bet
    Poker is: 2-7 3-Draw €100/€200, Omaha Hi/Lo €100/€200, Omaha PL €15/€25 and 5-Draw PL
    €25/€50"."""
    table = Table(TableSettings(game, structure), stakes)
    assert isinstance(table.rake_policy, TableRake) and table.rake_policy.table is BIG_BET_RAKE_TABLE
    # a 60.00 pot with 6 players dealt in pays the Big Bet table's 2.00, not the standard 2.50
    assert table.rake_policy.rake(6000, 6) == 200


@pytest.mark.parametrize(
    ("game", "structure", "stakes"),
    [
        (Game.HOLDEM, Structure.NO_LIMIT, Stakes.blinds(1500, 2500)),
        (Game.OMAHA, Structure.NO_LIMIT, Stakes.blinds(1500, 2500)),  # Omaha *PL* only
        (Game.OMAHA, Structure.POT_LIMIT, Stakes.blinds(100, 200)),  # other stakes
        (Game.TRIPLE_DRAW_27, Structure.FIXED_LIMIT, Stakes.limit(200, 400)),
    ],
)
def test_other_games_and_stakes_use_the_standard_rake_table(game, structure, stakes):
    table = Table(TableSettings(game, structure), stakes)
    assert table.rake_policy.table is STANDARD_RAKE_TABLE
    assert table.rake_policy.rake(6000, 6) == 250


def test_an_operator_can_choose_the_rake_table():
    standard = TableSettings(Game.OMAHA, Structure.POT_LIMIT, rake_table=RakeTableChoice.STANDARD)
    assert Table(standard, Stakes.blinds(1500, 2500)).rake_policy.table is STANDARD_RAKE_TABLE
    big = TableSettings(Game.HOLDEM, Structure.NO_LIMIT, rake_table=RakeTableChoice.BIG_BET)
    assert Table(big, Stakes.blinds(100, 200)).rake_policy.table is BIG_BET_RAKE_TABLE


def test_stakes_are_named_by_bets_in_limit_games_and_blinds_in_big_bet_games():
    assert stakes_name(Structure.FIXED_LIMIT, Stakes.limit(10000, 20000)) == (10000, 20000)
    assert stakes_name(Structure.POT_LIMIT, Stakes.blinds(1500, 2500)) == (1500, 2500)
    assert rake_table_for(Game.OMAHA_HILO, Structure.POT_LIMIT, 10000, 20000) is BIG_BET_RAKE_TABLE


def test_a_table_with_a_big_blind_ante_posts_it_as_dead_money():
    """Issue 12: big-blind antes are a forced-bet setting of a table (tournament levels too)."""
    from cardroom.core.cards import DECK
    from cardroom.core.engine import ForcedBetPosted, ForcedKind

    table = Table(
        TableSettings(Game.HOLDEM, Structure.NO_LIMIT, play_money=True), Stakes.blinds(1, 2, big_blind_ante=2)
    )
    for seat in (1, 2, 3):
        table.sit_down(seat, f"p{seat}", 100)
    plan = table.start_hand(list(DECK))
    posted = [(e.seat, e.kind) for e in table.hand.events if isinstance(e, ForcedBetPosted)]
    assert (plan.big_blind, ForcedKind.DEAD_ANTE) in posted
    assert table.hand.pot_total == 5 and table.chips_on_table() == 300
