"""Artificial all-in allowance (rules/002 'All-Ins', rules/003 'Artificial All-In').

Each player may be made artificially all-in a fixed number of times per 24 hours (default
2, rules/002). The 24 hours are a rolling window ending now: a use older than 24 hours no
longer counts. An operator may reset a player's allowance ("ask to have this account
reset"). Time is an input (seconds); nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DAY_SECONDS = 24 * 60 * 60


@dataclass(slots=True)
class AllInAllowance:
    """Uses of the artificial all-in, per player id, as times in seconds."""

    per_day: int = 2
    window_seconds: float = DAY_SECONDS
    uses: dict[str, list[float]] = field(default_factory=dict)
    """Only players with a use in the window: asking about a player records nothing (it is asked at
    every turn of every player)."""

    def _recent(self, player: str, now: float) -> list[float]:
        kept = [t for t in self.uses.get(player, ()) if now - t < self.window_seconds]
        if kept:
            self.uses[player] = kept
        else:
            self.uses.pop(player, None)
        return kept

    def left(self, player: str, now: float) -> int:
        """Artificial all-ins ``player`` may still use at time ``now``."""
        return max(0, self.per_day - len(self._recent(player, now)))

    def use(self, player: str, now: float) -> None:
        """Record one artificial all-in; raise if none is left."""
        if self.left(player, now) <= 0:
            raise ValueError(f"player {player!r} has no artificial all-in left")
        self.uses.setdefault(player, []).append(now)

    def reset(self, player: str) -> None:
        """Operator reset: the player's allowance is full again."""
        self.uses.pop(player, None)
