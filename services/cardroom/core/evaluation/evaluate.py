"""Per-hand evaluation: one call per hand, returning a ``HandValue`` (rules/003 rankings)."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from cardroom.core.cards import DECK, Card, check_distinct
from cardroom.core.evaluation import fast
from cardroom.core.evaluation.hands import best_high, code_category
from cardroom.core.evaluation.lows import LOW_CAP, best_low8, four_flush, four_straight, low_rank
from cardroom.core.evaluation.tables import N_HIGH, deuce7_codes, high_codes
from cardroom.core.evaluation.types import Category, HandValue, Ranking

_DEUCE7 = {int(c): N_HIGH - i for i, c in enumerate(deuce7_codes()[0])}
_STRAIGHTS = (Category.STRAIGHT, Category.STRAIGHT_FLUSH)
_FLUSHES = (Category.FLUSH, Category.STRAIGHT_FLUSH)


def _shape(code: int) -> tuple[Category, tuple[int, ...]]:
    """Category and the five ranks, in descriptive order, of a high code."""
    cat = Category(code >> 20)
    r = [(code >> s) & 15 for s in (16, 12, 8, 4, 0)]
    if cat in _STRAIGHTS:
        ranks = [3, 2, 1, 0, 12] if r[0] == 3 else [r[0] - i for i in range(5)]
    elif cat is Category.FOUR_OF_A_KIND:
        ranks = [r[0]] * 4 + [r[1]]
    elif cat is Category.FULL_HOUSE:
        ranks = [r[0]] * 3 + [r[1]] * 2
    elif cat is Category.THREE_OF_A_KIND:
        ranks = [r[0]] * 3 + r[1:3]
    elif cat is Category.TWO_PAIR:
        ranks = [r[0], r[0], r[1], r[1], r[2]]
    elif cat is Category.PAIR:
        ranks = [r[0], r[0]] + r[1:4]
    else:
        ranks = r
    return cat, tuple(ranks)


_SHAPES = [(Category.HIGH_CARD, ())] + [_shape(int(c)) for c in high_codes()]


def _high_from_value(ranking: Ranking, value: int, idx: Sequence[int]) -> HandValue:
    """Build the ``HandValue`` of a known dense high value: pick the cards that make it
    (for equal ranks the higher suit first, the order ``best_high`` uses)."""
    cat, ranks = _SHAPES[value]
    used: list[Card] = []
    if cat in _FLUSHES:
        suits = [i & 3 for i in idx]
        suit = max(range(4), key=suits.count)
        for r in ranks:
            used.append(DECK[4 * r + suit])
    else:
        present = 0
        for i in idx:
            present |= 1 << i
        for r in ranks:
            for i in (4 * r + 3, 4 * r + 2, 4 * r + 1, 4 * r):
                if present >> i & 1:
                    present ^= 1 << i
                    used.append(DECK[i])
                    break
    return HandValue(ranking, value, cat, tuple(used))


def _indices(cards: Sequence[Card], sizes: Sequence[int], what: str = "cards") -> list[int]:
    """Card indices of ``cards``; ``ValueError`` for a non-card, a duplicate or a wrong count."""
    idx: list[int] = []
    seen = 0
    for c in cards:
        if not isinstance(c, Card):
            raise ValueError(f"not a card: {c!r}")
        i = c.index
        if seen >> i & 1:
            raise ValueError(f"duplicate card {c}")
        seen |= 1 << i
        idx.append(i)
    if len(idx) not in sizes:
        raise ValueError(f"wrong card count: {len(idx)} {what}, expected {' or '.join(map(str, sizes))}")
    return idx


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


def evaluate_high(cards: Sequence[Card]) -> HandValue:
    """Best five of 5..7 cards, standard high ranking (value 1..7462, royal flush highest)."""
    idx = _indices(cards, (5, 6, 7))
    return _high_from_value(Ranking.HIGH, fast.high_value_unchecked(idx), idx)


def evaluate_omaha_high(hole: Sequence[Card], board: Sequence[Card]) -> HandValue:
    """Omaha high: exactly two of the four hole cards and exactly three board cards (rules/003 Omaha)."""
    h, b = _split(hole, board)
    best, used = fast.omaha_high_best([c.index for c in h], [c.index for c in b])
    return _high_from_value(Ranking.OMAHA_HIGH, best, used)


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
