"""The tournament service's port to the tables that play its hands (:class:`TablePort`), and
:func:`sync`, which turns the core's table events into port commands.

The rules core's :class:`Tournament` decides everything about tables — the draw, breaking and
balancing, who moves where, levels, hand-for-hand — and the port carries it out: open a table
with given stacks (no wallet buy-in, no rake), set a level's stakes, seat / move / remove
players between hands, add re-buy and add-on chips, pause for hand-for-hand and breaks, close.
Hand results come back as events (``TablePort.hands_ended``), not by polling.

Implementations: :class:`tournament.inprocess.InProcessTables` (today: the core's own tables,
played by the service's auto policy) and, next, the dealer over gRPC + Kafka, whose contract is
``protos/cardroom/v1/tournament_tables.proto`` (docs/tournament.md):
:class:`tournament.dealer_tables.DealerTables`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from cardroom.core.engine import Stakes
from cardroom.core.tournament import events as ev


@dataclass(frozen=True, slots=True)
class HandAction:
    """One action of a hand played elsewhere, as the core's ``Table.act`` takes it (``amount``: the
    "to" amount of a bet / raise / complete, else None)."""

    seat: int
    kind: str
    amount: int | None = None
    discards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HandEnded:
    """One hand over at a tournament table (``busted``: seats that ended with no chips)."""

    tournament_id: str
    table: int
    number: int
    starting: dict[int, int]
    ending: dict[int, int]
    busted: tuple[int, ...]
    rolled_back: bool = False
    actions: tuple[HandAction, ...] = ()
    """The dealer's tables: every action in order (a core dealt the same deck replays the hand)."""
    sequence: int = 0
    """The dealer's tables: the event's sequence at its table (rises with every event there, across
    dealer restarts and moves); 0 from the in-process tables."""
    time_banks: dict[int, float] = field(default_factory=dict)
    """The dealer's tables: each seat's Extra Time left at the end of the hand (the core keeps it for
    the player's next table); empty from the in-process tables, whose core counts it itself."""


class TablePort(Protocol):
    def open_table(
        self,
        tournament_id: str,
        table: int,
        seats: dict[int, tuple[str, int]],
        stakes: Stakes,
        seat_count: int = 0,
        time_banks: dict[int, float] | None = None,
    ) -> None:
        """``seat_count``: the table's size, 0 = the tournament's (a shoot-out's may differ);
        ``time_banks``: seat -> the Extra Time its player carries from his last table (a shoot-out's
        next round), the others a full time bank."""
        ...

    def set_level(self, tournament_id: str, table: int, stakes: Stakes) -> None: ...

    def seat_player(self, tournament_id: str, table: int, seat: int, player: str, chips: int) -> None: ...

    def move_player(
        self, tournament_id: str, from_table: int, from_seat: int, to_table: int, to_seat: int, reason: str
    ) -> None: ...

    def remove_player(self, tournament_id: str, table: int, seat: int) -> None: ...

    def kept_for_rebuy(self, tournament_id: str, table: int, seat: int) -> None:
        """The player at ``seat`` busted and may still re-buy: his seat is kept (a re-buy seats him again)."""
        ...

    def add_chips(self, tournament_id: str, table: int, seat: int, chips: int) -> None: ...

    def pause(self, tournament_id: str, table: int, reason: str) -> None: ...

    def resume(self, tournament_id: str, table: int, reason: str) -> None: ...

    def close_table(self, tournament_id: str, table: int) -> None: ...

    def hands_ended(self) -> list[HandEnded]:
        """Hand results since the last call (the event stream the tournament learns from)."""
        ...


def sync(
    port: TablePort,
    tournament_id: str,
    event: ev.TournamentEvent,
    stakes: Stakes,
    seat_of: dict[str, tuple[int, int]],
    chips: dict[str, int],
) -> None:
    """Carry out one core event on the tables. ``seat_of``: player -> (table, seat) before the
    event; ``chips``: player -> chips (a new table's stacks)."""
    if isinstance(event, ev.TableOpened):
        port.open_table(
            tournament_id,
            event.table,
            {s: (p, chips.get(p, 0)) for s, p in event.seats},
            stakes,
            event.seat_count,
            dict(event.time_banks) or None,
        )
    elif isinstance(event, ev.LevelUp):
        for table in sorted({t for t, _ in seat_of.values()}):
            port.set_level(tournament_id, table, stakes)
    elif isinstance(event, ev.PlayerSeated):
        port.seat_player(tournament_id, event.table, event.seat, event.player, event.chips)
    elif isinstance(event, ev.PlayerMoved):
        port.move_player(tournament_id, event.from_table, event.from_seat, event.to_table, event.to_seat, event.reason)
    elif isinstance(event, ev.TableBroken):
        port.close_table(tournament_id, event.table)
    elif isinstance(event, ev.Eliminated) and event.player in seat_of:
        table, seat = seat_of[event.player]
        port.remove_player(tournament_id, table, seat)
    elif isinstance(event, ev.Rebuy | ev.AddOn) and event.player in seat_of:
        table, seat = seat_of[event.player]
        port.add_chips(tournament_id, table, seat, event.chips)
    elif isinstance(event, ev.BreakStarted | ev.BreakEnded | ev.HandForHand):
        reason = "hand_for_hand" if isinstance(event, ev.HandForHand) else "break"
        pausing = event.on if isinstance(event, ev.HandForHand) else isinstance(event, ev.BreakStarted)
        for table in sorted({t for t, _ in seat_of.values()}):
            (port.pause if pausing else port.resume)(tournament_id, table, reason)


__all__ = ["HandAction", "HandEnded", "TablePort", "sync"]
