"""Hand-for-hand (rules/000 'Tournament Rules', glossary 'Hand-For-Hand').

* 'In these instances where there is more than one table remaining the tournament may be
  played "hand-for-hand". This means that if one table finishes its hand before the other
  table(s), that table waits for the other table(s) to finish before the next hand is dealt.'
* 'all bustouts during a "synchronized" hand (even at different tables) are treated as having
  happened on the same hand' — the tournament holds them until :func:`synchronized_hand_over`.
* 'Hand-for-Hand play may happen more than once during the same tournament.' When: a setting
  (``margin``, default 1: on the bubble, while the players left are within ``margin`` of the
  paid places); off once they are all in the money or one table remains.
"""

from __future__ import annotations

from collections.abc import Iterable


def hand_for_hand_due(*, margin: int, pool_final: bool, tables: int, remaining: int, paid: int) -> bool:
    return margin > 0 and pool_final and tables > 1 and paid < remaining <= paid + margin


def synchronized_hand_over(playing: Iterable[int], dealt: set[int], can_deal: dict[int, bool]) -> bool:
    """Every table has played the synchronized hand (a table that cannot deal does not count)."""
    return not any(True for _ in playing) and all(t in dealt or not ok for t, ok in can_deal.items())


__all__ = ["hand_for_hand_due", "synchronized_hand_over"]
