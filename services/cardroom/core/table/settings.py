"""Table settings per game: table sizes, and the points where the house rules disagree.

Where rules/001 and rules/003 disagree the difference is a :class:`RuleSource` setting;
the default is rules/003 (the card room's own general rules, "almost identical to the rules
used in a regular Las Vegas casino"):

* Omaha and Omaha Hi/Lo: 9 players (rules/003) or 10 (rules/001 "Up to ten players").
* 5-Card Draw: 6 players (rules/003) or 5 (rules/001 "Up to five players").

Hold'em 10, Stud / Stud Hi/Lo / Soko 8 and 2-7 Triple Draw 6 agree everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, unique

from cardroom.core.engine.spec import Game, Structure, stud_ante
from cardroom.core.table.rake import RakeTableChoice


@unique
class RuleSource(Enum):
    """Which house-rules document settles a disagreement."""

    RULES_001 = "rules/001"
    RULES_003 = "rules/003"


@unique
class GameKind(Enum):
    """Cash game or tournament: disconnects, crashes and time banks differ (rules/000, 003)."""

    CASH = "cash"
    TOURNAMENT = "tournament"


@unique
class ButtonRule(Enum):
    """How the button moves when a blind position was vacated.

    ``DEAD_BUTTON`` (default, rules/000 and the standard casino rule): the big blind moves
    to the next player each hand and the button and small blind follow it, so the button
    may stand on an empty seat and the small blind may be missing. ``MOVING_BUTTON``: the
    button moves to the next active player and the blinds are the two players after it.
    """

    DEAD_BUTTON = "dead_button"
    MOVING_BUTTON = "moving_button"


_MAX_PLAYERS_003: dict[Game, int] = {
    Game.HOLDEM: 10,
    Game.OMAHA: 9,
    Game.OMAHA_HILO: 9,
    Game.STUD: 8,
    Game.STUD_HILO: 8,
    Game.SOKO: 8,
    Game.FIVE_CARD_DRAW: 6,
    Game.TRIPLE_DRAW_27: 6,
}
_MAX_PLAYERS_001: dict[Game, int] = {**_MAX_PLAYERS_003, Game.OMAHA: 10, Game.OMAHA_HILO: 10, Game.FIVE_CARD_DRAW: 5}


def max_players(game: Game, source: RuleSource = RuleSource.RULES_003) -> int:
    """Seats at a table of ``game`` by the rules document ``source``."""
    table = _MAX_PLAYERS_001 if source is RuleSource.RULES_001 else _MAX_PLAYERS_003
    return table[game]


def is_limit(structure: Structure) -> bool:
    """Fixed and spread limit (the structures with artificial all-in, rules/003)."""
    return structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)


def uses_blinds(game: Game) -> bool:
    """Blind games have a button and blinds; Stud and Soko use antes and a bring-in."""
    return game not in (Game.STUD, Game.STUD_HILO, Game.SOKO)


@dataclass(frozen=True, slots=True)
class TableSettings:
    """Everything fixed for the life of a table. Money in integer cents (or play chips).

    ``seat_count`` defaults to the game's table size under ``rule_source``.
    ``action_seconds``: the action clock per turn; ``draw_seconds``: the draw clock (30 s,
    rules/003); ``time_bank_seconds``: extra time (tournaments, rules/000; 0 = none).
    ``rake_table``: which rules/003 rake table the default rake uses (``AUTO``: by game and
    stakes, the Big Bet Poker table for its games; see :mod:`.rake`).
    """

    game: Game
    structure: Structure
    kind: GameKind = GameKind.CASH
    play_money: bool = False
    rule_source: RuleSource = RuleSource.RULES_003
    seat_count: int = 0
    button_rule: ButtonRule = ButtonRule.DEAD_BUTTON
    action_seconds: float = 30.0
    draw_seconds: float = 30.0
    time_bank_seconds: float = 0.0
    time_bank_when_disconnected: bool = False
    """Extra time for a disconnected player too: rules/000 'Disconnects' protects "players who are
    disconnected during the final stages of a tournament, by allowing Extra Time to reconnect";
    its 'Extra time' paragraph activates it only "if a player has an active connection to the game"
    (the default)."""
    all_in_allowance: int = 2
    rake_table: RakeTableChoice = RakeTableChoice.AUTO
    sit_out_after_timeouts: int = 2
    """Cash games: a player who times out this many turns in a row is sat out (0 = never)."""
    sit_out_after_missed_orbit: bool = True
    """Cash games: a player disconnected for a whole orbit (as many hands as were dealt in) is sat out."""
    stand_up_after_seconds: float = 600.0
    """Cash games: a player sat out this long is stood up, his chips back to his account (0 = never)."""

    def __post_init__(self) -> None:
        if self.seat_count == 0:
            object.__setattr__(self, "seat_count", max_players(self.game, self.rule_source))
        top = max(max_players(self.game, s) for s in RuleSource)
        if not 2 <= self.seat_count <= top:
            raise ValueError(f"{self.seat_count} seats is outside 2..{top} for {self.game.name}")


def stud_ante_for(game: Game, small_bet: int, ante: int | None, *, no_ante: bool = False) -> int:
    """The ante of a Stud / Soko table: ``ante`` when given; when not, derived ("normally 10% of
    the minimum bet", rules/000, 001, 003: :func:`~cardroom.core.engine.spec.stud_ante`). Stud is
    played with an ante, so an explicit 0 (or ``no_ante`` with an ante) is refused unless the
    operator chose a table without one (``no_ante``). Raises ``ValueError`` saying why."""
    if uses_blinds(game):
        raise ValueError(f"{game.name} uses blinds, not a stud ante")
    if no_ante:
        if ante:
            raise ValueError(f"an ante of {ante} was given for a table without an ante")
        return 0
    if ante is None:
        return stud_ante(small_bet)
    if ante <= 0:
        raise ValueError(
            "stud is played with an ante (normally 10% of the minimum bet): "
            "leave it unset to derive it, or choose a table without an ante"
        )
    return ante
