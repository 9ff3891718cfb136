"""Table sizes per game (rules/001, rules/003)."""

import pytest

from cardroom.core.engine.spec import Game, Structure
from cardroom.core.table.settings import RuleSource, TableSettings, max_players


@pytest.mark.parametrize(
    "game,seats",
    [
        (Game.HOLDEM, 10),
        (Game.OMAHA, 9),
        (Game.OMAHA_HILO, 9),
        (Game.STUD, 8),
        (Game.STUD_HILO, 8),
        (Game.SOKO, 8),
        (Game.FIVE_CARD_DRAW, 6),
        (Game.TRIPLE_DRAW_27, 6),
    ],
)
def test_up_to_n_players_are_allowed_to_play_in_the_same_game(game: Game, seats: int) -> None:
    """rules/003 'Players': Hold'em 10, Omaha 9, Stud 8, Soko 8, 5-Card Draw 6, 2-7 6."""
    assert max_players(game) == seats
    assert TableSettings(game, Structure.FIXED_LIMIT).seat_count == seats


def test_rules_001_omaha_up_to_ten_and_five_card_draw_up_to_five() -> None:
    """rules/001 'Up to ten players' (Omaha) and 'Up to five players' (5-Card Draw) as a setting."""
    assert max_players(Game.OMAHA, RuleSource.RULES_001) == 10
    assert max_players(Game.OMAHA_HILO, RuleSource.RULES_001) == 10
    assert max_players(Game.FIVE_CARD_DRAW, RuleSource.RULES_001) == 5
    settings = TableSettings(Game.FIVE_CARD_DRAW, Structure.NO_LIMIT, rule_source=RuleSource.RULES_001)
    assert settings.seat_count == 5


def test_a_table_cannot_have_more_seats_than_the_game_allows() -> None:
    """rules/003 'Up to 8 players' (Stud): a 9-seat Stud table is refused."""
    with pytest.raises(ValueError):
        TableSettings(Game.STUD, Structure.FIXED_LIMIT, seat_count=9)
    assert TableSettings(Game.HOLDEM, Structure.NO_LIMIT, seat_count=2).seat_count == 2
