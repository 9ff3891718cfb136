"""Everything fixed for one tournament (the lobby's 'Tournament Information').

Defaults are the house rule (rules/000) where it states one and a documented setting
where it is silent (docs/ARCHITECTURE.md, '## Tournaments').
"""

from __future__ import annotations

from dataclasses import dataclass

from cardroom.core.engine import Game, Variant
from cardroom.core.table.settings import max_players
from cardroom.core.tournament.cancellation import GuaranteeCancellation
from cardroom.core.tournament.payouts import SatelliteRemainder, UnassignedShare
from cardroom.core.tournament.structure import LevelStructure, standard_structure

FINAL_TABLE_PLAYERS: dict[Game, int] = {
    Game.HOLDEM: 10,
    Game.OMAHA: 10,
    Game.OMAHA_HILO: 10,
    Game.STUD: 8,
    Game.STUD_HILO: 8,
    Game.SOKO: 8,
    Game.FIVE_CARD_DRAW: 6,
    Game.TRIPLE_DRAW_27: 6,
}
"""rules/000: 'When 10 players remain in a Hold'em or Omaha tournament or eight players
remain in a Seven Card Stud tournament, all players are brought together at the "final
table"' (Stud Hi-Lo and Soko as Stud; draw games: their table size)."""


@dataclass(frozen=True, slots=True)
class RebuyRules:
    """Re-buys (rules/000 'Re-buy & Add-on Tournament').

    ``max_rebuys``: per player, None = unlimited; ``period_seconds``: None = 'the first hour
    of play up until the end of the first break' (the end of the first break, or one hour
    without breaks); ``cost`` / ``chips``: None = the buy-in and the starting stack;
    ``double``: offer a double re-buy at zero chips."""

    max_rebuys: int | None = None
    period_seconds: float | None = None
    cost: int | None = None
    chips: int | None = None
    double: bool = True


@dataclass(frozen=True, slots=True)
class AddOnRules:
    """The add-on (rules/000): 'available during the first five minute break'; every active
    player, whatever his stack, once. ``from_seconds`` / ``until_seconds``: None = the first
    break (minute 55 to 60 without breaks); ``cost`` None = the buy-in, ``chips`` None = the
    starting stack."""

    from_seconds: float | None = None
    until_seconds: float | None = None
    cost: int | None = None
    chips: int | None = None


@dataclass(frozen=True, slots=True)
class ShootoutRules:
    """Shoot-out (rules/000): rounds, one winner per table goes on; ``table_size`` 2..10;
    ``round_structures``: each round's level structure (the last repeats; empty = the
    tournament's structure, its clock restarting each round)."""

    table_size: int = 10
    round_structures: tuple[LevelStructure, ...] = ()


@dataclass(frozen=True, slots=True)
class SatelliteRules:
    """Satellite (rules/000): prizes are seats of ``seat_value`` in ``target``; the tournament
    ends when every seat is won, whatever the chip counts."""

    seat_value: int
    target: str = ""
    remainder: SatelliteRemainder = SatelliteRemainder.CASH_TO_NEXT_PLACE


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """A tournament's settings. Money in cents; chips in tournament chips.

    ``start_at``: scheduled start (tournament clock seconds); None = Sit & Go, started when
    ``max_entrants`` are registered. ``seat_count`` 0 = the game's table size.
    ``final_table_size`` 0 = :data:`FINAL_TABLE_PLAYERS` (capped at the seat count).
    ``breaks`` None = breaks in multi-table events only ('There are no breaks during
    single-table tournaments'). ``hand_for_hand_margin``: hand-for-hand while more than one
    table plays and the remaining players are within this many of the paid places (1 = on
    the bubble); 0 = never.
    """

    variant: Variant
    starting_stack: int = 1500
    buy_in: int = 1000
    fee: int = 100
    guarantee: int = 0
    name: str = "tournament"
    structure: LevelStructure | None = None
    start_at: float | None = 0.0
    min_entrants: int = 2
    max_entrants: int | None = None
    unregister_before_seconds: float = 600.0
    late_registration_seconds: float = 600.0
    seat_count: int = 0
    final_table_size: int = 0
    breaks: bool | None = None
    rebuys: RebuyRules | None = None
    add_on: AddOnRules | None = None
    shootout: ShootoutRules | None = None
    satellite: SatelliteRules | None = None
    hand_for_hand_margin: int = 1
    action_seconds: float = 30.0
    extra_time_seconds: float = 30.0
    extra_time_when_disconnected: bool = False
    """``TableSettings.time_bank_when_disconnected`` of its tables (rules/000 disagrees with itself)."""
    unassigned_share: UnassignedShare = UnassignedShare.PRO_RATA
    guarantee_cancellation: GuaranteeCancellation = GuaranteeCancellation.COLLECTED_ONLY
    level_seconds: float = 600.0
    """Level length of the default structure (when ``structure`` is None)."""

    def __post_init__(self) -> None:
        if self.seat_count == 0:
            object.__setattr__(self, "seat_count", max_players(self.variant.game))
        if self.start_at is None and self.max_entrants is None:
            raise ValueError("a Sit & Go starts when its preset number (max_entrants) is registered")
        if self.min_entrants < 2:
            raise ValueError("a tournament needs at least two entrants")
        if self.shootout is not None and not 2 <= self.shootout.table_size <= min(10, self.seat_count):
            raise ValueError("a shoot-out has 2 to 10 players per table")
        if self.buy_in < 0 or self.fee < 0 or self.starting_stack <= 0:
            raise ValueError("money and chips are positive")

    @property
    def level_structure(self) -> LevelStructure:
        if self.structure is not None:
            return self.structure
        return standard_structure(self.variant, self.starting_stack, level_seconds=self.level_seconds)

    @property
    def final_table(self) -> int:
        size = self.final_table_size or FINAL_TABLE_PLAYERS[self.variant.game]
        return min(size, self.seat_count)

    @property
    def rebuy_cost(self) -> int:
        return self.buy_in if self.rebuys is None or self.rebuys.cost is None else self.rebuys.cost

    @property
    def rebuy_chips(self) -> int:
        return self.starting_stack if self.rebuys is None or self.rebuys.chips is None else self.rebuys.chips

    @property
    def add_on_cost(self) -> int:
        return self.buy_in if self.add_on is None or self.add_on.cost is None else self.add_on.cost

    @property
    def add_on_chips(self) -> int:
        return self.starting_stack if self.add_on is None or self.add_on.chips is None else self.add_on.chips


__all__ = ["FINAL_TABLE_PLAYERS", "AddOnRules", "RebuyRules", "SatelliteRules", "ShootoutRules", "TournamentConfig"]
