"""Typed tournament events (what the tournament service publishes, keyed by tournament).

Times are the ``now`` input of the command that caused them. :func:`event_record` turns
an event into a JSON-ready dict with its ``type``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class TournamentEvent:
    at: float


@dataclass(frozen=True, slots=True)
class Registered(TournamentEvent):
    player: str
    late: bool = False
    via_satellite: bool = False


@dataclass(frozen=True, slots=True)
class Unregistered(TournamentEvent):
    player: str


@dataclass(frozen=True, slots=True)
class RegistrationClosed(TournamentEvent):
    reason: str


@dataclass(frozen=True, slots=True)
class Started(TournamentEvent):
    entrants: int
    tables: int


@dataclass(frozen=True, slots=True)
class TableOpened(TournamentEvent):
    table: int
    seats: tuple[tuple[int, str], ...]
    seat_count: int = 0
    """The table's size (a shoot-out's tables may differ from the tournament's; 0: the tournament's)."""
    time_banks: tuple[tuple[int, float], ...] = ()
    """(seat, seconds): the Extra Time a player carries from his last table (a shoot-out's next round);
    the other seats have the full time bank."""


@dataclass(frozen=True, slots=True)
class PlayerSeated(TournamentEvent):
    player: str
    table: int
    seat: int
    chips: int


@dataclass(frozen=True, slots=True)
class TableBroken(TournamentEvent):
    table: int


@dataclass(frozen=True, slots=True)
class PlayerMoved(TournamentEvent):
    player: str
    from_table: int
    from_seat: int
    to_table: int
    to_seat: int
    chips: int
    reason: str
    """``balance`` or ``break``."""


@dataclass(frozen=True, slots=True)
class FinalTable(TournamentEvent):
    table: int
    players: int


@dataclass(frozen=True, slots=True)
class LevelUp(TournamentEvent):
    level: int
    """1-based."""
    small_blind: int
    big_blind: int
    ante: int
    small_bet: int
    big_bet: int
    bring_in: int


@dataclass(frozen=True, slots=True)
class BreakStarted(TournamentEvent):
    number: int
    until: float


@dataclass(frozen=True, slots=True)
class BreakEnded(TournamentEvent):
    number: int


@dataclass(frozen=True, slots=True)
class HandForHand(TournamentEvent):
    on: bool
    remaining: int


@dataclass(frozen=True, slots=True)
class Rebuy(TournamentEvent):
    player: str
    chips: int
    cost: int
    count: int
    """1 for a re-buy, 2 for a double re-buy."""


@dataclass(frozen=True, slots=True)
class AddOn(TournamentEvent):
    player: str
    chips: int
    cost: int


@dataclass(frozen=True, slots=True)
class RebuyPeriodClosed(TournamentEvent):
    pass


@dataclass(frozen=True, slots=True)
class AddOnPeriodClosed(TournamentEvent):
    pass


@dataclass(frozen=True, slots=True)
class PrizePoolFinal(TournamentEvent):
    entrants: int
    collected: int
    overlay: int
    prize_pool: int
    prizes: tuple[int, ...]
    """Cash prize per place, 1st first (satellites: seat value per seat, then the cash)."""
    seats: int = 0
    """Satellites: seats in the target event."""


@dataclass(frozen=True, slots=True)
class Eliminated(TournamentEvent):
    player: str
    place: int
    last_place: int
    """> ``place`` for a tie: the tied players share places ``place``..``last_place``."""
    tied_with: tuple[str, ...]
    prize: int | None
    """None while the prize pool is not final (see :class:`Finished`)."""
    table: int


@dataclass(frozen=True, slots=True)
class RoundStarted(TournamentEvent):
    """Shoot-out round (1-based) and its tables."""

    round: int
    tables: int
    players: int


@dataclass(frozen=True, slots=True)
class SeatWon(TournamentEvent):
    """Satellite: ``player`` won a seat in the target event."""

    player: str
    seat_value: int


@dataclass(frozen=True, slots=True)
class Result:
    player: str
    place: int
    last_place: int
    prize: int
    seat: bool = False


@dataclass(frozen=True, slots=True)
class Finished(TournamentEvent):
    results: tuple[Result, ...]
    prize_pool: int


@dataclass(frozen=True, slots=True)
class Cancelled(TournamentEvent):
    policy: str
    payouts: tuple[tuple[str, int], ...]
    """(player, cash) — award, fee back and refunds."""
    distributed: int
    house_kept: int


def event_record(event: TournamentEvent) -> dict[str, Any]:
    """``{"type": "Eliminated", "at": ..., ...}`` (tuples as lists)."""
    record: dict[str, Any] = {"type": type(event).__name__}
    record.update(dataclasses.asdict(event))
    return record


__all__ = [
    "AddOn",
    "AddOnPeriodClosed",
    "BreakEnded",
    "BreakStarted",
    "Cancelled",
    "Eliminated",
    "FinalTable",
    "Finished",
    "HandForHand",
    "LevelUp",
    "PlayerMoved",
    "PlayerSeated",
    "PrizePoolFinal",
    "Rebuy",
    "RebuyPeriodClosed",
    "Registered",
    "RegistrationClosed",
    "Result",
    "RoundStarted",
    "SeatWon",
    "Started",
    "TableBroken",
    "TableOpened",
    "TournamentEvent",
    "Unregistered",
    "event_record",
]
