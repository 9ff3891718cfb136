"""Levels and breaks (rules/000 'Level Structure', 'There will be a 5 minute break every hour').

* A :class:`Level` holds the forced bets of a level — blinds and ante for blind games,
  ante, bring-in and the small / big bet for Stud, the small / big bet for limit games — and
  its length: ``seconds`` of play (the time is an input) and optionally ``hands`` (the level
  also ends after that many hands dealt in the tournament, all tables counted, since the
  level began). The last level lasts until the end.
* The ante kind: ``STANDARD`` (every player dealt in), ``BIG_BLIND`` (the big blind posts
  the ante of the whole table) or ``BUTTON``. Only standard antes go through the engine for
  now: :meth:`Level.stakes` refuses the others until the engine has the big-blind / button
  ante forced bets (issue 12 item 2; wire them in :meth:`Level.stakes` and
  ``Table.set_stakes``).
* Breaks (:class:`BreakSchedule`): multi-table events have a 5-minute break every hour of
  the tournament clock — by default from minute 55 to minute 60 of each hour — and
  single-table events none. The level clock counts play time only (it stops during breaks).
  A table finishes the hand in progress when a break begins; no hand is dealt during one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, unique

from cardroom.core.engine import Stakes, Structure, Variant
from cardroom.core.table.settings import uses_blinds


@unique
class AnteKind(Enum):
    STANDARD = "standard"
    BIG_BLIND = "big_blind"
    BUTTON = "button"


@dataclass(frozen=True, slots=True)
class Level:
    """One level of the structure (amounts in tournament chips)."""

    small_blind: int = 0
    big_blind: int = 0
    ante: int = 0
    ante_kind: AnteKind = AnteKind.STANDARD
    small_bet: int = 0
    big_bet: int = 0
    bring_in: int = 0
    seconds: float = 600.0
    hands: int | None = None

    def stakes(self, variant: Variant) -> Stakes:
        """The engine's stakes for this level (no raise cap in pot- and no-limit; bet + 3
        raises in limit: rules/000 'Each betting round consists of a bet and up to three
        raises. There is no raise cap in pot-limit and no-limit tournaments.'). ValueError when
        ``variant`` cannot be played at them (:meth:`verify`)."""
        self.verify(variant)
        stakes = self._standard_stakes(variant)
        if self.ante and self.ante_kind is AnteKind.BIG_BLIND:  # one ante for the table, dead money
            return replace(stakes, ante=0, big_blind_ante=self.ante)
        if self.ante and self.ante_kind is AnteKind.BUTTON:
            return replace(stakes, ante=0, button_ante=self.ante)
        return stakes

    def can_play(self, variant: Variant) -> bool:
        try:
            self.verify(variant)
        except ValueError:
            return False
        return True

    def verify(self, variant: Variant) -> None:
        """ValueError unless ``variant`` can be played at this level: blind games need 0 < small
        blind <= big blind; limit games (fixed, spread, and Stud and Soko at any structure) need
        0 < small bet <= big bet."""
        if uses_blinds(variant.game) and not 0 < self.small_blind <= self.big_blind:
            raise ValueError("blind games need 0 < small_blind <= big_blind")
        limit = variant.structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT) or variant.spec.is_stud_like
        if limit and not 0 < self.small_bet <= self.big_bet:
            raise ValueError(f"{variant.code} needs 0 < small_bet <= big_bet")

    def _standard_stakes(self, variant: Variant) -> Stakes:
        if variant.spec.is_stud_like:
            return Stakes.for_stud(self.small_bet, self.big_bet, ante=self.ante, bring_in=self.bring_in)
        if variant.structure is Structure.FIXED_LIMIT:
            return Stakes(
                small_blind=self.small_blind,
                big_blind=self.big_blind,
                small_bet=self.small_bet,
                big_bet=self.big_bet,
                ante=self.ante,
                max_bets=4,
            )
        if variant.structure is Structure.SPREAD_LIMIT:
            maxima = (self.small_bet, self.small_bet, self.big_bet, self.big_bet)[: len(variant.spec.streets)]
            return Stakes(
                small_blind=self.small_blind,
                big_blind=self.big_blind,
                small_bet=self.small_bet,
                big_bet=self.big_bet,
                ante=self.ante,
                spread_maxima=maxima,
            )
        return Stakes.blinds(self.small_blind, self.big_blind, ante=self.ante)  # the cap applies to limit only


@dataclass(frozen=True, slots=True)
class BreakSchedule:
    """Break ``k`` (1, 2, ...) runs from ``k * every_seconds - length_seconds`` to
    ``k * every_seconds`` after the start; ``enabled`` False: no breaks."""

    enabled: bool = True
    every_seconds: float = 3600.0
    length_seconds: float = 300.0

    def break_at(self, elapsed: float) -> int:
        """The number of the break under way ``elapsed`` seconds after the start, else 0."""
        if not self.enabled or elapsed < 0:
            return 0
        k = int(elapsed // self.every_seconds) + 1
        return k if elapsed >= k * self.every_seconds - self.length_seconds else 0

    def break_time_before(self, elapsed: float) -> float:
        """Seconds of breaks between the start and ``elapsed``."""
        if not self.enabled or elapsed <= 0:
            return 0.0
        full = int(elapsed // self.every_seconds)
        into = elapsed - full * self.every_seconds
        return full * self.length_seconds + max(0.0, into - (self.every_seconds - self.length_seconds))

    def first_break(self) -> tuple[float, float]:
        """(start, end) of the first break, in seconds after the start."""
        return self.every_seconds - self.length_seconds, self.every_seconds


@dataclass(frozen=True, slots=True)
class LevelStructure:
    levels: tuple[Level, ...]
    breaks: BreakSchedule = field(default_factory=BreakSchedule)

    def __post_init__(self) -> None:
        if not self.levels:
            raise ValueError("a structure has at least one level")

    def level(self, index: int) -> Level:
        return self.levels[min(index, len(self.levels) - 1)]


_STEPS = (
    2,
    3,
    4,
    5,
    6,
    8,
    10,
    12,
    16,
    20,
    24,
    30,
    40,
    50,
    60,
    80,
    100,
    120,
    160,
    200,
    240,
    300,
    400,
    500,
    600,
    800,
    1000,
    1200,
    1600,
    2000,
    2400,
    3000,
    4000,
    5000,
    6000,
    8000,
    10000,
)


def standard_structure(
    variant: Variant, starting_stack: int, *, level_seconds: float = 600.0, breaks: bool = True, antes_from: int = 5
) -> LevelStructure:
    """A house default structure (the documents leave it to the lobby): the big blind (small
    bet in Stud and limit) starts near 1/75 of the starting stack and rises about 25 % a
    level; standard antes of 10 % of it from level ``antes_from``; Stud: ante 10 % of the
    small bet from the first level (rules/001) and a bring-in of half the small bet."""
    half = max(1, starting_stack // 150)
    levels = []
    for i, step in enumerate(_STEPS):
        bb = step * half
        ante = bb // 10 if i + 1 >= antes_from else 0
        if variant.spec.is_stud_like:
            levels.append(
                Level(
                    small_bet=bb, big_bet=2 * bb, ante=max(1, bb // 10), bring_in=max(1, bb // 2), seconds=level_seconds
                )
            )
        elif variant.structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT):
            levels.append(
                Level(small_blind=bb // 2, big_blind=bb, small_bet=bb, big_bet=2 * bb, ante=ante, seconds=level_seconds)
            )
        else:
            levels.append(Level(small_blind=bb // 2, big_blind=bb, ante=ante, seconds=level_seconds))
    return LevelStructure(tuple(levels), BreakSchedule(enabled=breaks))


__all__ = ["AnteKind", "BreakSchedule", "Level", "LevelStructure", "standard_structure"]
