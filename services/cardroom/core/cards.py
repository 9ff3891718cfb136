"""Cards, ranks and suits, and the two encodings every module shares.

* Text: rank character then suit character, e.g. ``"Ah"``, ``"Td"``, ``"2c"``.
* Index (NumPy arrays, the wire): ``index = 4 * rank + suit`` with rank 0..12 = 2..A and
  suit 0..3 = clubs, diamonds, hearts, spades; so ``0 == 2c`` and ``51 == As``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum


class Rank(IntEnum):
    """Card ranks, deuce lowest; aces count high unless a low ranking says otherwise."""

    TWO = 0
    THREE = 1
    FOUR = 2
    FIVE = 3
    SIX = 4
    SEVEN = 5
    EIGHT = 6
    NINE = 7
    TEN = 8
    JACK = 9
    QUEEN = 10
    KING = 11
    ACE = 12

    @property
    def char(self) -> str:
        return RANK_CHARS[self]

    @property
    def word(self) -> str:
        """Singular English name ("Ace", "Seven")."""
        return _RANK_WORDS[self]

    @property
    def plural(self) -> str:
        """Plural English name ("Aces", "Sixes")."""
        return _RANK_WORDS[self] + ("es" if self is Rank.SIX else "s")


class Suit(IntEnum):
    """Suits in index order; the bring-in suit order is a separate ranking (spades high)."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def char(self) -> str:
        return SUIT_CHARS[self]


RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
_RANK_WORDS = ("Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Jack", "Queen", "King", "Ace")


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """One playing card; ordered by its index (rank first, then suit)."""

    index: int

    def __post_init__(self) -> None:
        if not isinstance(self.index, int) or not 0 <= self.index <= 51:
            raise ValueError(f"card index {self.index!r} is outside 0..51")

    @classmethod
    def of(cls, rank: Rank, suit: Suit) -> Card:
        return cls(4 * int(rank) + int(suit))

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``"Ah"``-style text (rank ``2-9TJQKA``, ``10`` accepted; suit ``cdhs``)."""
        s = text.strip()
        if len(s) == 3 and s[:2] == "10":
            s = "T" + s[2]
        if len(s) != 2:
            raise ValueError(f"unknown card {text!r}: expected rank and suit, e.g. 'Ah'")
        r = RANK_CHARS.find(s[0].upper())
        u = SUIT_CHARS.find(s[1].lower())
        if r < 0 or u < 0:
            raise ValueError(f"unknown card {text!r}: rank must be one of {RANK_CHARS}, suit one of {SUIT_CHARS}")
        return cls(4 * r + u)

    @property
    def rank(self) -> Rank:
        return Rank(self.index >> 2)

    @property
    def suit(self) -> Suit:
        return Suit(self.index & 3)

    def __str__(self) -> str:
        return RANK_CHARS[self.index >> 2] + SUIT_CHARS[self.index & 3]

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"


DECK: tuple[Card, ...] = tuple(Card(i) for i in range(52))


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse ``"Ah Kh"``, ``"AhKh"`` or ``["Ah", "Kh"]`` into cards (no duplicate check)."""
    if isinstance(text, str):
        parts = text.replace(",", " ").split()
        if len(parts) == 1 and len(parts[0]) > 3:
            token = parts[0]
            parts = [token[i : i + 2] for i in range(0, len(token), 2)]
    else:
        parts = list(text)
    return [Card.parse(p) for p in parts]


def check_distinct(cards: Sequence[Card]) -> None:
    """Raise ``ValueError`` naming the first card that appears twice."""
    seen: set[int] = set()
    for card in cards:
        if card.index in seen:
            raise ValueError(f"duplicate card {card}")
        seen.add(card.index)


def format_cards(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)
