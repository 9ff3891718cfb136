"""Tournaments in the rules core (rules/000 'Tournaments', 'Tournament Rules', the glossary,
the cancellation policy and the payout structure; issue 11). Pure: commands and time are
inputs, seat draws come from the ``random.Random`` passed in, decks are arguments.

* :mod:`.payouts` — the payout structure table (every column), prize amounts in cents,
  ties, satellite seats, guaranteed pools.
* :mod:`.cancellation` — the three cancellation policies (before the start, 50/50, in the money).
* :mod:`.icm` — Malmuth-Harville equity (lobby information, never a deal).
* :mod:`.structure` — levels (blinds / antes / bring-in / limits, ante kinds) and breaks.
* :mod:`.seating` — the start draw, breaking and balancing tables, who moves where.
* :mod:`.elimination` — elimination order, places and ties.
* :mod:`.registration` — registration, late registration and unregistration checks.
* :mod:`.rebuys` — the re-buy period, re-buy eligibility, the add-on window.
* :mod:`.handforhand` — when hand-for-hand applies, when a synchronized hand is over.
* :mod:`.events` — typed tournament events.
* :mod:`.config` / :mod:`.formats` — a tournament's settings; MTT, Sit & Go, heads-up,
  re-buy, shoot-out, satellite, freeroll.
* :mod:`.tournament` — the :class:`Tournament` state machine playing its tables through
  :class:`cardroom.core.table.Table`.
* :mod:`.simulation` — a whole tournament of random bots (``cardroom simulate --tournament``).
"""

from cardroom.core.tournament.cancellation import (
    CancellationPayout,
    CancellationPolicy,
    EntryPaid,
    GuaranteeCancellation,
    Payment,
)
from cardroom.core.tournament.config import AddOnRules, RebuyRules, SatelliteRules, ShootoutRules, TournamentConfig
from cardroom.core.tournament.formats import Format, tournament_config
from cardroom.core.tournament.icm import icm_equity
from cardroom.core.tournament.payouts import PAYOUT_TABLE, place_shares, prizes
from cardroom.core.tournament.structure import AnteKind, BreakSchedule, Level, LevelStructure
from cardroom.core.tournament.tournament import PlayerStatus, Status, Tournament, TournamentError

__all__ = [
    "PAYOUT_TABLE",
    "AddOnRules",
    "AnteKind",
    "BreakSchedule",
    "CancellationPayout",
    "CancellationPolicy",
    "EntryPaid",
    "Format",
    "GuaranteeCancellation",
    "Level",
    "LevelStructure",
    "Payment",
    "PlayerStatus",
    "RebuyRules",
    "SatelliteRules",
    "ShootoutRules",
    "Status",
    "Tournament",
    "TournamentConfig",
    "TournamentError",
    "icm_equity",
    "place_shares",
    "prizes",
    "tournament_config",
]
