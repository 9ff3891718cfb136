"""Games, betting structures, stakes and the street-by-street shape of each game.

Disagreements between the house rules are settings here, defaulting to the standard
casino rule:

* Fixed-limit cap: ``Stakes.max_bets`` = 4 (bet + 3 raises, rules/000, 002, 003). The big
  blind counts as the round's first bet (``blind_counts_as_bet=True``, the casino rule;
  pokerkit counts only voluntary raises — set it False to match pokerkit).
* Stud bring-in: rules/003 says "usually 2 x the ante", rules/000 "half the small bet";
  ``Stakes.for_stud`` defaults to half the small bet rounded down (the $4-$8 → $2 example)
  and an ante of 10% of the small bet (rules/001).
* Players per hand: the engine accepts the larger figure where the documents differ
  (Omaha 10 in rules/001, 9 in rules/003; 5-Card Draw 5 in rules/001, 6 in rules/003); the
  table layer's seat count is the house setting.
* Small blind of limit games (:class:`SmallBlindRule`): half the lower limit rounded down
  to the nearest dollar (rules/000, rules/002 'Button and Blinds': "$3-$6 game, the small
  blind is $1") by default; ``EXACTLY_HALF`` is rules/002 [1] ("blinds equal to exactly
  half the limit"). ``Stakes.limit(..., dollar=100)`` names the dollar in chips (cents).
* Chip denomination: ``Stakes.chip`` is the table's smallest chip (rules/003: "an odd (25
  cent) chip"); bets and raises are whole chips (an all-in for an odd amount excepted),
  and pots are split in whole chips.
* Forced bets: ``Stakes.ante`` (every player), ``Stakes.big_blind_ante`` (posted by the
  big blind for the table) and ``Stakes.button_ante`` (posted by the button): the last two
  are dead money in the main pot (:class:`~cardroom.core.engine.events.ForcedKind`).
* Spread limit (rules/003): a bet is at least the big blind and at most the round's limit;
  a raise at least matches the previous raise and at most the limit; a player's total
  bet in a round may not exceed 3 x the limit, and a raise *to* that cap may be smaller
  than the previous raise ("except when the pot is being capped").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, unique
from typing import Any


@unique
class Structure(Enum):
    """Betting structures of rules/002-003."""

    FIXED_LIMIT = "F"
    SPREAD_LIMIT = "S"
    POT_LIMIT = "P"
    HALF_POT_LIMIT = "H"
    NO_LIMIT = "N"


@unique
class Opening(Enum):
    """Who opens a betting round."""

    POSITION = "position"  # pre-flop: left of the big blind; later: left of the button
    BRING_IN = "bring_in"  # Stud/Soko first round: the bring-in seat
    HIGH_SHOWING = "high_showing"  # Stud/Soko later rounds: the highest showing hand


@dataclass(frozen=True, slots=True)
class Street:
    """One dealing step followed by (usually) a betting round.

    ``down``/``up``: hole cards dealt to each player face down / face up; ``board``:
    community cards; ``draw``: a draw precedes the betting; ``big_bet``: fixed limit uses
    the big bet on this round; ``spread_index``: which spread-limit maximum applies.
    """

    name: str
    down: int = 0
    up: int = 0
    board: int = 0
    draw: bool = False
    big_bet: bool = False
    opening: Opening = Opening.POSITION
    burn: bool = True


@unique
class Game(Enum):
    """The games of rules/000, 001, 003. The value is the PHH game letters."""

    HOLDEM = "T"
    OMAHA = "O"
    OMAHA_HILO = "O/8"
    STUD = "7S"
    STUD_HILO = "7S/8"
    FIVE_CARD_DRAW = "5CD"
    TRIPLE_DRAW_27 = "2L3D"
    SOKO = "SK"


_HOLDEM_STREETS = (
    Street("preflop", down=2, burn=False),
    Street("flop", board=3),
    Street("turn", board=1, big_bet=True),
    Street("river", board=1, big_bet=True),
)
_OMAHA_STREETS = (Street("preflop", down=4, burn=False),) + _HOLDEM_STREETS[1:]
_STUD_STREETS = (
    Street("third", down=2, up=1, opening=Opening.BRING_IN, burn=False),
    Street("fourth", up=1, opening=Opening.HIGH_SHOWING),
    Street("fifth", up=1, big_bet=True, opening=Opening.HIGH_SHOWING),
    Street("sixth", up=1, big_bet=True, opening=Opening.HIGH_SHOWING),
    Street("seventh", down=1, big_bet=True, opening=Opening.HIGH_SHOWING),
)
_SOKO_STREETS = (
    Street("second", down=1, up=1, opening=Opening.BRING_IN, burn=False),
    Street("third", up=1, opening=Opening.HIGH_SHOWING),
    Street("fourth", up=1, big_bet=True, opening=Opening.HIGH_SHOWING),
    Street("fifth", up=1, big_bet=True, opening=Opening.HIGH_SHOWING),
)
_DRAW5_STREETS = (Street("predraw", down=5, burn=False), Street("draw", draw=True, big_bet=True, burn=False))
_TRIPLE_DRAW_STREETS = (
    Street("predraw", down=5, burn=False),
    Street("first_draw", draw=True, burn=False),
    Street("second_draw", draw=True, big_bet=True, burn=False),
    Street("third_draw", draw=True, big_bet=True, burn=False),
)


@dataclass(frozen=True, slots=True)
class GameSpec:
    """The fixed shape of a game: streets, rankings, seats, and how it is dealt."""

    game: Game
    streets: tuple[Street, ...]
    max_players: int
    hi_lo: bool = False
    uses_button: bool = True
    """Blind games have a button; Stud and Soko are ante + bring-in games."""
    bring_in_highest: bool = False
    """Soko and pot-limit Stud bring in on the highest card (rules/003)."""

    @property
    def is_stud_like(self) -> bool:
        return not self.uses_button

    @property
    def has_board(self) -> bool:
        return any(s.board for s in self.streets)

    @property
    def is_draw(self) -> bool:
        return any(s.draw for s in self.streets)


SPECS: dict[Game, GameSpec] = {
    Game.HOLDEM: GameSpec(Game.HOLDEM, _HOLDEM_STREETS, 10),
    Game.OMAHA: GameSpec(Game.OMAHA, _OMAHA_STREETS, 10),
    Game.OMAHA_HILO: GameSpec(Game.OMAHA_HILO, _OMAHA_STREETS, 10, hi_lo=True),
    Game.STUD: GameSpec(Game.STUD, _STUD_STREETS, 8, uses_button=False),
    Game.STUD_HILO: GameSpec(Game.STUD_HILO, _STUD_STREETS, 8, hi_lo=True, uses_button=False),
    Game.FIVE_CARD_DRAW: GameSpec(Game.FIVE_CARD_DRAW, _DRAW5_STREETS, 6),
    Game.TRIPLE_DRAW_27: GameSpec(Game.TRIPLE_DRAW_27, _TRIPLE_DRAW_STREETS, 6),
    Game.SOKO: GameSpec(Game.SOKO, _SOKO_STREETS, 8, uses_button=False, bring_in_highest=True),
}


@unique
class SmallBlindRule(Enum):
    """How a limit game's small blind follows from the lower limit (see the module docstring)."""

    ROUND_DOWN = "round_down"  # rules/000, rules/002 'Button and Blinds': "rounded down to the nearest dollar"
    EXACTLY_HALF = "exactly_half"  # rules/002 [1]: "exactly half the limit they are playing"


