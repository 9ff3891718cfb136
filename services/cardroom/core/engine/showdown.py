"""Showdown order, hand values, rake and pot awards (rules/003 'Showdown', odd chips rules/000).

* Order: the last bettor/raiser of the final betting round shows first; if there was no
  betting on it, the first live player left of the button (Stud/Soko: the highest hand
  showing). The first hand is always shown; a later hand that wins no part of any pot is
  mucked (``Options.muck_losers``, rules/000 'Players who elect to fold do not have to show
  their cards'); mucked cards stay in the events (``HandMucked``) and the hand history.
* Hi/Lo: each pot is halved; the odd chip of the halving goes to the high half (rules/000,
  003). No qualifying low: the high hand takes the pot. Each half is divided among ties.
* Odd chips of a tie: to the winner closest to the left of the button (Stud: nearest the
  dealer's left; Soko: dealt first) — the first winner in dealing order.
* Rake: ``rake(hand, total_pot)`` is called once; the chips are taken from the main pot
  first, then the side pots in order, before they are awarded; ``PotAwarded.rake``
  records each pot's part.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cardroom.core.engine.events import HandMucked, PotAwarded
from cardroom.core.engine.pots import Pot, build_pots, split, take_from_pots
from cardroom.core.engine.spec import Game

if TYPE_CHECKING:
    from cardroom.core.engine.hand import Hand


def _values(hand: Hand, i: int) -> tuple[int, int | None, str]:
    """(high-or-only value, low value or None, description) of position ``i``."""
    from cardroom.core import evaluation as ev
    game = hand.variant.game
    hole = hand.hole[i]
    board = hand.board
    describe = hand.options.describe
    if game is Game.HOLDEM and len(hole) + len(board) == 7 and not describe:
        a, b = hole
        c, d, e, f, g = board
        return ev.high_value7(a.index, b.index, c.index, d.index, e.index, f.index, g.index), None, ""
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


def _winners(members: tuple[int, ...], highs: dict[int, int], lows: dict[int, int | None],
             hi_lo: bool) -> tuple[list[int], list[int]]:
    """(high winners, low winners) among ``members``, in dealing order."""
    best = max(highs[i] for i in members)
    high_winners = [i for i in members if highs[i] == best]
    low_winners: list[int] = []
    if hi_lo:
        qualified = [i for i in members if lows[i] is not None]
        if qualified:
            best_low = max(lows[i] for i in qualified)  # type: ignore[type-var]
            low_winners = [i for i in qualified if lows[i] == best_low]
    return high_winners, low_winners


def showdown_order(hand: Hand) -> list[int]:
    """Positions of the live players in the order they show (see module docstring)."""
    n = hand.n
    live = [i for i in range(n) if not hand.folded[i]]
    first = hand._last_aggressor
    if first is None or hand.folded[first]:
        if hand.spec.is_stud_like:
            from cardroom.core.evaluation import showing_value
            first = max(live, key=lambda j: (showing_value(hand._up_list(j)[-4:]) if hand._up_list(j) else 0, -j))
        else:
            first = live[0]
    return [(first + d) % n for d in range(n) if not hand.folded[(first + d) % n]]


def _take_rake(hand: Hand, pots: list[Pot]) -> list[int]:
    total = sum(p.amount for p in pots)
    rake = 0
    if hand._rake is not None:
        rake = max(0, min(int(hand._rake(hand, total)), total))
    hand.rake_taken = rake
    amounts = [p.amount for p in pots]
    return [before - after for before, after in zip(amounts, take_from_pots(amounts, rake), strict=True)]


def award_uncontested(hand: Hand, winner: int) -> None:
    """Everybody else folded: the winner takes every pot, no cards shown."""
    live = [not f for f in hand.folded]
    pots = build_pots(hand.committed, live, hand.fold_order)
    rakes = _take_rake(hand, pots)
    hand.pots_awarded = pots
    for k, (pot, r) in enumerate(zip(pots, rakes)):
        amount = pot.amount - r
        # a pot left only to a folded player (see build_pots) stays his only if the winner is
        # all-in and could not have covered it; otherwise the last player standing takes all
        owner = pot.members[0] if len(pot.members) == 1 and hand.stacks[winner] == 0 else winner
        seat = hand.seats[owner]
        hand.winnings[owner] += amount
        hand._emit(PotAwarded(k, "all", amount, r, (seat,), ((seat, amount),)))


def showdown(hand: Hand) -> None:
    """Show the live hands and pay every pot."""
    order = showdown_order(hand)
    hand.showdown_order = [hand.seats[i] for i in order]
    highs: dict[int, int] = {}
    lows: dict[int, int | None] = {}
    texts: dict[int, str] = {}
    for i in order:
        highs[i], lows[i], texts[i] = _values(hand, i)
    live = [not f for f in hand.folded]
    pots = build_pots(hand.committed, live, hand.fold_order)
    hi_lo = hand.spec.hi_lo
    winners_any: set[int] = set()
    for pot in pots:
        if pot.members[0] in highs:
            hw, lw = _winners(pot.members, highs, lows, hi_lo)
            winners_any.update(hw)
            winners_any.update(lw)
    muck = hand.options.muck_losers
    for k, i in enumerate(order):
        if k == 0 or i in winners_any or not muck:
            hand._emit_show(i, texts[i])
        else:
            hand._emit(HandMucked(hand.seats[i], tuple(hand.hole[i])))
    if not hand.options.odd_chip_one_each:
        # pokerkit's way: hands that win nothing are killed, then pots whose contenders
        # became equal are merged before the split (so odd chips can differ from ours)
        contenders = [live[i] and i in winners_any for i in range(hand.n)]
        pots = build_pots(hand.committed, contenders, hand.fold_order)
    rakes = _take_rake(hand, pots)
    hand.pots_awarded = pots
    seats = hand.seats
    one_each = hand.options.odd_chip_one_each
    for k, (pot, r) in enumerate(zip(pots, rakes)):
        amount = pot.amount - r
        members = pot.members
        member_seats = tuple(seats[i] for i in members)
        if members[0] not in highs:  # a pot left only to a folded player (see build_pots)
            hand.winnings[members[0]] += amount
            hand._emit(PotAwarded(k, "all", amount, r, member_seats, ((member_seats[0], amount),)))
            continue
        high_winners, low_winners = _winners(members, highs, lows, hi_lo)
        if low_winners:
            low_amount = amount // 2
            shares = (("high", amount - low_amount, high_winners), ("low", low_amount, low_winners))
        else:
            shares = (("all", amount, high_winners),)
        for j, (name, share, winners) in enumerate(shares):
            paid = split(share, winners, one_each)
            for i, chips in paid:
                hand.winnings[i] += chips
            hand._emit(PotAwarded(k, name, share, r if j == 0 else 0, member_seats,
                                  tuple((seats[i], c) for i, c in paid)))
