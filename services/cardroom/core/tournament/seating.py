"""Seating, balancing and breaking tables (rules/000 'Multi-table', 'Tournament Rules'; TDA
practice where the house rule is silent).

* **Start** (:func:`draw_tables`): as few tables as hold everybody, sizes within one player;
  'All players are seated randomly' — the draw (an input ``random.Random``) puts players on
  seats 1..k of their table, so the button starts at seat 1 (Hold'em / Omaha).
* **Breaking** (:func:`table_to_break`): a table is broken as soon as its players fit in the
  empty seats of the other tables, and when the final table is due (10 players in Hold'em /
  Omaha, 8 in Stud — a setting); its players are reseated at random in the free seats of the
  shortest tables (:func:`reseat_order`).
* **Balancing** (:func:`balance_move`): tables are kept within one player of each other; a
  player is moved from the longest table (between hands) to the shortest. In flop games the
  player who would be big blind next moves, to the *worst position* of the short table —
  the empty seat that gets the big blind soonest (never the small blind, which is the seat
  that had the big blind); in Stud by position — the player whose seat number is the short
  table's free seat (or the next player clockwise from it) takes that seat number.
* Players moved are dealt in except between the small blind and the button
  (``Table.seat_tournament_player``).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from cardroom.core.table.seating import Seating


def table_sizes(players: int, seat_count: int) -> list[int]:
    """Players per table at the start: fewest tables, sizes within one of each other."""
    if players <= 0:
        return []
    tables = -(-players // seat_count)
    base, extra = divmod(players, tables)
    return [base + (1 if i < extra else 0) for i in range(tables)]


def draw_tables(
    players: Sequence[str], seat_count: int, rng: random.Random, table_size: int | None = None
) -> list[list[tuple[int, str]]]:
    """The random draw: per table, (seat, player) on seats 1..k."""
    order = list(players)
    rng.shuffle(order)
    sizes = table_sizes(len(order), table_size or seat_count)
    tables: list[list[tuple[int, str]]] = []
    at = 0
    for size in sizes:
        tables.append([(seat, order[at + seat - 1]) for seat in range(1, size + 1)])
        at += size
    return tables


def table_to_break(counts: Mapping[int, int], seat_count: int, idle: set[int], final_table_size: int) -> int | None:
    """The table to break now (between hands: in ``idle``), or None.

    Due when the players of the shortest table fit in the other tables' empty seats, or
    when no more than ``final_table_size`` players remain on several tables. The shortest
    idle table goes (ties: the highest number)."""
    if len(counts) < 2:
        return None
    total = sum(counts.values())
    if total > (len(counts) - 1) * seat_count and total > final_table_size:
        return None
    candidates = [t for t in counts if t in idle]
    if not candidates:
        return None
    return min(candidates, key=lambda t: (counts[t], -t))


def balance_move(counts: Mapping[int, int], idle: set[int]) -> tuple[int, int] | None:
    """(from, to) tables for one balancing move, or None when within one (or the long
    tables are all in a hand). From the longest idle table to the shortest table."""
    if len(counts) < 2:
        return None
    low = min(counts.values())
    sources = [t for t in counts if t in idle and counts[t] - low > 1]
    if not sources:
        return None
    source = max(sources, key=lambda t: (counts[t], -t))
    dest = min((t for t in counts if t != source), key=lambda t: (counts[t], t))
    return source, dest


def _after(seat: int, seat_count: int) -> list[int]:
    return [(seat - 1 + k) % seat_count + 1 for k in range(1, seat_count + 1)]


def next_big_blind(seating: Seating) -> int | None:
    """The seat that would post the big blind next hand (None before the first hand)."""
    if seating.last_big_blind is None:
        return None
    return next((s for s in _after(seating.last_big_blind, seating.seat_count) if s in seating.seats), None)


def worst_seat(seating: Seating, free: Sequence[int], rng: random.Random) -> int:
    """The free seat that gets the big blind soonest (flop games); at random before the
    table's first hand."""
    if seating.last_big_blind is None:
        return rng.choice(list(free))
    last = seating.last_big_blind
    return min(free, key=lambda s: (s - last) % seating.seat_count or seating.seat_count)


def flop_game_move(source: Seating, dest: Seating, dest_free: Sequence[int], rng: random.Random) -> tuple[int, int]:
    """(seat at the long table, seat at the short table) in a flop game."""
    seat = next_big_blind(source)
    if seat is None:
        seat = rng.choice(sorted(source.seats))
    return seat, worst_seat(dest, dest_free, rng)


def stud_move(source: Seating, dest_free: Sequence[int]) -> tuple[int, int]:
    """(seat at the long table, seat at the short table) in Stud: by position."""
    target = min(dest_free)
    seat = next(s for s in [target, *_after(target, source.seat_count)] if s in source.seats)
    return seat, target


def reseat_order(free: Mapping[int, Sequence[int]], counts: Mapping[int, int], rng: random.Random) -> tuple[int, int]:
    """A random free seat (table, seat) at one of the shortest tables with room."""
    room = [t for t in free if free[t]]
    low = min(counts[t] for t in room)
    options = [(t, s) for t in room if counts[t] == low for s in free[t]]
    return rng.choice(options)


__all__ = [
    "balance_move",
    "draw_tables",
    "flop_game_move",
    "next_big_blind",
    "reseat_order",
    "stud_move",
    "table_sizes",
    "table_to_break",
    "worst_seat",
]
