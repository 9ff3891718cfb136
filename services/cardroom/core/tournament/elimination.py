"""Elimination order, places and ties (rules/000 'Tournament Rules').

* 'When a player loses all their chips they are declared out of the tournament and finish
  in the order they were eliminated.'
* 'If more than one player is eliminated in a hand, the player with more chips at the
  beginning of the hand is placed higher. In an instance where 2 players started the hands
  with an identical chip count, both players tie for that rank, and any prizes due to those
  players will be equally distributed between them.'
* Hand-for-hand: bust-outs in one synchronized hand, at different tables, are one batch.

A batch of players out together gets the lowest places still open: with ``remaining``
players in before the batch, the batch takes places ``remaining - len + 1 .. remaining``,
fewest starting chips lowest; equal starting chips share the range of their places
(:class:`Placement`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cardroom.core.tournament.payouts import split_tied


@dataclass(frozen=True, slots=True)
class Bust:
    """A player out: chips at the start of the hand; ``order``: registration number."""

    player: str
    start_chips: int
    order: int


@dataclass(frozen=True, slots=True)
class Placement:
    """``players`` finish in places ``first``..``last`` (more than one player: a tie for
    rank ``first``), in registration order."""

    players: tuple[str, ...]
    first: int
    last: int

    @property
    def tied(self) -> bool:
        return len(self.players) > 1

    def prizes(self, prize_table: Sequence[int]) -> dict[str, int]:
        """Each player's prize: the prizes of the places summed and split equally
        (remainder cents one each in registration order)."""
        total = sum(prize_table[p - 1] for p in range(self.first, self.last + 1) if p <= len(prize_table))
        return split_tied(total, self.players)


def place_batch(busts: Sequence[Bust], remaining: int) -> list[Placement]:
    """Places for a batch of players out together (worst place first)."""
    if len(busts) > remaining:
        raise ValueError("more players out than remain")
    ordered = sorted(busts, key=lambda b: (b.start_chips, b.order))
    out: list[Placement] = []
    place = remaining
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1].start_chips == ordered[i].start_chips:
            j += 1
        group = sorted(ordered[i : j + 1], key=lambda b: b.order)
        size = j - i + 1
        out.append(Placement(tuple(b.player for b in group), place - size + 1, place))
        place -= size
        i = j + 1
    return out


__all__ = ["Bust", "Placement", "place_batch"]
