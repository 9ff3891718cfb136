"""Showdown: hand values, winners of each pot, hi/lo halves and odd chips (pure, no I/O).

Odd chips: a split pot's odd chip goes to the high half; within a half the remainder is given
one chip at a time to the winners in seat order starting at the first seat left of the button.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cardroom.core.cards import Card
from cardroom.core.evaluation import HandValue, evaluate
from evaluator.cardtext import check_counts, check_distinct
from evaluator.errors import BadRequest
from evaluator.games import GameRules

#: The largest amount a showdown result carries (int64 in the protocol).
INT64_MAX = 2**63 - 1
#: Pots one request may hold: a main pot and a side pot per all-in, with room to spare.
MAX_POTS = 64


@dataclass(frozen=True)
class PlayerCards:
    seat: int
    hole: list[Card]


@dataclass(frozen=True)
class PotSpec:
    amount: int
    eligible: list[int]


@dataclass
class PlayerResult:
    seat: int
    high: HandValue
    low: HandValue | None


@dataclass
class PotOutcome:
    index: int
    amount: int
    high_winners: list[int]
    low_winners: list[int]
    awards: list[tuple[int, int, str]] = field(default_factory=list)  # (seat, amount, half)
    odd_chip_seat: int = -1


def seat_order(seats: Sequence[int], button: int) -> list[int]:
    """Seats sorted clockwise starting left of the button (the button itself last)."""
    return sorted(seats, key=lambda s: (s - button - 1) % 1_000_000)


def divide(amount: int, winners: Sequence[int], button: int) -> tuple[list[tuple[int, int]], int]:
    """Split ``amount`` among ``winners``; returns ((seat, chips) in seat order, first odd-chip seat or -1)."""
    ordered = seat_order(winners, button)
    base, rest = divmod(amount, len(ordered))
    shares = [(seat, base + (1 if i < rest else 0)) for i, seat in enumerate(ordered)]
    return shares, (ordered[0] if rest else -1)


def evaluate_players(rules: GameRules, players: Sequence[PlayerCards], board: Sequence[Card]) -> list[PlayerResult]:
    if not players:
        raise BadRequest("players", "at least one player is required")
    seats = [p.seat for p in players]
    if len(set(seats)) != len(seats):
        raise BadRequest("players", "a seat appears twice")
    check_counts(board, rules.board, "board")
    for i, player in enumerate(players):
        check_counts(player.hole, rules.hole, f"players[{i}].hole")
    check_distinct([("board", board), *((f"players[{i}].hole", p.hole) for i, p in enumerate(players))])
    results = []
    for player in players:
        high = evaluate(rules.high, player.hole, board)
        assert high is not None
        low = evaluate(rules.low, player.hole, board) if rules.low is not None else None
        results.append(PlayerResult(player.seat, high, low))
    return results


def settle(results: Sequence[PlayerResult], pots: Sequence[PotSpec], button: int) -> list[PotOutcome]:
    """Award every pot to the best eligible hands (and the best qualifying lows). The pots' total
    must fit the response's int64 amounts (a seat's total is up to the sum of every pot)."""
    if len(pots) > MAX_POTS:
        raise BadRequest("pots", f"{len(pots)} pots, at most {MAX_POTS}")
    if sum(pot.amount for pot in pots) > INT64_MAX:
        raise BadRequest("pots", f"the pots add up to more than {INT64_MAX}, the largest amount a result can carry")
    by_seat = {r.seat: r for r in results}
    outcomes = []
    for index, pot in enumerate(pots):
        where = f"pots[{index}]"
        if pot.amount < 0:
            raise BadRequest(f"{where}.amount", f"must not be negative, got {pot.amount}")
        if not pot.eligible:
            raise BadRequest(f"{where}.eligible_seats", "at least one seat is required")
        if len(set(pot.eligible)) != len(pot.eligible):
            raise BadRequest(f"{where}.eligible_seats", "a seat appears twice")
        for seat in pot.eligible:
            if seat not in by_seat:
                raise BadRequest(f"{where}.eligible_seats", f"seat {seat} has no hand in players")
        contenders = [by_seat[s] for s in pot.eligible]
        best_high = max(r.high.value for r in contenders)
        high_winners = seat_order([r.seat for r in contenders if r.high.value == best_high], button)
        lows = [r for r in contenders if r.low is not None]
        low_winners: list[int] = []
        if lows:
            best_low = max(r.low.value for r in lows if r.low is not None)
            low_winners = seat_order([r.seat for r in lows if r.low is not None and r.low.value == best_low], button)
        outcome = PotOutcome(index, pot.amount, high_winners, low_winners)
        if low_winners:
            low_half = pot.amount // 2
            high_half = pot.amount - low_half  # the odd chip of the split goes high
            halves = [("high", high_half, high_winners), ("low", low_half, low_winners)]
        else:
            halves = [("whole", pot.amount, high_winners)]
        for half, amount, winners in halves:
            shares, odd = divide(amount, winners, button)
            outcome.awards.extend((seat, chips, half) for seat, chips in shares)
            if outcome.odd_chip_seat < 0 and odd >= 0:
                outcome.odd_chip_seat = odd
        if outcome.odd_chip_seat < 0 and low_winners and pot.amount % 2:
            outcome.odd_chip_seat = high_winners[0]
        outcomes.append(outcome)
    return outcomes
