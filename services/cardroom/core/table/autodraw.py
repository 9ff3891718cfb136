"""Automatic draw for a disconnected player (rules/001 'Lost connection').

"If a player loses his connection before or during the drawing of cards, the draw is
handled automatically. Cards are kept according to how the hand matches the following
rules" — checked in this order, the first that matches decides what is kept:

1. Two pairs or higher — the cards making the hand: two pairs keep 4, trips 3, four of a
   kind 4; a straight, flush, full house or straight flush keeps all 5 (stands pat).
2. Open royal flush draw (K Q J 10 suited) — those 4.
3. High pair (AA, KK, QQ, JJ) — the pair.
4. Straight flush or flush draw — the 4 suited cards.
5. Low pair (10 10 or less) — the pair.
6. Open straight draw — 4 consecutive ranks open at both ends (2345 up to 10JQK).
7. Gut straight draw — 4 ranks of one straight with a gap, or open at one end only
   (A234, JQKA).
8. High card (A, K, Q, J) — every card ranked jack or higher.
9. No cards are kept.

The list is written for high-hand draw games (5-Card Draw). For 2-7 Triple Draw the
list would keep the worst lowball hands, so :func:`lowball_auto_draw` is used instead (a
documented choice, the rules are silent): keep one card of each rank from 2 to 8, and of a
5-card straight or flush discard the highest card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, unique

from cardroom.core.cards import Card, Rank


@unique
class AutoDrawRule(Enum):
    """The rules/001 priority list, in order."""

    TWO_PAIR_OR_BETTER = 1
    OPEN_ROYAL_FLUSH_DRAW = 2
    HIGH_PAIR = 3
    FLUSH_DRAW = 4
    LOW_PAIR = 5
    OPEN_STRAIGHT_DRAW = 6
    GUT_STRAIGHT_DRAW = 7
    HIGH_CARD = 8
    NOTHING = 9
    LOWBALL = 10


@dataclass(frozen=True, slots=True)
class AutoDraw:
    """The automatic draw: the rule that matched, the cards kept and discarded."""

    rule: AutoDrawRule
    keep: tuple[Card, ...]
    discard: tuple[Card, ...]


def _result(rule: AutoDrawRule, hand: Sequence[Card], keep: Sequence[Card]) -> AutoDraw:
    kept = set(keep)
    return AutoDraw(rule, tuple(c for c in hand if c in kept), tuple(c for c in hand if c not in kept))


def _straight_ranks(ranks: set[int]) -> bool:
    """Five distinct ranks forming a straight (the wheel A-2-3-4-5 included)."""
    if len(ranks) != 5:
        return False
    return max(ranks) - min(ranks) == 4 or ranks == {12, 0, 1, 2, 3}


def _windows() -> list[tuple[int, ...]]:
    """Every five-rank straight window, the wheel first."""
    return [(12, 0, 1, 2, 3)] + [tuple(range(low, low + 5)) for low in range(0, 9)]


def auto_draw(hand: Sequence[Card]) -> AutoDraw:
    """What a disconnected player keeps of his five cards by the rules/001 list."""
    if len(hand) != 5 or len(set(hand)) != 5:
        raise ValueError("the automatic draw needs five distinct cards")
    by_rank: dict[int, list[Card]] = {}
    for c in hand:
        by_rank.setdefault(int(c.rank), []).append(c)
    counts = Counter({r: len(cs) for r, cs in by_rank.items()})
    suits = Counter(int(c.suit) for c in hand)
    flush = len(suits) == 1
    straight = _straight_ranks(set(by_rank))
    groups = sorted(counts.values(), reverse=True)

    # 1. two pairs or higher
    if flush or straight or groups[0] == 3 and groups[1] == 2:
        return _result(AutoDrawRule.TWO_PAIR_OR_BETTER, hand, hand)
    if groups[0] >= 3 or groups[:2] == [2, 2]:
        keep = [c for r, cs in by_rank.items() if counts[r] >= 2 for c in cs]
        return _result(AutoDrawRule.TWO_PAIR_OR_BETTER, hand, keep)
    # 2. open royal flush draw
    royal = {int(Rank.KING), int(Rank.QUEEN), int(Rank.JACK), int(Rank.TEN)}
    for suit in range(4):
        cards = [c for c in hand if int(c.suit) == suit and int(c.rank) in royal]
        if len(cards) == 4:
            return _result(AutoDrawRule.OPEN_ROYAL_FLUSH_DRAW, hand, cards)
    pair = [cs for cs in by_rank.values() if len(cs) == 2]
    # 3. high pair
    if pair and pair[0][0].rank >= Rank.JACK:
        return _result(AutoDrawRule.HIGH_PAIR, hand, pair[0])
    # 4. straight flush or flush draw
    suit, n = suits.most_common(1)[0]
    if n == 4:
        return _result(AutoDrawRule.FLUSH_DRAW, hand, [c for c in hand if int(c.suit) == suit])
    # 5. low pair
    if pair:
        return _result(AutoDrawRule.LOW_PAIR, hand, pair[0])
    ranks = set(by_rank)  # five distinct ranks from here on
    # 6. open-ended straight draw: four in a row, 2345 up to TJQK
    for low in range(0, 9):
        window = set(range(low, low + 4))
        if window <= ranks:
            return _result(AutoDrawRule.OPEN_STRAIGHT_DRAW, hand, [by_rank[r][0] for r in window])
    # 7. gut (inside or one-ended) straight draw
    for gut in _windows():
        inside = ranks & set(gut)
        if len(inside) == 4:
            return _result(AutoDrawRule.GUT_STRAIGHT_DRAW, hand, [by_rank[r][0] for r in inside])
    # 8. high cards
    high = [c for c in hand if c.rank >= Rank.JACK]
    if high:
        return _result(AutoDrawRule.HIGH_CARD, hand, high)
    # 9. no cards are kept
    return _result(AutoDrawRule.NOTHING, hand, ())


def lowball_auto_draw(hand: Sequence[Card]) -> AutoDraw:
    """2-7 Triple Draw automatic draw (documented choice, see the module docstring)."""
    if len(hand) != 5 or len(set(hand)) != 5:
        raise ValueError("the automatic draw needs five distinct cards")
    keep: dict[int, Card] = {}
    for c in sorted(hand):
        if c.rank <= Rank.EIGHT and int(c.rank) not in keep:
            keep[int(c.rank)] = c
    kept = sorted(keep.values())
    if len(kept) == 5:
        ranks = {int(c.rank) for c in kept}
        straight = max(ranks) - min(ranks) == 4
        flush = len({c.suit for c in kept}) == 1
        if straight or flush:
            kept = kept[:-1]
    return _result(AutoDrawRule.LOWBALL, hand, kept)
