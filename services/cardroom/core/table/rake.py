"""The rake (rules/003 'RAKE'): tables by pot size x players dealt in, no flop no drop.

* Play-money ("FunMoney") tables are free: :class:`NoRake`.
* Only players dealt cards count ("active players").
* **No flop, no drop**: a pot is raked only when the game's drop street was reached —
  the flop in Hold'em/Omaha, the 3rd card in Soko, the 4th card in Stud, a draw in the
  draw games: the engine's ``Hand.rake_eligible()`` decides, :func:`hand_rake` applies it.
* The rake is looked up on the **total** of all pots of the hand (after any uncalled bet is
  returned), then taken from the **main pot first**, the rest from the side pots in the order
  they were made (the engine does, with ``cardroom.core.engine.pots.take_from_pots``) — a
  player all-in for the main pot pays his share of the rake before players contesting only
  side pots.
* Amounts are in cents. Brackets are read by their lower bound, so a pot between two listed
  amounts (3.60) belongs to the lower bracket (3.50: no rake); the tables move in 0.25 steps.
* Heads-up tables use the "Heads up" column; other tables the column of the number of
  players dealt in (2-3, 4-5, 6-10). The Big Bet Poker table has no heads-up column and no
  rake below 50.00 (its first bracket).
* **Which table** (rules/003 'Big Bet Poker': "Due to high costs to run the games another rake
  table is used for Big Bet Poker. The games included in Big Bet Poker is: 2-7 3-Draw
  €100/€200, Omaha Hi/Lo €100/€200, Omaha PL €15/€25 and 5-Draw PL €25/€50"):
  :func:`rake_table_for` picks the Big Bet Poker table for those games and stakes
  (:data:`BIG_BET_POKER_GAMES`) and the standard table otherwise; an operator may choose
  either table outright (:class:`RakeTableChoice`, ``TableSettings.rake_table``).
* :class:`PercentageRake`: a generic alternative, a percentage (basis points) of the pot
  rounded down to the step, capped.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique
from typing import Protocol

from cardroom.core.engine.spec import Game, Stakes, Structure


class RakePolicy(Protocol):
    """How much rake a pot pays."""

    def rake(self, pot: int, players_dealt: int) -> int:
        """Rake of a rakable pot of ``pot`` cents with ``players_dealt`` players dealt in."""
        ...

    def cap(self, players_dealt: int) -> int:
        """The most this policy ever takes from one hand with ``players_dealt`` players."""
        ...


@dataclass(frozen=True, slots=True)
class RakeColumn:
    """Players-dealt-in range of one column (inclusive)."""

    low: int
    high: int

    def __contains__(self, players: object) -> bool:
        return isinstance(players, int) and self.low <= players <= self.high


@dataclass(frozen=True, slots=True)
class RakeTable:
    """A rake table: rows ``(pot_from, amounts per column)``, lowest bracket first."""

    name: str
    columns: tuple[RakeColumn, ...]
    rows: tuple[tuple[int, tuple[int, ...]], ...]
    heads_up_column: int | None = None
    """The column of heads-up tables, skipped for the other tables."""

    def column(self, players_dealt: int, heads_up_table: bool = False) -> int:
        """The column for ``players_dealt`` players dealt in."""
        if heads_up_table and self.heads_up_column is not None:
            return self.heads_up_column
        for i, col in enumerate(self.columns):
            if i != self.heads_up_column and players_dealt in col:
                return i
        raise ValueError(f"{players_dealt} players dealt in is not in the {self.name}")

    def lookup(self, pot: int, column: int) -> int:
        amount = 0
        for pot_from, amounts in self.rows:
            if pot >= pot_from:
                amount = amounts[column]
            else:
                break
        return amount


STANDARD_RAKE_TABLE = RakeTable(
    "rules/003 rake table",
    # 2 players (heads-up tables), then 6-10 handed tables: 2-3, 4-5, 6-10 players
    (RakeColumn(2, 2), RakeColumn(2, 3), RakeColumn(4, 5), RakeColumn(6, 10)),
    (
        (0, (0, 0, 0, 0)),
        (375, (25, 25, 25, 25)),
        (1000, (25, 25, 25, 50)),
        (1500, (25, 25, 50, 75)),
        (2000, (25, 25, 75, 100)),
        (3000, (50, 50, 100, 150)),
        (4000, (50, 75, 150, 200)),
        (6000, (50, 75, 200, 250)),
        (100000, (75, 75, 200, 250)),
    ),
    heads_up_column=0,
)

BIG_BET_RAKE_TABLE = RakeTable(
    "rules/003 Big Bet Poker rake table",
    (RakeColumn(2, 2), RakeColumn(3, 3), RakeColumn(4, 5), RakeColumn(6, 10)),
    (
        (0, (0, 0, 0, 0)),
        (5000, (50, 75, 100, 200)),
        (10000, (50, 75, 200, 250)),
        (50000, (50, 125, 250, 300)),
        (100000, (75, 150, 350, 500)),
        (200000, (150, 250, 400, 600)),
        (300000, (200, 300, 500, 800)),
    ),
)


@unique
class RakeTableChoice(Enum):
    """Which rules/003 rake table a table uses: ``AUTO`` selects by game and stakes
    (:func:`rake_table_for`); ``STANDARD`` / ``BIG_BET`` are an operator's choice."""

    AUTO = "auto"
    STANDARD = "standard"
    BIG_BET = "big_bet"


