"""Table and cash-game rules across hands (issue 5): pure, time and commands as inputs.

* :mod:`.settings` — table sizes per game, rule-source and button-rule settings.
* :mod:`.buyin` — table stakes, minimum / maximum buy-in.
* :mod:`.rake` — rake tables, no flop no drop, rake from the main pot first.
* :mod:`.clock` — the action clock, extra time, timeout decisions.
* :mod:`.disconnect` — the artificial all-in allowance (N per rolling 24 hours).
* :mod:`.autodraw` — the automatic draw of a disconnected player.
* :mod:`.crash` — crash recovery (cash: cancel and close; tournament: roll back).
* :mod:`.seating` — seats, button, blinds, new players and missed blinds across hands.
* :mod:`.table` — :class:`Table`: hands through the engine, commands and time as inputs.
* :mod:`.session` — a simulated cash-game session (``cardroom session-simulate``).
"""

from cardroom.core.table.autodraw import AutoDraw, AutoDrawRule, auto_draw, lowball_auto_draw
from cardroom.core.table.buyin import BuyInLimits, BuyInRule, buy_in_limits
from cardroom.core.table.clock import TimeoutContext, TimeoutDecision, TurnClock, timeout_decision
from cardroom.core.table.crash import CrashRecovery, recover_from_crash
from cardroom.core.table.disconnect import AllInAllowance
from cardroom.core.table.rake import (
    BIG_BET_RAKE_TABLE,
    STANDARD_RAKE_TABLE,
    NoRake,
    PercentageRake,
    RakePolicy,
    TableRake,
    hand_rake,
)
from cardroom.core.table.seating import HandPlan, Seating, SeatState
from cardroom.core.table.settings import ButtonRule, GameKind, RuleSource, TableSettings, max_players
from cardroom.core.table.table import HandRecord, RolledBack, Table, TableError

__all__ = [
    "AllInAllowance",
    "AutoDraw",
    "HandRecord",
    "RolledBack",
    "Table",
    "TableError",
    "AutoDrawRule",
    "BIG_BET_RAKE_TABLE",
    "ButtonRule",
    "BuyInLimits",
    "BuyInRule",
    "CrashRecovery",
    "GameKind",
    "HandPlan",
    "NoRake",
    "PercentageRake",
    "RakePolicy",
    "RuleSource",
    "STANDARD_RAKE_TABLE",
    "SeatState",
    "Seating",
    "TableRake",
    "TableSettings",
    "TimeoutContext",
    "TimeoutDecision",
    "TurnClock",
    "auto_draw",
    "buy_in_limits",
    "hand_rake",
    "lowball_auto_draw",
    "max_players",
    "recover_from_crash",
    "timeout_decision",
]
