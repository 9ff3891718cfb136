"""The vocabulary of hand evaluation: rankings, hand categories and the evaluated hand value."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, IntEnum

from cardroom.core.cards import Card, Rank


class Ranking(Enum):
    """The hand rankings used by the games in the house rules (rules/003)."""

    HIGH = "high"  #: best five cards, standard high ranking
    OMAHA_HIGH = "omaha"  #: exactly 2 of 4 hole cards + exactly 3 board cards
    LOW8 = "low8"  #: ace-to-five low, 8 or better (straights and flushes ignored)
    OMAHA_LOW8 = "omaha8"  #: the 8-or-better low with the Omaha 2 + 3 rule
    DEUCE7 = "deuce7"  #: deuce-to-seven low (aces high, straights and flushes count)
    SOKO = "soko"  #: high ranking with 4-flush > 4-straight between two pair and one pair


class Category(IntEnum):
    """Hand categories in ascending strength (Soko's order, which contains the standard one).

    Standard high ranking never produces ``FOUR_STRAIGHT`` / ``FOUR_FLUSH``; Soko places them
    between two pair and one pair, 4-flush above 4-straight (rules/003, "Hand Ranking in Soko").
    ``LOW`` is the category of every qualifying ace-to-five low; deuce-to-seven hands keep their
    ordinary high category (a pair is a bad 2-7 hand).
    """

    HIGH_CARD = 0
    PAIR = 1
    FOUR_STRAIGHT = 2
    FOUR_FLUSH = 3
    TWO_PAIR = 4
    THREE_OF_A_KIND = 5
    STRAIGHT = 6
    FLUSH = 7
    FULL_HOUSE = 8
    FOUR_OF_A_KIND = 9
    STRAIGHT_FLUSH = 10
    LOW = 11

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Category.HIGH_CARD: "High Card",
    Category.PAIR: "Pair",
    Category.FOUR_STRAIGHT: "Four Straight",
    Category.FOUR_FLUSH: "Four Flush",
    Category.TWO_PAIR: "Two Pair",
    Category.THREE_OF_A_KIND: "Three of a Kind",
    Category.STRAIGHT: "Straight",
    Category.FLUSH: "Flush",
    Category.FULL_HOUSE: "Full House",
    Category.FOUR_OF_A_KIND: "Four of a Kind",
    Category.STRAIGHT_FLUSH: "Straight Flush",
    Category.LOW: "Low",
}

_LOW_CHARS = "23456789TJQKA"


def _low_char(card: Card, ace_low: bool) -> str:
    if ace_low and card.rank is Rank.ACE:
        return "A"
    return _LOW_CHARS[card.rank]


@dataclass(frozen=True, slots=True)
class HandValue:
    """One evaluated hand.

    ``value`` is comparable only within the same ``ranking``; higher is better in every
    ranking, the lows included. ``cards`` are the five cards used, in descriptive order
    (the made part first, then kickers high to low; lows from the highest card down).
    """

    ranking: Ranking
    value: int
    category: Category
    cards: tuple[Card, ...]

    def describe(self) -> str:
        """Readable text for showdowns and hand histories, e.g. ``"Two Pair, Kings and Sevens"``."""
        c = self.cards
        cat = self.category
        if cat is Category.LOW:
            return "-".join(_low_char(x, True) for x in c) + " low"
        if self.ranking is Ranking.DEUCE7 and cat is Category.HIGH_CARD:
            return "-".join(_low_char(x, False) for x in c) + " low"
        r = [x.rank for x in c]
        if cat is Category.HIGH_CARD:
            return f"High Card, {r[0].word}"
        if cat is Category.PAIR:
            return f"Pair of {r[0].plural}"
        if cat is Category.TWO_PAIR:
            return f"Two Pair, {r[0].plural} and {r[2].plural}"
        if cat is Category.THREE_OF_A_KIND:
            return f"Three of a Kind, {r[0].plural}"
        if cat is Category.STRAIGHT:
            return f"Straight, {r[0].word} High"
        if cat is Category.FLUSH:
            return f"Flush, {r[0].word} High"
        if cat is Category.FULL_HOUSE:
            return f"Full House, {r[0].plural} full of {r[3].plural}"
        if cat is Category.FOUR_OF_A_KIND:
            return f"Four of a Kind, {r[0].plural}"
        if cat is Category.STRAIGHT_FLUSH:
            return "Royal Flush" if r[0] is Rank.ACE else f"Straight Flush, {r[0].word} High"
        if cat is Category.FOUR_FLUSH:
            return f"Four Flush, {r[0].word} High"
        return f"Four Straight, {r[0].word} High"

    def __str__(self) -> str:
        return self.describe()