BIG_BET_POKER_GAMES: tuple[tuple[Game, Structure | None, int, int], ...] = (
    (Game.TRIPLE_DRAW_27, None, 10000, 20000),  # 2-7 3-Draw €100/€200
    (Game.OMAHA_HILO, None, 10000, 20000),  # Omaha Hi/Lo €100/€200
    (Game.OMAHA, Structure.POT_LIMIT, 1500, 2500),  # Omaha PL €15/€25
    (Game.FIVE_CARD_DRAW, Structure.POT_LIMIT, 2500, 5000),  # 5-Draw PL €25/€50
)
"""rules/003 'Big Bet Poker' games: (game, structure or None for any, low, high) in cents."""


def stakes_name(structure: Structure, stakes: Stakes) -> tuple[int, int]:
    """The (low, high) numbers naming a table's stakes: the small and big bet of limit and
    Stud games ("€100/€200" 2-7 Triple Draw), the blinds of big-bet blind games ("€15/€25"
    Omaha PL)."""
    if structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT) or not stakes.big_blind:
        return stakes.small_bet, stakes.big_bet
    return stakes.small_blind, stakes.big_blind


def is_big_bet_poker(game: Game, structure: Structure, low: int, high: int) -> bool:
    """True for the games and stakes rules/003 lists under 'Big Bet Poker'."""
    return any(
        g is game and (s is None or s is structure) and (lo, hi) == (low, high) for g, s, lo, hi in BIG_BET_POKER_GAMES
    )


def rake_table_for(
    game: Game, structure: Structure, low: int, high: int, choice: RakeTableChoice = RakeTableChoice.AUTO
) -> RakeTable:
    """The rake table of a ``game``/``structure`` table at ``low``/``high`` stakes (cents)."""
    if choice is RakeTableChoice.STANDARD:
        return STANDARD_RAKE_TABLE
    if choice is RakeTableChoice.BIG_BET:
        return BIG_BET_RAKE_TABLE
    return BIG_BET_RAKE_TABLE if is_big_bet_poker(game, structure, low, high) else STANDARD_RAKE_TABLE


@dataclass(frozen=True, slots=True)
class TableRake:
    """Rake by a rules/003 table; ``heads_up_table`` selects the heads-up column."""

    table: RakeTable = STANDARD_RAKE_TABLE
    heads_up_table: bool = False

    def _column(self, players_dealt: int) -> int:
        return self.table.column(players_dealt, self.heads_up_table)

    def rake(self, pot: int, players_dealt: int) -> int:
        if pot < 0:
            raise ValueError("a pot is never negative")
        return min(self.table.lookup(pot, self._column(players_dealt)), pot)

    def cap(self, players_dealt: int) -> int:
        column = self._column(players_dealt)
        return max(amounts[column] for _, amounts in self.table.rows)


@dataclass(frozen=True, slots=True)
class PercentageRake:
    """``basis_points`` / 10000 of the pot, rounded down to ``step``, at most ``maximum``."""

    basis_points: int = 500
    maximum: int = 300
    step: int = 25

    def __post_init__(self) -> None:
        if self.basis_points < 0 or self.maximum < 0 or self.step <= 0:
            raise ValueError("rake percentage, cap and step must be non-negative (step positive)")

    def rake(self, pot: int, players_dealt: int) -> int:
        raw = pot * self.basis_points // 10000
        return min(raw - raw % self.step, self.maximum, pot)

    def cap(self, players_dealt: int) -> int:
        return self.maximum


@dataclass(frozen=True, slots=True)
class NoRake:
    """Play-money tables are free of charge (rules/003)."""

    def rake(self, pot: int, players_dealt: int) -> int:
        return 0

    def cap(self, players_dealt: int) -> int:
        return 0


def hand_rake(policy: RakePolicy, pot: int, players_dealt: int, rakable: bool) -> int:
    """Rake of a finished hand: zero unless the drop street was reached (rules/003); ``rakable``
    is the engine's ``Hand.rake_eligible()``."""
    return policy.rake(pot, players_dealt) if rakable else 0
