"""Following one player through his tournament, table after table: the one source of truth for the
bots (``cardroom bots --tournament``, :mod:`cardroom.client.tournament_bots`) and for a person
(``cardroom play``, :mod:`cardroom.client.terminal`).

``MyTournamentStatus`` names his table number (0 before the start and between two tables);
:func:`cardroom.core.ids.tournament_table_id` the dealer's table (``tt.TOURNAMENT.N``), played on the
gateway's Play stream. The table tells him when he leaves it (:func:`leaves`: moved to another table
when the tournament balances or breaks tables, busted, removed, or the table closed); then his status
names the next table, or his place once he is out or the tournament over (:func:`is_done`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import grpc

from cardroom.client.connection import OPEN_REQUEST_ID, RETRIED
from cardroom.core import ids
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g, tournament_pb2 as t

#: The player's status once he is out or the tournament over (MyTournamentStatus.status).
DONE = frozenset({"busted", "eliminated", "finished"})
#: His seat changes that take him away from the table he follows.
GONE = frozenset({"moved_out", "busted", "removed"})
#: How often the status is asked for while he has no table (before the start, between two tables).
POLL_SECONDS = 0.3
#: How long the status may stay unreachable (the tournament service or the gateway restarting)
#: before following gives up: a restart under load takes seconds, not a few retries' worth.
PATIENCE_SECONDS = 120.0

StatusOf = Callable[[], Awaitable[t.TournamentPlayerStatus]]
#: Plays at the status's table until the player leaves it: True (moved, busted, the table closed),
#: False (the stream ended otherwise: look again), None (stop following).
PlayAt = Callable[[t.TournamentPlayerStatus], Awaitable[bool | None]]


def is_done(status: t.TournamentPlayerStatus) -> bool:
    """Out of the tournament (busted, eliminated) or the tournament over."""
    return status.status in DONE or bool(status.place)


def table_id(status: t.TournamentPlayerStatus) -> str:
    """The dealer's table of the player's status (``tt.TOURNAMENT.N``), as the service names it."""
    return status.table_id or ids.tournament_table_id(status.tournament_id, status.table)


def leaves(event: d.TableEvent, player: str) -> str | None:
    """Why ``player`` leaves the table with ``event`` (``moved_out``, ``busted``, ``removed``,
    ``table_closed``), or None when he stays."""
    what = event.WhichOneof("event")
    if what == "table_closed":
        return what
    if what == "seat_changed" and event.seat_changed.seat.player_id == player and event.seat_changed.change in GONE:
        return event.seat_changed.change
    return None


def stream_failed(event: g.PlayEvent) -> bool:
    """An error of the Play stream itself (opening the table failed: not open on the dealer yet, or
    its watch failed), not the answer to one of the player's requests: look the table up again."""
    return event.WhichOneof("kind") == "error" and event.error.request_id in ("", OPEN_REQUEST_ID)


async def next_table(
    status_of: StatusOf,
    left: tuple[int, int] | None = None,
    waiting: Callable[[t.TournamentPlayerStatus], None] | None = None,
    poll: float = POLL_SECONDS,
    patience: float = PATIENCE_SECONDS,
) -> t.TournamentPlayerStatus:
    """The player's status once he has a table other than ``left`` (the table and seat he just
    left: the service may not know yet), or once he is done. ``waiting`` sees each status while not.
    A status that cannot be had (UNAVAILABLE, DEADLINE_EXCEEDED: a service restarting;
    RESOURCE_EXHAUSTED: over the gateway's rate) is asked for again every ``poll`` for up to
    ``patience`` seconds in a row; then the failure is raised."""
    unreachable_since: float | None = None
    while True:
        try:
            status = await status_of()
        except grpc.aio.AioRpcError as err:
            now = time.monotonic()
            unreachable_since = now if unreachable_since is None else unreachable_since
            if err.code() not in RETRIED or now - unreachable_since > patience:
                raise
            await asyncio.sleep(poll)
            continue
        unreachable_since = None
        if is_done(status):
            return status
        if status.table and (status.table, status.seat) != left:
            return status
        if waiting is not None:
            waiting(status)  # not started, between two tables, or his bust not yet placed
        await asyncio.sleep(poll)


async def follow(
    status_of: StatusOf,
    play_at: PlayAt,
    waiting: Callable[[t.TournamentPlayerStatus], None] | None = None,
    poll: float = POLL_SECONDS,
) -> t.TournamentPlayerStatus | None:
    """Play the player's tournament table after table (``play_at``) until he is done: his last
    status (place, prize), or None when ``play_at`` stopped following. A table's stream that ended
    without him leaving it is opened again only after ``poll``: a table that ends its streams at
    once (closed, its dealer draining) must not have him ask in a loop as fast as the gateway answers."""
    left: tuple[int, int] | None = None
    while True:
        status = await next_table(status_of, left, waiting, poll)
        if is_done(status):
            return status
        gone = await play_at(status)
        if gone is None:
            return None
        left = (status.table, status.seat) if gone else None
        if not gone:
            await asyncio.sleep(poll)


__all__ = ["DONE", "GONE", "follow", "is_done", "leaves", "next_table", "stream_failed", "table_id"]
