"""Balancing and breaking tables (rules/000 'Multi-table', 'Tournament Rules'; TDA practice)."""

import random

from cardroom.core.table.seating import Seating
from cardroom.core.tournament.seating import (
    balance_move,
    draw_tables,
    flop_game_move,
    next_big_blind,
    stud_move,
    table_sizes,
    table_to_break,
    worst_seat,
)


def seating(seats: list[int], last_bb: int | None = None, count: int = 10) -> Seating:
    s = Seating(count, 10, 20)
    for seat in seats:
        s.sit_down(seat, f"p{seat}", 1000)
    s.last_big_blind = last_bb
    return s


def test_the_start_uses_the_fewest_tables_within_one_player() -> None:
    assert table_sizes(25, 10) == [9, 8, 8]
    assert table_sizes(10, 10) == [10]
    tables = draw_tables([f"p{i}" for i in range(25)], 10, random.Random(1))
    assert sorted(len(t) for t in tables) == [8, 8, 9]
    assert all([s for s, _ in t] == list(range(1, len(t) + 1)) for t in tables)  # seat 1 taken: the button


def test_tables_are_kept_within_one_player() -> None:
    """rules/000: 'players will be moved randomly from one table to another in order to keep the
    number of players at each table as balanced as possible.'"""
    assert balance_move({1: 9, 2: 7}, idle={1, 2}) == (1, 2)
    assert balance_move({1: 9, 2: 8}, idle={1, 2}) is None
    assert balance_move({1: 9, 2: 7}, idle={2}) is None  # the long table is in a hand: later


def test_a_table_breaks_as_soon_as_its_players_fit_elsewhere() -> None:
    """rules/000 'Freeze-out': 'As players become eliminated the tables are combined with other
    tables until there is a final table'."""
    assert table_to_break({1: 7, 2: 7, 3: 7}, 10, {1, 2, 3}, 10) is None  # 21 > 20
    assert table_to_break({1: 7, 2: 7, 3: 6}, 10, {1, 2, 3}, 10) == 3  # 20 fit in two tables
    assert table_to_break({1: 5, 2: 5}, 10, {1, 2}, 10) == 2  # the final table


def test_the_player_due_for_the_big_blind_moves_to_the_worst_position() -> None:
    """Issue 11 (TDA): 'moving the player who would be big blind next to the worst position at the
    short table (never the small blind) in flop games'."""
    long_table = seating([1, 2, 3, 4, 5, 6, 7, 8, 9], last_bb=4)
    short = seating([1, 2, 3, 6, 7, 8, 9], last_bb=7)
    assert next_big_blind(long_table) == 5
    src, dst = flop_game_move(long_table, short, [4, 5, 10], random.Random(1))
    # the short table's big blind was at 7: next to get it is seat 8, ... the empty seat nearest
    # after 7 clockwise is 10 (then 4, 5): 10 gets the big blind soonest
    assert (src, dst) == (5, 10)
    assert worst_seat(short, [4, 5], random.Random(1)) == 4


def test_stud_players_are_moved_by_position() -> None:
    """Issue 11: 'by position in Stud'."""
    long_table = seating([1, 2, 3, 4, 5, 6, 7, 8], count=8)
    assert stud_move(long_table, [3, 6]) == (3, 3)
    gap = seating([1, 2, 4, 5, 6, 7, 8], count=8)
    assert stud_move(gap, [3]) == (4, 3)  # nobody on seat 3 there: the next player clockwise