@dataclass(frozen=True, slots=True)
class Stakes:
    """Amounts in chips. Blind games use small/big blind; Stud/Soko use ante + bring-in.

    ``small_bet``/``big_bet``: fixed-limit bet sizes (and the minimum bet of big-bet
    games is ``big_blind`` or ``bring_in``). ``spread_maxima``: spread-limit maximum per
    round, e.g. (1, 1, 2, 3) for $1-2-3 (rules/003).
    """

    small_blind: int = 0
    big_blind: int = 0
    small_bet: int = 0
    big_bet: int = 0
    ante: int = 0
    bring_in: int = 0
    spread_maxima: tuple[int, ...] = ()
    max_bets: int | None = 4
    """Fixed/spread limit: bets per round including the bet (bet + 3 raises); None = no cap."""
    blind_counts_as_bet: bool = True
    spread_cap_multiple: int = 3
    big_blind_ante: int = 0
    """An ante the big blind posts for the whole table (dead money in the main pot)."""
    button_ante: int = 0
    """An ante the button posts for the whole table (dead money in the main pot)."""
    chip: int = 1
    """The smallest chip: bets, raises and pot splits are whole chips (rules/003: 25 cents)."""

    def __post_init__(self) -> None:
        if self.chip <= 0:
            raise ValueError(f"the chip denomination must be positive, not {self.chip}")

    @classmethod
    def limit(
        cls,
        small_bet: int,
        big_bet: int | None = None,
        *,
        dollar: int = 1,
        small_blind_rule: SmallBlindRule = SmallBlindRule.ROUND_DOWN,
        **kw: Any,
    ) -> Stakes:
        """Limit blinds from the lower limit: big blind = lower limit, small blind = half of it
        rounded down to the nearest ``dollar`` (rules/000, 002: $4-$8 → $2/$4, $3-$6 → $1/$3;
        in cents pass ``dollar=100``), or exactly half (``SmallBlindRule.EXACTLY_HALF``,
        rules/002 [1]: $3-$6 → $1.50). Below one dollar the small blind is half the bet
        rounded down to the chip (a 0.25/0.50 game's small blind is not 0)."""
        big = 2 * small_bet if big_bet is None else big_bet
        chip = int(kw.get("chip", 1))
        if small_blind_rule is SmallBlindRule.EXACTLY_HALF or small_bet // 2 < dollar:
            small = small_bet // 2 // chip * chip
        else:
            small = small_bet // 2 // dollar * dollar
        return cls(small_blind=small, big_blind=small_bet, small_bet=small_bet, big_bet=big, **kw)

    @classmethod
    def blinds(cls, small_blind: int, big_blind: int, **kw: Any) -> Stakes:
        """Big-bet (no-limit / pot-limit / half-pot) blinds."""
        return cls(small_blind=small_blind, big_blind=big_blind, small_bet=big_blind, big_bet=big_blind, **kw)

    @classmethod
    def for_stud(
        cls,
        small_bet: int,
        big_bet: int | None = None,
        *,
        ante: int | None = None,
        bring_in: int | None = None,
        **kw: Any,
    ) -> Stakes:
        """Stud/Soko stakes: ante defaults to 10% of the small bet (rules/001: $1 in $10-$20;
        :func:`stud_ante`), bring-in to half the small bet (rules/000: $2 in $4-$8)."""
        big = 2 * small_bet if big_bet is None else big_bet
        return cls(
            small_bet=small_bet,
            big_bet=big,
            ante=stud_ante(small_bet) if ante is None else ante,
            bring_in=small_bet // 2 if bring_in is None else bring_in,
            **kw,
        )

    @property
    def min_bet(self) -> int:
        """Minimum bet of big-bet structures: the big blind or the bring-in (rules/003)."""
        return self.big_blind or self.bring_in or self.small_bet


