"""The action clock, extra time, and what happens when a player does not act in time.

Decisions (:func:`timeout_decision`), in this order:

1. **Extra time** (rules/000, tournaments; any table with a time bank): used automatically
   when the player has an active connection, has money in the pot and does not act in time
   (disconnected too where ``TableSettings.time_bank_when_disconnected``: rules/000 disagrees
   with itself, docs/ARCHITECTURE.md).
2. **Bring-in** (Stud, Soko): the bring-in is a forced bet; it is posted for the player.
3. **Draws** (rules/003): a player who does not draw in time stands pat and may not bet or
   raise in the next betting round; a *disconnected* player's draw is made automatically by
   the priority list of rules/001 (:mod:`cardroom.core.table.autodraw`).
4. A player who can check checks (rules/000 'Disconnects': "his hand will be folded unless
   the check option is available to them, at which point the player will auto check"); a
   disconnected player's artificial all-in is kept for when he faces a bet.
5. **Artificial all-in** (rules/002, 003): a disconnected player in a Fixed or Spread Limit
   **cash** game who has put money in the pot is treated as all-in, if his allowance for the
   last 24 hours is not used up.
6. Otherwise the hand is folded (rules/002: "your hand will be folded").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique

from cardroom.core.engine.spec import Structure
from cardroom.core.table.settings import GameKind, is_limit

#: The most Extra Time a player may carry from one table to the next (seconds): what a dealer accepts for
#: a seated player's time left, and what a tournament keeps of what its tables report.
MAX_TIME_BANK_SECONDS = 3600.0


@unique
class TimeoutDecision(Enum):
    """What the table does for a player whose clock ran out."""

    USE_TIME_BANK = "use_time_bank"
    BRING_IN = "bring_in"
    STAND_PAT = "stand_pat"
    AUTO_DRAW = "auto_draw"
    ARTIFICIAL_ALL_IN = "artificial_all_in"
    CHECK = "check"
    FOLD = "fold"


@dataclass(frozen=True, slots=True)
class TimeoutContext:
    """The facts a timeout decision depends on."""

    kind: GameKind
    structure: Structure
    connected: bool
    money_in_pot: bool
    can_check: bool
    is_draw: bool = False
    all_ins_left: int = 0
    time_bank_left: float = 0.0
    bring_in_due: bool = False
    bank_when_disconnected: bool = False
    """Extra time for a disconnected player too (``TableSettings.time_bank_when_disconnected``)."""


def timeout_decision(ctx: TimeoutContext) -> TimeoutDecision:
    """The decision for a player who did not act in time (see the module docstring)."""
    if (ctx.connected or ctx.bank_when_disconnected) and ctx.money_in_pot and ctx.time_bank_left > 0:
        return TimeoutDecision.USE_TIME_BANK
    if ctx.bring_in_due:
        return TimeoutDecision.BRING_IN
    if ctx.is_draw:
        return TimeoutDecision.STAND_PAT if ctx.connected else TimeoutDecision.AUTO_DRAW
    if ctx.can_check:
        return TimeoutDecision.CHECK
    if (
        not ctx.connected
        and ctx.kind is GameKind.CASH
        and is_limit(ctx.structure)
        and ctx.money_in_pot
        and ctx.all_ins_left > 0
    ):
        return TimeoutDecision.ARTIFICIAL_ALL_IN
    return TimeoutDecision.FOLD


@dataclass(frozen=True, slots=True)
class TurnClock:
    """The clock of one turn: started at ``started`` (seconds) for ``seconds``.

    ``bank_seconds`` of extra time may be added once by :meth:`with_time_bank`.
    """

    seat: int
    started: float
    seconds: float
    bank_seconds: float = 0.0

    @property
    def deadline(self) -> float:
        return self.started + self.seconds + self.bank_seconds

    def expired(self, now: float) -> bool:
        """True once ``now`` reached the deadline."""
        return now >= self.deadline

    def with_time_bank(self, bank: float) -> TurnClock:
        """The same turn with ``bank`` seconds of extra time added."""
        return TurnClock(self.seat, self.started, self.seconds, self.bank_seconds + bank)
