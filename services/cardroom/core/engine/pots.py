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


def build_pots(committed: Sequence[int], live: Sequence[bool],
               fold_order: Sequence[int] = ()) -> list[Pot]:
    """Layer contributions into pots; ``live[i]`` is False for folded players (their chips
    stay in the pots they reached). Consecutive layers with the same members merge.

    Chips above every live player's contribution (possible only when players fold with no
    bet to face, e.g. to an all-in player) form pots whose only member is the contributor
    of that layer who folded last (``fold_order``: positions in the order they folded): he
    was the last player left in that pot."""
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
            pots[-1].amount += amount
        else:
            pots.append(Pot(amount, members))
        previous = level
    if any(c > previous for c in committed):
        rank = {i: k for k, i in enumerate(fold_order)}
        for level in sorted({c for c in committed if c > previous}):
            amount = sum(min(c, level) - previous for c in committed if c > previous)
            contributors = [i for i in range(n) if committed[i] >= level]
            owner = max(contributors, key=lambda i: (rank.get(i, -1), -i))
            if pots and pots[-1].members == (owner,):
                pots[-1].amount += amount
            else:
                pots.append(Pot(amount, (owner,)))
            previous = level
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


def take_from_pots(pots: Sequence[int], rake: int) -> list[int]:
    """Pots after taking ``rake``: from the main pot (index 0) first, then the side pots in the
    order they were made (a player all-in for the main pot pays his share of the rake before the
    players contesting only side pots). The engine's showdown takes the rake with this."""
    if rake < 0 or rake > sum(pots):
        raise ValueError(f"rake {rake} does not fit in pots {list(pots)}")
    left = rake
    out: list[int] = []
    for amount in pots:
        taken = min(amount, left)
        left -= taken
        out.append(amount - taken)
    return out
