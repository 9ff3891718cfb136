"""A cash table's lobby figures (issue 18: "the lobby (cash tables by game, stakes, seats, average
pot, hands/hour)"): the hands finished in the last hour, their average pot and how many an hour
that makes. Kept in memory by the table's actor (a restarted dealer starts them afresh); the clock
is an input, as everywhere in the dealer."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

WINDOW = 3600.0  # seconds: the figures are over the last hour
MIN_SPAN = 60.0  # a table younger than a minute counts as a minute old (no rate from one quick hand)


@dataclass
class LobbyStats:
    """The last hour's finished hands of one table: (finished at, the pot's chips)."""

    opened_at: float
    hands: deque[tuple[float, int]] = field(default_factory=deque)

    def add_hand(self, finished_at: float, pot: int) -> None:
        self.hands.append((finished_at, pot))
        self._forget(finished_at)

    def _forget(self, now: float) -> None:
        while self.hands and self.hands[0][0] <= now - WINDOW:
            self.hands.popleft()

    def average_pot(self, now: float) -> int:
        """The average pot of the last hour's hands, in whole chips (rounded down); 0 without hands."""
        self._forget(now)
        return sum(pot for _, pot in self.hands) // len(self.hands) if self.hands else 0

    def hands_per_hour(self, now: float) -> int:
        """The last hour's hands, as a rate per hour of the time the table was open in that hour."""
        self._forget(now)
        span = max(MIN_SPAN, min(WINDOW, now - self.opened_at))
        return round(len(self.hands) * 3600.0 / span)
