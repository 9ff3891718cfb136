"""Card-level low hands: ace-to-five 8-or-better, and the Soko special ranks (rules/003).

Ace-to-five low (rules/001 "Omaha Hi/Lo", rules/000 "Omaha Hi-Lo"): five distinct ranks, all
8 or lower, the ace plays low, straights and flushes do not count; the hand with the lowest
highest card wins, then the next highest, and so on. A low is packed as an 8-bit *mask* with
bit ``l`` set for low rank ``l`` (ace = 0, deuce = 1, ..., eight = 7). For five-card masks a
smaller mask is exactly a better low, so the comparable value is ``256 - mask`` (1..256, higher
= better; A-2-3-4-5 scores 225, 8-7-6-5-4 scores 8).
"""

from __future__ import annotations

from collections.abc import Sequence

from cardroom.core.cards import Card
from cardroom.core.evaluation.hands import ACE, pack
from cardroom.core.evaluation.types import Category

LOW_CAP = 7  #: low rank of the eight: "8 or better" (rules/003 "Omaha H/L")


def low_rank(card: Card) -> int:
    """Ace-to-five rank: ace 0, deuce 1, ..., king 12."""
    r = card.index >> 2
    return 0 if r == ACE else r + 1


def best_low8(cards: Sequence[Card]) -> tuple[int, list[Card]] | None:
    """Mask and cards (highest first) of the best 8-or-better low among ``cards``, or ``None``."""
    by_low: dict[int, Card] = {}
    for c in sorted(cards, key=lambda c: c.index):
        lr = low_rank(c)
        if lr <= LOW_CAP:
            by_low.setdefault(lr, c)
    if len(by_low) < 5:
        return None
    chosen = sorted(by_low)[:5]
    mask = 0
    for lr in chosen:
        mask |= 1 << lr
    return mask, [by_low[lr] for lr in reversed(chosen)]


def four_straight(cards: Sequence[Card]) -> tuple[int, list[Card]] | None:
    """Soko 4-straight: four consecutive ranks; returns (code, cards with the kicker last).

    The ace plays high (J-Q-K-A) or low (A-2-3-4, "Four High"); the rules do not say, and
    the ace is low in a five-card straight, so it is low here too. Ties: the high card of the
    4-straight, then the kicker ("kickers count", rules/003 Soko showdown).
    """
    top: dict[int, Card] = {}
    for c in sorted(cards, key=lambda c: c.index, reverse=True):
        top.setdefault(c.index >> 2, c)
    for high in range(ACE, 1, -1):
        need = [high - i for i in range(4)]
        if high == 2:
            need[3] = ACE
        if all(r in top for r in need):
            used = [top[r] for r in need]
            rest = sorted((c for c in cards if c not in used), key=lambda c: c.index, reverse=True)
            kick = rest[0]
            return pack(Category.FOUR_STRAIGHT, [high, kick.index >> 2]), used + [kick]
    return None


def four_flush(cards: Sequence[Card]) -> tuple[int, list[Card]] | None:
    """Soko 4-flush: four cards of one suit; ties by the four suited cards high to low, then the kicker."""
    best: tuple[int, list[Card]] | None = None
    for suit in range(4):
        suited = sorted((c for c in cards if c.index & 3 == suit), key=lambda c: c.index, reverse=True)
        if len(suited) == 4:
            rest = sorted((c for c in cards if c.index & 3 != suit), key=lambda c: c.index, reverse=True)
            ranks = [c.index >> 2 for c in suited] + [rest[0].index >> 2]
            code = pack(Category.FOUR_FLUSH, ranks)
            if best is None or code > best[0]:
                best = (code, suited + [rest[0]])
    return best
