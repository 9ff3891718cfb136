"""Stud board rankings: who acts first, and who brings in (rules/003 "7-card Stud", "Soko")."""

from __future__ import annotations

from collections.abc import Sequence

from cardroom.core.cards import Card, check_distinct
from cardroom.core.evaluation.hands import pack
from cardroom.core.evaluation.types import Category


def showing_value(up_cards: Sequence[Card]) -> int:
    """Strength of the highest showing hand on 1-4 up-cards; the highest acts first.

    "The player showing the highest hand on the board is first to act" (rules/003 7-card Stud).
    Only pairs, two pair, trips and quads count on the board (straights and flushes need five
    cards); then kickers high to low. Suits never break a tie here: equal values are resolved
    by seat order, which is the hand engine's job.
    """
    cs = list(up_cards)
    if not 1 <= len(cs) <= 4:
        raise ValueError(f"wrong card count: {len(cs)} up-cards, expected 1 to 4")
    for c in cs:
        if not isinstance(c, Card):
            raise ValueError(f"not a card: {c!r}")
    check_distinct(cs)
    counts: dict[int, int] = {}
    for c in cs:
        counts[c.index >> 2] = counts.get(c.index >> 2, 0) + 1
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = [k for _, k in groups]
    if shape[0] == 4:
        cat = Category.FOUR_OF_A_KIND
    elif shape[0] == 3:
        cat = Category.THREE_OF_A_KIND
    elif shape[:2] == [2, 2]:
        cat = Category.TWO_PAIR
    elif shape[0] == 2:
        cat = Category.PAIR
    else:
        cat = Category.HIGH_CARD
    return pack(cat, [r for r, _ in groups])


def bring_in_key(card: Card, highest: bool = False) -> int:
    """Bring-in order of one up-card: the seat whose up-card has the largest key brings in.

    Lowest card brings in (fixed-limit Stud, Stud Hi/Lo), or the highest card (pot-limit Stud,
    Soko) with ``highest=True``; ties in rank are broken by suit, spades > hearts > diamonds >
    clubs (rules/003 "Bring-in"; rules/000 agrees). So 2c brings in before 2s for the lowest
    card, and As before Ah for the highest.
    """
    if not isinstance(card, Card):
        raise ValueError(f"not a card: {card!r}")
    return card.index if highest else 51 - card.index
