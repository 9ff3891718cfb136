"""Reference (card-level) evaluation: finds the best five cards and the category of a hand.

This is the readable path that produces ``HandValue.cards``; the integer fast paths in
``tables`` agree with it (tests check both against each other and against reference libraries).
A hand's *code* packs the category and the tie-breaking ranks:
``category << 20 | r1 << 16 | r2 << 12 | r3 << 8 | r4 << 4 | r5`` (ranks 0..12, 2..A), so codes
of one ranking compare like the hands they describe.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardroom.core.cards import Card
from cardroom.core.evaluation.types import Category

ACE = 12
FIVE = 3


def pack(category: Category | int, ranks: Sequence[int]) -> int:
    """Pack a category and up to five tie-breaking ranks into one comparable code."""
    code = int(category)
    for i in range(5):
        code = (code << 4) | (ranks[i] if i < len(ranks) else 0)
    return code


def code_category(code: int) -> Category:
    return Category(code >> 20)


def _desc(cards: Sequence[Card]) -> list[Card]:
    return sorted(cards, key=lambda c: c.index, reverse=True)


def straight_cards(cards: Sequence[Card], wheel: bool = True) -> list[Card] | None:
    """The five cards of the best straight among ``cards`` (high card first), or ``None``.

    With ``wheel`` the ace also plays low (5-4-3-2-A, "Five High"); without it (deuce-to-seven)
    A-2-3-4-5 is not a straight.
    """
    top: dict[int, Card] = {}
    for c in _desc(cards):
        top.setdefault(c.index >> 2, c)
    for high in range(ACE, FIVE - 1, -1):
        need = [high - i for i in range(5)]
        if high == FIVE:
            if not wheel:
                break
            need[4] = ACE
        if all(r in top for r in need):
            return [top[r] for r in need]
    return None


def best_high(cards: Sequence[Card], wheel: bool = True) -> tuple[int, list[Card]]:
    """Code and descriptive-order five cards of the best high hand among 5 or more cards."""
    best: tuple[int, list[Card]] | None = None

    def offer(category: Category, ranks: Sequence[int], used: list[Card]) -> None:
        nonlocal best
        code = pack(category, ranks)
        if best is None or code > best[0]:
            best = (code, used)

    by_suit: dict[int, list[Card]] = {}
    for c in cards:
        by_suit.setdefault(c.index & 3, []).append(c)
    for suited in by_suit.values():
        if len(suited) >= 5:
            sf = straight_cards(suited, wheel)
            if sf is not None:
                offer(Category.STRAIGHT_FLUSH, [sf[0].index >> 2], sf)
            else:
                top = _desc(suited)[:5]
                offer(Category.FLUSH, [c.index >> 2 for c in top], top)

    by_rank: dict[int, list[Card]] = {}
    for c in _desc(cards):
        by_rank.setdefault(c.index >> 2, []).append(c)
    groups = sorted(by_rank.items(), key=lambda kv: (len(kv[1]), kv[0]), reverse=True)
    r0, g0 = groups[0]

    def kickers(exclude: set[int], n: int) -> list[Card]:
        return [c for c in _desc(cards) if c.index >> 2 not in exclude][:n]

    if len(g0) == 4:
        k = kickers({r0}, 1)
        offer(Category.FOUR_OF_A_KIND, [r0, k[0].index >> 2], g0 + k)
    elif len(g0) == 3:
        pairs = [r for r, g in by_rank.items() if r != r0 and len(g) >= 2]
        if pairs:
            p = max(pairs)
            offer(Category.FULL_HOUSE, [r0, p], g0 + by_rank[p][:2])
    if best is not None and code_category(best[0]) >= Category.FULL_HOUSE:
        return best
    st = straight_cards(cards, wheel)
    if st is not None:
        offer(Category.STRAIGHT, [st[0].index >> 2], st)
    if best is not None:
        return best
    if len(g0) == 3:
        k = kickers({r0}, 2)
        offer(Category.THREE_OF_A_KIND, [r0] + [c.index >> 2 for c in k], g0 + k)
    elif len(g0) == 2:
        pairs = sorted((r for r, g in by_rank.items() if len(g) == 2), reverse=True)
        if len(pairs) >= 2:
            hi, lo = pairs[0], pairs[1]
            k = kickers({hi, lo}, 1)
            offer(Category.TWO_PAIR, [hi, lo, k[0].index >> 2], by_rank[hi] + by_rank[lo] + k)
        else:
            k = kickers({r0}, 3)
            offer(Category.PAIR, [r0] + [c.index >> 2 for c in k], g0 + k)
    else:
        top = _desc(cards)[:5]
        offer(Category.HIGH_CARD, [c.index >> 2 for c in top], top)
    assert best is not None
    return best