def stud_ante(small_bet: int) -> int:
    """The Stud ante when none is given: "normally 10% of the minimum bet" (rules/000, 001, 003),
    rounded down, and at least one chip (so a small game still has an ante)."""
    return max(1, small_bet // 10) if small_bet > 0 else 0


@dataclass(frozen=True, slots=True)
class Variant:
    """A game played with a betting structure, e.g. No-Limit Hold'em."""

    game: Game
    structure: Structure
    spec: GameSpec = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "spec", SPECS[self.game])

    @property
    def code(self) -> str:
        """PHH-style code: structure letter + game letters, e.g. ``NT``, ``FO/8``, ``F7S``."""
        return self.structure.value + self.game.value

    @classmethod
    def parse(cls, code: str) -> Variant:
        """Parse a code such as ``NT``, ``PO``, ``FO/8``, ``F7S/8``, ``F2L3D``, ``NSK``."""
        code = code.strip().upper().replace("5CD", "5CD")
        for s in Structure:
            if code.startswith(s.value):
                rest = code[len(s.value) :]
                for g in Game:
                    if rest == g.value.upper():
                        return cls(g, s)
        raise ValueError(f"unknown variant code {code!r}")


def default_stakes(variant: Variant, unit: int = 2) -> Stakes:
    """Reasonable stakes for simulation: ``unit`` = big blind / small bet."""
    if variant.spec.is_stud_like:
        if variant.structure is Structure.SPREAD_LIMIT:
            # a spread from the bring-in up to the round's maximum (the small bet, then the
            # big bet from the third betting round on, as in fixed-limit Stud)
            return Stakes.for_stud(
                unit * 5,
                ante=max(1, unit // 2),
                bring_in=unit,
                spread_maxima=spread_maxima(variant, unit * 5, unit * 10),
            )
        return Stakes.for_stud(unit * 5, ante=max(1, unit // 2), bring_in=unit)
    if variant.structure is Structure.FIXED_LIMIT:
        return Stakes.limit(unit)
    if variant.structure is Structure.SPREAD_LIMIT:
        return Stakes(
            small_blind=unit // 2,
            big_blind=unit,
            small_bet=unit,
            big_bet=unit,
            spread_maxima=(unit, unit, 2 * unit, 3 * unit)[: len(variant.spec.streets)] or (unit,),
        )
    return Stakes.blinds(unit // 2, unit)


def spread_maxima(variant: Variant, small: int, big: int) -> tuple[int, ...]:
    """Per-round spread-limit maxima from a small and a big maximum: the small one on the
    rounds where fixed limit uses the small bet, the big one after (rules/003's €1-2-3
    names each round instead: pass ``Stakes.spread_maxima`` directly for that)."""
    return tuple(big if street.big_bet else small for street in variant.spec.streets)
