"""Player action kinds and the legal-action summary offered to the player on turn."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique


@unique
class ActionKind(Enum):
    """What a player may do on his turn. Amounts of BET/RAISE/COMPLETE are *to* amounts
    (the player's total bet in the round after the action)."""

    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"
    RAISE = "raise"
    BRING_IN = "bring_in"  # Stud/Soko: post the bring-in instead of completing
    COMPLETE = "complete"  # Stud/Soko: complete the bring-in to the full small bet
    DRAW = "draw"  # draw games: discard 0..5 cards (0 = stand pat)


@dataclass(slots=True)
class LegalActions:
    """The legal actions of the player on turn.

    ``min_to``/``max_to`` bound BET/RAISE/COMPLETE (raise-*to* amounts, all-in included);
    ``call_amount`` is the chips a CALL adds; ``max_discards`` bounds DRAW. ``ordered``: the
    same kinds in :class:`ActionKind` order when the engine built it (may be empty otherwise;
    use :meth:`in_order`).
    """

    seat: int
    kinds: frozenset[ActionKind]
    call_amount: int = 0
    min_to: int = 0
    max_to: int = 0
    max_discards: int = 0
    ordered: tuple[ActionKind, ...] = ()

    def in_order(self) -> tuple[ActionKind, ...]:
        """The legal kinds in :class:`ActionKind` order."""
        return self.ordered or tuple(k for k in ActionKind if k in self.kinds)

    def __contains__(self, kind: object) -> bool:
        return kind in self.kinds
