"""Per-hand evaluation: one call per hand, returning a ``HandValue`` (rules/003 rankings)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from cardroom.core.cards import Card, check_distinct
from cardroom.core.evaluation import fast
from cardroom.core.evaluation.hands import best_high, code_category
from cardroom.core.evaluation.lows import LOW_CAP, best_low8, four_flush, four_straight, low_rank
from cardroom.core.evaluation.tables import N_HIGH, deuce7_codes, high_codes
from cardroom.core.evaluation.types import Category, HandValue, Ranking

_DENSE = {int(c): i + 1 for i, c in enumerate(high_codes())}
_DEUCE7 = {int(c): N_HIGH - i for i, c in enumerate(deuce7_codes()[0])}


def _cards(cards: Sequence[Card], sizes: Sequence[int], what: str = "cards") -> list[Card]:
    out = list(cards)
    for c in out:
        if not isinstance(c, Card):
            raise ValueError(f"not a card: {c!r}")
    if len(out) not in sizes:
        raise ValueError(f"wrong card count: {len(out)} {what}, expected {' or '.join(map(str, sizes))}")
    return out


def _split(hole: Sequence[Card], board: Sequence[Card]) -> tuple[list[Card], list[Card]]:
    h = _cards(hole, (4,), "hole cards")
    b = _cards(board, (3, 4, 5), "board cards")
    check_distinct(h + b)
    return h, b


def _high(ranking: Ranking, five_or_more: list[Card]) -> HandValue:
    code, used = best_high(five_or_more)
    return HandValue(ranking, _DENSE[code], code_category(code), tuple(used))


def evaluate_high(cards: Sequence[Card]) -> HandValue:
    """Best five of 5..7 cards, standard high ranking (value 1..7462, royal flush highest)."""
    cs = _cards(cards, (5, 6, 7))
    check_distinct(cs)
    return _high(Ranking.HIGH, cs)


def evaluate_omaha_high(hole: Sequence[Card], board: Sequence[Card]) -> HandValue:
    """Omaha high: exactly two of the four hole cards and exactly three board cards (rules/003 Omaha)."""
    h, b = _split(hole, board)
    best, best_cards = -1, None
    for hp in combinations(h, 2):
        for bt in combinations(b, 3):
            v = fast.high5_value(*(c.index for c in hp + bt))
            if v > best:
                best, best_cards = v, list(hp + bt)
    assert best_cards is not None
    return _high(Ranking.OMAHA_HIGH, best_cards)


def _low(ranking: Ranking, found: tuple[int, list[Card]] | None) -> HandValue | None:
    if found is None:
        return None
    mask, used = found
    return HandValue(ranking, 256 - mask, Category.LOW, tuple(used))


def evaluate_low8(cards: Sequence[Card]) -> HandValue | None:
    """Ace-to-five low, 8 or better, best five of 5..7 cards; ``None`` when no low qualifies.

    Value = 256 - (bit mask of the five low ranks, ace = bit 0): 225 for A-2-3-4-5, 8 for 8-7-6-5-4.
    """
    cs = _cards(cards, (5, 6, 7))
    check_distinct(cs)
    return _low(Ranking.LOW8, best_low8(cs))


def evaluate_omaha_low8(hole: Sequence[Card], board: Sequence[Card]) -> HandValue | None:
    """Omaha 8-or-better low with the 2 + 3 rule, chosen independently of the high hand."""
    h, b = _split(hole, board)
    best: tuple[int, list[Card]] | None = None
    for hp in combinations(h, 2):
        if any(low_rank(c) > LOW_CAP for c in hp):
            continue
        for bt in combinations(b, 3):
            found = best_low8(list(hp + bt))
            if found is not None and (best is None or found[0] < best[0]):
                best = found
    return _low(Ranking.OMAHA_LOW8, best)


def evaluate_deuce7(cards: Sequence[Card]) -> HandValue:
    """Deuce-to-seven low on exactly five cards (rules/003 "2-7 Triple Draw"): aces high only,
    straights and flushes count against the hand, A-2-3-4-5 is ace-high; 7-5-4-3-2 (not one
    suit) is best with value 7462, the royal flush worst with value 1."""
    cs = _cards(cards, (5,))
    check_distinct(cs)
    code, used = best_high(cs, wheel=False)
    return HandValue(Ranking.DEUCE7, _DEUCE7[code], code_category(code), tuple(used))


def evaluate_soko(cards: Sequence[Card]) -> HandValue:
    """Soko ranking on exactly five cards (rules/003 "Hand Ranking in Soko").

    Standard high hands, with 4-flush and 4-straight between two pair and one pair (4-flush
    above 4-straight), kickers counted. The value is the hand's code (see ``hands.pack``).
    """
    cs = _cards(cards, (5,))
    check_distinct(cs)
    code, used = best_high(cs)
    if code >> 20 < Category.TWO_PAIR:
        for found in (four_flush(cs), four_straight(cs)):
            if found is not None and found[0] > code:
                code, used = found
    return HandValue(Ranking.SOKO, code, code_category(code), tuple(used))


def evaluate(ranking: Ranking, hole: Sequence[Card], board: Sequence[Card] = ()) -> HandValue | None:
    """Evaluate ``hole`` (+ ``board``) under ``ranking``; ``None`` for a low that does not qualify."""
    if ranking is Ranking.OMAHA_HIGH:
        return evaluate_omaha_high(hole, board)
    if ranking is Ranking.OMAHA_LOW8:
        return evaluate_omaha_low8(hole, board)
    cards = list(hole) + list(board)
    if ranking is Ranking.HIGH:
        return evaluate_high(cards)
    if ranking is Ranking.LOW8:
        return evaluate_low8(cards)
    if ranking is Ranking.DEUCE7:
        return evaluate_deuce7(cards)
    if ranking is Ranking.SOKO:
        return evaluate_soko(cards)
    raise ValueError(f"unknown ranking {ranking!r}")
