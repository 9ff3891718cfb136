"""Main and side pots from each player's total contribution (rules/003 'All-Ins').

Every chip a player put in this hand (antes, blinds, dead blinds, bets) counts as his
contribution; a player can win from each opponent at most what he contributed himself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(slots=True)
class Pot:
    """A pot: ``amount`` chips, contested by the ``members`` (player positions)."""

    amount: int
    members: tuple[int, ...]


def build_pots(committed: Sequence[int], live: Sequence[bool]) -> list[Pot]:
    """Layer contributions into pots; ``live[i]`` is False for folded players (their chips
    stay in the pots they reached). Consecutive layers with the same members merge."""
    levels = sorted({c for c, ok in zip(committed, live) if ok and c > 0})
    pots: list[Pot] = []
    previous = 0
    n = len(committed)
    for level in levels:
        amount = 0
        for i in range(n):
            c = committed[i]
            if c > previous:
                amount += (c if c < level else level) - previous
        members = tuple(i for i in range(n) if live[i] and committed[i] >= level)
        if pots and pots[-1].members == members:
            pots[-1] = Pot(pots[-1].amount + amount, members)
        else:
            pots.append(Pot(amount, members))
        previous = level
    # chips of folded players above every live player's level (cannot happen after uncalled
    # bets are returned, but keep chips conserved): add them to the last pot
    rest = sum(c - previous for c in committed if c > previous)
    if rest:
        if pots:
            pots[-1] = Pot(pots[-1].amount + rest, pots[-1].members)
        else:
            pots.append(Pot(rest, tuple(i for i in range(n) if live[i])))
    return pots


def split(amount: int, winners: Sequence[int], one_each: bool = True) -> list[tuple[int, int]]:
    """Divide ``amount`` among ``winners`` (already ordered: closest to the button's left
    first). Odd chips: one each from the first winner on (``one_each``, rules/000, 003), or
    all to the first winner (``one_each=False``, pokerkit's way)."""
    k = len(winners)
    q, r = divmod(amount, k)
    if one_each:
        return [(w, q + (1 if j < r else 0)) for j, w in enumerate(winners)]
    return [(w, q + (r if j == 0 else 0)) for j, w in enumerate(winners)]
