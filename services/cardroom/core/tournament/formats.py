"""The formats of rules/000 'Tournaments Types and Features' as ready-made configurations.

Multi-table, Sit & Go (one table or several; starts when the preset number registered),
Heads-up (two players; with more entrants a heads-up shoot-out), Re-buy & Add-on,
Freeze-out (every format without re-buys), Shoot-out, Satellite and Freeroll. Every game of
the engine can be the tournament game; Fixed, Pot and No Limit.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum, unique

from cardroom.core.engine import Variant
from cardroom.core.table.settings import max_players
from cardroom.core.tournament.config import AddOnRules, RebuyRules, SatelliteRules, ShootoutRules, TournamentConfig


@unique
class Format(Enum):
    MTT = "mtt"
    SNG = "sng"
    HEADS_UP = "headsup"
    REBUY = "rebuy"
    SHOOTOUT = "shootout"
    SATELLITE = "satellite"
    FREEROLL = "freeroll"


def tournament_config(
    fmt: Format,
    variant: Variant,
    entrants: int,
    *,
    buy_in: int = 1000,
    fee: int = 100,
    starting_stack: int = 1500,
    **overrides: object,
) -> TournamentConfig:
    """A configuration of ``fmt`` for ``entrants`` players (scheduled events start at 0); a
    shoot-out's tables seat the event's ``seat_count`` when it is given, else the game's most."""
    asked = overrides.get("seat_count")
    seats = asked if isinstance(asked, int) and asked > 0 else max_players(variant.game)
    base = TournamentConfig(
        variant, starting_stack=starting_stack, buy_in=buy_in, fee=fee, name=fmt.value, max_entrants=None
    )
    if fmt is Format.MTT:
        cfg = base
    elif fmt is Format.SNG:
        cfg = replace(base, start_at=None, max_entrants=entrants, min_entrants=entrants, late_registration_seconds=0.0)
    elif fmt is Format.HEADS_UP:
        if entrants == 2:
            cfg = replace(base, start_at=None, max_entrants=2, min_entrants=2, late_registration_seconds=0.0)
        else:
            cfg = replace(base, shootout=ShootoutRules(table_size=2), late_registration_seconds=0.0)
    elif fmt is Format.REBUY:
        cfg = replace(base, rebuys=RebuyRules(), add_on=AddOnRules())
    elif fmt is Format.SHOOTOUT:
        cfg = replace(base, shootout=ShootoutRules(table_size=min(10, seats)), late_registration_seconds=0.0)
    elif fmt is Format.SATELLITE:
        cfg = replace(base, satellite=SatelliteRules(seat_value=10 * buy_in, target="target event"))
    else:
        cfg = replace(base, buy_in=0, fee=0, guarantee=100 * max(1, entrants))
    return replace(cfg, **overrides)  # type: ignore[arg-type]


__all__ = ["Format", "tournament_config"]
