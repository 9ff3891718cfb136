"""Main and side pots from each player's total contribution (rules/003 'All-Ins').

Every chip a player put in this hand as *his own* (antes posted by everyone, blinds, bets)
counts as his contribution; a player can win from each opponent at most what he
contributed himself (rules/003: "A player that is all-in can only win as much chips from
every other player that he has put into the pot").

Dead money — a dead small blind (rules/003 'Missed blinds': "This money is considered as
'dead' and goes directly to the pot"), a big-blind or button ante — is nobody's
contribution: it goes to the main pot, which every live player contests, and is never
layered into a pot of its poster's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(slots=True)
class Pot:
    """A pot: ``amount`` chips, contested by the ``members`` (player positions)."""

    amount: int
    members: tuple[int, ...]


def build_pots(
    committed: Sequence[int], live: Sequence[bool], fold_order: Sequence[int] = (), dead: Sequence[int] = ()
) -> list[Pot]:
    """Layer contributions into pots; ``live[i]`` is False for folded players (their chips
    stay in the pots they reached). Consecutive layers with the same members merge.

    ``dead[i]``: the part of ``committed[i]`` that is dead money; it is added to the main
    pot, whose members are all the live players (pokerkit builds its pots the same way when
    ``ante_trimming_status`` is False).

    Chips above every live player's contribution (possible only when players fold with no
    bet to face, e.g. to an all-in player) form pots whose only member is the contributor
    of that layer who folded last (``fold_order``: positions in the order they folded): he
    was the last player left in that pot."""
    n = len(committed)
    if dead:
        own = [committed[i] - dead[i] for i in range(n)]
        dead_total = sum(dead)
    else:
        own = list(committed)
        dead_total = 0
    levels = sorted({c for c, ok in zip(own, live, strict=True) if ok and c > 0})
    pots: list[Pot] = []
    if dead_total:
        pots.append(Pot(dead_total, tuple(i for i in range(n) if live[i])))
    previous = 0
    for level in levels:
        amount = 0
        for i in range(n):
            c = own[i]
            if c > previous:
                amount += (min(level, c)) - previous
        members = tuple(i for i in range(n) if live[i] and own[i] >= level)
        if pots and pots[-1].members == members:
            pots[-1].amount += amount
        else:
            pots.append(Pot(amount, members))
        previous = level
    if any(c > previous for c in own):
        rank = {i: k for k, i in enumerate(fold_order)}
        for level in sorted({c for c in own if c > previous}):
            amount = sum(min(c, level) - previous for c in own if c > previous)
            contributors = [i for i in range(n) if own[i] >= level]
            owner = max(contributors, key=lambda i: (rank.get(i, -1), -i))
            if pots and pots[-1].members == (owner,):
                pots[-1].amount += amount
            else:
                pots.append(Pot(amount, (owner,)))
            previous = level
    return pots


def split(amount: int, winners: Sequence[int], one_each: bool = True, chip: int = 1) -> list[tuple[int, int]]:
    """Divide ``amount`` among ``winners`` (already ordered: closest to the button's left
    first) in whole ``chip``s. Odd chips: one each from the first winner on (``one_each``,
    rules/000, 003), or all to the first winner (``one_each=False``, pokerkit's way). A part
    smaller than a chip (an all-in for an odd amount) goes with the first odd chip.

    rules/003: "If there is an odd (25 cent) chip it goes to the winning player to the left
    of the dealer": with ``chip=25`` a pot of 225 split two ways is 125/100."""
    k = len(winners)
    chips, loose = divmod(amount, chip)
    q, r = divmod(chips, k)
    base = q * chip
    if one_each:
        return [(w, base + (chip if j < r else 0) + (loose if j == 0 else 0)) for j, w in enumerate(winners)]
    return [(w, base + (r * chip + loose if j == 0 else 0)) for j, w in enumerate(winners)]


def halve(amount: int, chip: int = 1) -> tuple[int, int]:
    """(high, low) halves of a hi/lo pot in whole chips; the odd chip goes to the high half
    (rules/003: "In High/Low games the odd chip goes to the player winning the high hand")."""
    low = (amount // chip // 2) * chip
    return amount - low, low


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
