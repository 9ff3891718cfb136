"""Rake tables and no flop no drop (rules/003 'RAKE'). Amounts in cents."""

import pytest

from cardroom.core.engine import ActionKind, Hand, Stakes, Structure, Variant
from cardroom.core.engine.pots import take_from_pots
from cardroom.core.engine.spec import Game
from cardroom.core.table.rake import BIG_BET_RAKE_TABLE, NoRake, PercentageRake, TableRake, hand_rake
from tests.core.engine.helpers import make

STANDARD = TableRake()
HEADS_UP = TableRake(heads_up_table=True)
BIG_BET = TableRake(BIG_BET_RAKE_TABLE)


@pytest.mark.parametrize(
    "pot,two_three,four_five,six_ten,heads_up",
    [
        (0, 0, 0, 0, 0),
        (350, 0, 0, 0, 0),
        (375, 25, 25, 25, 25),
        (975, 25, 25, 25, 25),
        (1000, 25, 25, 50, 25),
        (1475, 25, 25, 50, 25),
        (1500, 25, 50, 75, 25),
        (2000, 25, 75, 100, 25),
        (2975, 25, 75, 100, 25),
        (3000, 50, 100, 150, 50),
        (4000, 75, 150, 200, 50),
        (6000, 75, 200, 250, 50),
        (99975, 75, 200, 250, 50),
        (100000, 75, 200, 250, 75),
        (10**7, 75, 200, 250, 75),
    ],
)
def test_rake_table_by_pot_and_players_dealt_in(
    pot: int, two_three: int, four_five: int, six_ten: int, heads_up: int
) -> None:
    """rules/003 'Rake table': every bracket of every column, heads-up tables included."""
    assert STANDARD.rake(pot, 2) == two_three
    assert STANDARD.rake(pot, 3) == two_three
    assert STANDARD.rake(pot, 4) == four_five
    assert STANDARD.rake(pot, 5) == four_five
    assert STANDARD.rake(pot, 6) == six_ten
    assert STANDARD.rake(pot, 10) == six_ten
    assert HEADS_UP.rake(pot, 2) == heads_up


def test_a_pot_between_two_brackets_belongs_to_the_lower_one() -> None:
    """rules/003 brackets move in 0.25 steps; 3.60 is below 3.75 so it is not raked."""
    assert STANDARD.rake(360, 6) == 0
    assert STANDARD.rake(999, 6) == 25


@pytest.mark.parametrize(
    "pot,two,three,four_five,six_ten",
    [
        (4975, 0, 0, 0, 0),
        (5000, 50, 75, 100, 200),
        (10000, 50, 75, 200, 250),
        (50000, 50, 125, 250, 300),
        (100000, 75, 150, 350, 500),
        (199975, 75, 150, 350, 500),
        (200000, 150, 250, 400, 600),
        (300000, 200, 300, 500, 800),
    ],
)
def test_another_rake_table_is_used_for_big_bet_poker(
    pot: int, two: int, three: int, four_five: int, six_ten: int
) -> None:
    """rules/003 'Rake table - Big Bet Poker'."""
    assert [BIG_BET.rake(pot, n) for n in (2, 3, 4, 5, 6, 10)] == [two, three, four_five, four_five, six_ten, six_ten]


def test_rake_never_exceeds_the_cap_of_the_column() -> None:
    """rules/003: the table's largest amount per column is the cap (2.50 for 6-10 players)."""
    assert STANDARD.cap(10) == 250
    assert HEADS_UP.cap(2) == 75
    assert BIG_BET.cap(6) == 800
    for pot in range(0, 200000, 25):
        assert STANDARD.rake(pot, 7) <= STANDARD.cap(7)


@pytest.mark.parametrize(
    "game,streets,raked",
    [
        (Game.HOLDEM, ["preflop"], False),
        (Game.HOLDEM, ["preflop", "flop"], True),
        (Game.OMAHA, ["preflop", "flop"], True),
        (Game.OMAHA_HILO, ["preflop"], False),
        (Game.SOKO, ["second"], False),
        (Game.SOKO, ["second", "third"], True),
        (Game.STUD, ["third"], False),
        (Game.STUD, ["third", "fourth"], True),
        (Game.STUD_HILO, ["third", "fourth"], True),
        (Game.FIVE_CARD_DRAW, ["predraw"], False),
        (Game.FIVE_CARD_DRAW, ["predraw", "draw"], True),
        (Game.TRIPLE_DRAW_27, ["predraw"], False),
        (Game.TRIPLE_DRAW_27, ["predraw", "first_draw"], True),
    ],
)
def test_only_pots_where_there_is_a_flop_or_third_or_fourth_card_or_a_draw_are_raked(
    game: Game, streets: list[str], raked: bool
) -> None:
    """rules/003: 'a flop in Texas or Omaha or a third card ... in Soko or a fourth card ... in
    7-stud or a draw is made in 5-Draw'."""
    hand = _played_through(game, streets)
    assert hand.rake_eligible() is raked
    assert (hand_rake(STANDARD, 5000, 6, hand.rake_eligible()) > 0) is raked


def _played_through(game: Game, streets: list[str]) -> Hand:
    """A two-player fixed-limit hand of ``game`` played passively (bring-in, check, call, draw
    one card) until the last of ``streets`` has started and, in a draw round, a draw is made —
    the hand the table's rake function sees (``Table`` rakes by ``Hand.rake_eligible()``)."""
    variant = Variant(game, Structure.FIXED_LIMIT)
    stud = variant.spec.is_stud_like
    stakes = Stakes.for_stud(10, ante=1, bring_in=2) if stud else Stakes.limit(2)
    hand = make(variant.code, stakes, {1: 100, 2: 100}, button=None if stud else 2)

    def started() -> list[str]:
        return [street.name for street in hand.spec.streets[: hand.street_index + 1]]

    while started() != streets or (hand.spec.streets[hand.street_index].draw and not hand.draws_made):
        assert not hand.is_over and len(started()) <= len(streets), started()
        legal = hand.legal_actions()
        kinds = set() if legal is None else set(legal.kinds)
        if ActionKind.BRING_IN in kinds:
            hand.act(ActionKind.BRING_IN)
        elif ActionKind.CHECK in kinds:
            hand.check()
        elif ActionKind.CALL in kinds:
            hand.call()
        else:
            hand.draw(hand.hole_cards(hand.actor_seat)[:1])
    return hand


def test_all_our_funmoney_games_are_absolutely_free_of_charge() -> None:
    """rules/003 'RAKE': play money is never raked."""
    assert NoRake().rake(10**6, 10) == 0
    assert NoRake().cap(10) == 0


def test_percentage_rake_with_cap_rounds_down_to_quarter_steps() -> None:
    """Generic alternative: 5% of the pot in 0.25 steps, capped at 3.00."""
    rake = PercentageRake(basis_points=500, maximum=300)
    assert rake.rake(1000, 6) == 50
    assert rake.rake(990, 6) == 25  # 49.5 cents -> 0.25
    assert rake.rake(100000, 6) == 300
    assert rake.cap(6) == 300


def test_rake_is_taken_from_the_main_pot_first() -> None:
    """Stated rule (rules/003 is silent): main pot first, then side pots in order."""
    assert take_from_pots([300, 1000], 250) == [50, 1000]
    assert take_from_pots([100, 1000], 250) == [0, 850]
    with pytest.raises(ValueError):
        take_from_pots([100], 250)
