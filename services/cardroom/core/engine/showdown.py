"""Showdown order, hand values, rake and pot awards (rules/003 'Showdown', odd chips rules/000).

A pure settlement: :func:`settle` takes a :class:`Contest` (what is on the table when the
betting is over) and returns a :class:`Settlement` (the pots, what each position wins, the
rake, the showdown order and the events to emit). It reads and writes no hand state; the
:class:`~cardroom.core.engine.hand.Hand` applies the settlement.

* Order: the last bettor/raiser of the final betting round shows first; if there was no
  betting on it, the first live player left of the button (Stud: the highest hand
  showing; Soko: the first live player left of the dealer box, rules/003 Soko "If there was
  no betting the first remaining player to the left of the dealer shows his hand first").
  The first hand is always shown; a later hand that wins no part of any pot is mucked
  (``Options.muck_losers``, rules/000 'Players who elect to fold do not have to show their
  cards'); mucked cards stay in the events (``HandMucked``) and the hand history.
* Hi/Lo: each pot is halved in whole chips; the odd chip of the halving goes to the high
  half (rules/000, 003). No qualifying low: the high hand takes the pot. Each half is
  divided among ties.
* Odd chips of a tie: to the winner closest to the left of the button (Stud: nearest the
  dealer's left; Soko: dealt first) — the first winner in dealing order; ``Contest.chip``
  is the table's smallest chip (rules/003: the odd chip is a 25-cent chip).
* Dead money (dead blinds, big-blind and button antes) is in the main pot (:mod:`.pots`).
* Rake: ``Contest.rake`` chips, looked up by the hand on the total pot, are taken from the
  main pot first, then the side pots in order, before they are awarded;
  ``PotAwarded.rake`` records each pot's part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cardroom.core import evaluation as ev
from cardroom.core.cards import Card
from cardroom.core.engine.events import Event, HandMucked, HandShown, PotAwarded
from cardroom.core.engine.options import Options
from cardroom.core.engine.pots import Pot, build_pots, halve, split, take_from_pots
from cardroom.core.engine.spec import Game


@dataclass(frozen=True, slots=True)
class Contest:
    """Everything the settlement needs, by position (dealing order)."""

    game: Game
    hi_lo: bool
    stud_like: bool
    seats: tuple[int, ...]
    hole: tuple[tuple[Card, ...], ...]
    up: tuple[tuple[bool, ...], ...]
    board: tuple[Card, ...]
    folded: tuple[bool, ...]
    committed: tuple[int, ...]
    dead: tuple[int, ...]
    fold_order: tuple[int, ...]
    stacks: tuple[int, ...]
    last_aggressor: int | None
    rake: int
    options: Options
    chip: int = 1
    mucking: frozenset[int] = frozenset()
    """Positions that muck at the showdown (rules/000: "anyone else can fold"): they contest
    no pot, unless every remaining hand of that pot mucks."""


@dataclass(frozen=True, slots=True)
class Settlement:
    """What a settlement awards: ``winnings`` per position (rake already taken), the pots
    (members are positions), the rake, the showdown order (positions; empty when the pot
    was uncontested) and the events (``HandShown``/``HandMucked``/``PotAwarded``)."""

    pots: tuple[Pot, ...]
    winnings: tuple[int, ...]
    rake: int
    order: tuple[int, ...]
    events: tuple[Event, ...]


def _values(c: Contest, i: int) -> tuple[int, int | None, str]:
    """(high-or-only value, low value or None, description) of position ``i``."""
    game = c.game
    hole = c.hole[i]
    board = c.board
    describe = c.options.describe
    if game is Game.HOLDEM and len(hole) + len(board) == 7 and not describe:
        a, b = hole
        d1, d2, d3, d4, d5 = board
        return ev.high_value7(a.index, b.index, d1.index, d2.index, d3.index, d4.index, d5.index), None, ""
    low = None
    if game is Game.HOLDEM or game is Game.STUD or game is Game.FIVE_CARD_DRAW:
        hv = ev.evaluate_high(list(hole) + list(board))
    elif game is Game.OMAHA:
        hv = ev.evaluate_omaha_high(hole, board)
    elif game is Game.OMAHA_HILO:
        hv = ev.evaluate_omaha_high(hole, board)
        low = ev.evaluate_omaha_low8(hole, board)
    elif game is Game.STUD_HILO:
        hv = ev.evaluate_high(list(hole) + list(board))
        low = ev.evaluate_low8(list(hole) + list(board))
    elif game is Game.TRIPLE_DRAW_27:
        hv = ev.evaluate_deuce7(hole)
    elif game is Game.SOKO:
        hv = ev.evaluate_soko(hole)
    else:  # pragma: no cover
        raise AssertionError(game)
    text = ""
    if describe:
        text = hv.describe() + ("" if low is None else "; low " + low.describe())
    return hv.value, (None if low is None else low.value), text


def _winners(
    members: tuple[int, ...], highs: dict[int, int], lows: dict[int, int | None], hi_lo: bool
) -> tuple[list[int], list[int]]:
    """(high winners, low winners) among ``members``, in dealing order."""
    best = max(highs[i] for i in members)
    high_winners = [i for i in members if highs[i] == best]
    low_winners: list[int] = []
    if hi_lo:
        qualified = [(i, v) for i in members if (v := lows[i]) is not None]
        if qualified:
            best_low = max(v for _, v in qualified)
            low_winners = [i for i, v in qualified if v == best_low]
    return high_winners, low_winners


def _up_cards(c: Contest, i: int) -> list[Card]:
    return [card for card, u in zip(c.hole[i], c.up[i], strict=True) if u]


def showdown_order(c: Contest) -> list[int]:
    """Positions of the live players in the order they show (see module docstring)."""
    n = len(c.seats)
    live = [i for i in range(n) if not c.folded[i]]
    first = c.last_aggressor
    if first is None or c.folded[first]:
        if c.stud_like and c.game is not Game.SOKO:

            def showing(j: int) -> tuple[int, int]:
                ups = _up_cards(c, j)
                return (ev.showing_value(ups[-4:]) if ups else 0), -j

            first = max(live, key=showing)
        else:  # left of the button; Soko: left of the dealer box (positions start there)
            first = live[0]
    return [(first + d) % n for d in range(n) if not c.folded[(first + d) % n]]


def _rake_parts(pots: Sequence[Pot], rake: int) -> tuple[int, list[int]]:
    total = sum(p.amount for p in pots)
    rake = max(0, min(rake, total))
    amounts = [p.amount for p in pots]
    return rake, [before - after for before, after in zip(amounts, take_from_pots(amounts, rake), strict=True)]


def settle(c: Contest) -> Settlement:
    """Settle the hand: uncontested when one player is left, else show down."""
    live = [not f for f in c.folded]
    if sum(live) == 1:
        return _uncontested(c, live.index(True))
    return _showdown(c)


def _uncontested(c: Contest, winner: int) -> Settlement:
    """Everybody else folded: the winner takes every pot, no cards shown."""
    live = [not f for f in c.folded]
    pots = build_pots(c.committed, live, c.fold_order, c.dead)
    rake, rakes = _rake_parts(pots, c.rake)
    winnings = [0] * len(c.seats)
    events: list[Event] = []
    for k, (pot, r) in enumerate(zip(pots, rakes, strict=True)):
        amount = pot.amount - r
        # a pot left only to a folded player (see build_pots) stays his only if the winner is
        # all-in and could not have covered it; otherwise the last player standing takes all
        owner = pot.members[0] if len(pot.members) == 1 and c.stacks[winner] == 0 else winner
        seat = c.seats[owner]
        winnings[owner] += amount
        events.append(PotAwarded(k, "all", amount, r, (seat,), ((seat, amount),)))
    return Settlement(tuple(pots), tuple(winnings), rake, (), tuple(events))


def _showdown(c: Contest) -> Settlement:
    """Show the live hands and pay every pot."""
    order = showdown_order(c)
    highs: dict[int, int] = {}
    lows: dict[int, int | None] = {}
    texts: dict[int, str] = {}
    for i in order:
        highs[i], lows[i], texts[i] = _values(c, i)
    live = [not f for f in c.folded]
    pots = build_pots(c.committed, live, c.fold_order, c.dead)
    hi_lo = c.hi_lo
    mucking = c.mucking

    def contending(members: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(i for i in members if i not in mucking) or members

    winners_any: set[int] = set()
    for pot in pots:
        if pot.members[0] in highs:
            hw, lw = _winners(contending(pot.members), highs, lows, hi_lo)
            winners_any.update(hw)
            winners_any.update(lw)
    events: list[Event] = []
    seats = c.seats
    muck = c.options.muck_losers
    for k, i in enumerate(order):
        if i in mucking and i not in winners_any:
            events.append(HandMucked(seats[i], tuple(c.hole[i])))
        elif k == 0 or i in winners_any or not muck:
            events.append(HandShown(seats[i], tuple(c.hole[i]), texts[i]))
        else:
            events.append(HandMucked(seats[i], tuple(c.hole[i])))
    one_each = c.options.odd_chip_one_each
    if not one_each:
        # pokerkit's way: hands that win nothing are killed, then pots whose contenders
        # became equal are merged before the split (so odd chips can differ from ours)
        contenders = [live[i] and i in winners_any for i in range(len(seats))]
        pots = build_pots(c.committed, contenders, c.fold_order, c.dead)
    rake, rakes = _rake_parts(pots, c.rake)
    winnings = [0] * len(seats)
    chip = c.chip
    for k, (pot, r) in enumerate(zip(pots, rakes, strict=True)):
        amount = pot.amount - r
        members = pot.members
        member_seats = tuple(seats[i] for i in members)
        if members[0] not in highs:  # a pot left only to a folded player (see build_pots)
            winnings[members[0]] += amount
            events.append(PotAwarded(k, "all", amount, r, member_seats, ((member_seats[0], amount),)))
            continue
        high_winners, low_winners = _winners(contending(members), highs, lows, hi_lo)
        shares: list[tuple[str, int, list[int]]]
        if low_winners:
            high_amount, low_amount = halve(amount, chip)
            shares = [("high", high_amount, high_winners), ("low", low_amount, low_winners)]
        else:
            shares = [("all", amount, high_winners)]
        for j, (name, share, winners) in enumerate(shares):
            paid = split(share, winners, one_each, chip)
            for i, chips in paid:
                winnings[i] += chips
            events.append(
                PotAwarded(k, name, share, r if j == 0 else 0, member_seats, tuple((seats[i], x) for i, x in paid))
            )
    return Settlement(tuple(pots), tuple(winnings), rake, tuple(order), tuple(events))
