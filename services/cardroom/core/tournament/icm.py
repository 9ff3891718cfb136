"""ICM equity (Malmuth-Harville) of the remaining stacks — for the lobby and as a checked
extra; never a deal mechanism (rules/000: 'will not assist in any deals among players').

Harville's model: a player finishes first with probability ``stack / total``; given the
players placed so far, the next place goes to each other player in proportion to his
stack. A player's equity is the sum over places of P(place) x prize.

Exact computation, no sampling: a forward pass over the *sets* of players already placed
(the probability that the first ``d`` places are exactly the set S, in any order, is all
the future needs), so only sets smaller than the number of paid places are visited:
``sum(C(n, d) for d < places)`` states. :data:`MAX_STATES` bounds the work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb

MAX_STATES = 2_000_000


def icm_equity(stacks: Mapping[str, int], prizes: Sequence[int]) -> dict[str, float]:
    """Each player's expected prize (same unit as ``prizes``, 1st place first).

    Players with no chips get nothing (they are out); the equities sum to the prizes of the
    places the remaining players can still take."""
    live = [(p, c) for p, c in stacks.items() if c > 0]
    if any(c < 0 for c in stacks.values()):
        raise ValueError("a stack is never negative")
    equity = {p: 0.0 for p in stacks}
    n = len(live)
    places = min(len(prizes), n)
    if places == 0:
        return equity
    if sum(comb(n, d) for d in range(places)) > MAX_STATES:
        raise ValueError(f"too many states for {n} players and {places} paid places")
    chips = [c for _, c in live]
    total = sum(chips)
    layer: dict[int, float] = {0: 1.0}  # bitmask of players placed -> probability
    removed: dict[int, int] = {0: 0}  # bitmask -> their chips
    for depth in range(places):
        prize = prizes[depth]
        nxt: dict[int, float] = {}
        for mask, prob in layer.items():
            rest = total - removed[mask]
            for i in range(n):
                bit = 1 << i
                if mask & bit:
                    continue
                p = prob * chips[i] / rest
                equity[live[i][0]] += p * prize
                if depth + 1 < places:
                    m2 = mask | bit
                    if m2 not in nxt:
                        nxt[m2] = 0.0
                        removed[m2] = removed[mask] + chips[i]
                    nxt[m2] += p
        layer = nxt
    return equity


__all__ = ["MAX_STATES", "icm_equity"]
