"""The ``cardroom.v1.TournamentTables`` servicer (tournament_tables.proto): the tournament service's
commands on its tables, each routed to the table's actor (:mod:`dealer.tournament_table`) and
de-duplicated by ``command_id`` there. Only the ``tournament`` identity may call it
(``cardroom.runtime.trust.GRANTS``)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from cardroom.core import ids
from cardroom.v1 import tournament_tables_pb2 as tt, tournament_tables_pb2_grpc as tt_grpc
from dealer.errors import exists, invalid, not_found, precondition
from dealer.service import Tables, answered
from dealer.tournament_table import TournamentTableActor

log = logging.getLogger("dealer.tournament")
T = TypeVar("T")
COMMAND_ID_MAX = 200


def _fingerprint(request: Any) -> bytes:
    return hashlib.sha256(request.SerializeToString(deterministic=True)).digest()


def _command_id(command_id: str) -> str:
    if not command_id:
        raise invalid("command_id: required (the same id again is a no-op returning the answer)", field="command_id")
    if len(command_id) > COMMAND_ID_MAX:
        raise invalid(f"command_id: at most {COMMAND_ID_MAX} characters", field="command_id")
    return command_id


class TournamentTablesService(tt_grpc.TournamentTablesServicer):
    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    async def _run(self, context: grpc.aio.ServicerContext, fn: Callable[[], Awaitable[T]]) -> T:
        return await answered(context, fn)

    def find(self, table_id: str) -> TournamentTableActor | None:
        actor = self.tables.lookup(table_id)
        return actor if isinstance(actor, TournamentTableActor) else None

    def actor(self, tournament_id: str, table: int, field: str = "table") -> TournamentTableActor:
        ids.verify_tournament_id(tournament_id)
        if table < 1:
            raise invalid(f"{field}: a tournament's tables are numbered from 1, got {table}", field=field)
        table_id = ids.tournament_table_id(tournament_id, table)
        self.tables.deps.fences.verify_held(table_id)
        actor = self.find(table_id)
        if actor is None:
            raise not_found(f"{field}: no table {table} of tournament {tournament_id!r}", "TABLE_NOT_FOUND")
        return actor

    def seated_elsewhere(self, tournament_id: str, player: str, here: str) -> str | None:
        """The other open table of ``tournament_id`` where ``player`` sits (no player is seated twice)."""
        for actor in self.tables.actors.values():
            if (
                isinstance(actor, TournamentTableActor)
                and actor.tournament_id == tournament_id
                and actor.table_id != here
                and not actor.closed
                and actor.table.seat_of(player) is not None
            ):
                return actor.table_id
        return None

    # ------------------------------------------------------------------ open
    async def OpenTournamentTable(
        self, request: tt.OpenTournamentTableRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        async def run() -> tt.TournamentTableState:
            _command_id(request.command_id)
            ids.verify_tournament_id(request.tournament_id)
            if request.table < 1:
                raise invalid(f"table: a tournament's tables are numbered from 1, got {request.table}", field="table")
            table_id = ids.tournament_table_id(request.tournament_id, request.table)
            self.tables.deps.fences.verify_held(table_id)
            existing = self.tables.lookup(table_id)
            if existing is not None:
                if isinstance(existing, TournamentTableActor) and existing.opened == request:
                    return await existing.submit(existing.read_state)
                raise exists(f"table {request.table} of {request.tournament_id!r} is already open", "TABLE_EXISTS")
            actor = TournamentTableActor(table_id, request, self.tables.deps, self.find)
            players: set[str] = set()
            for i, seat in enumerate(request.seats):
                actor._check_new_seat(seat, f"seats[{i}]")
                if seat.player_id in players:
                    raise invalid(f"seats[{i}].player_id: {seat.player_id} is seated twice", field=f"seats[{i}]")
                players.add(seat.player_id)
                elsewhere = self.seated_elsewhere(request.tournament_id, seat.player_id, table_id)
                if elsewhere is not None:
                    raise precondition(f"seats[{i}]: {seat.player_id} is seated at {elsewhere}", "SEATED_TWICE")
                actor._sit(seat)
            if request.start_paused:
                actor.paused.add("start")
            actor._remember(request.command_id)
            actor._applied_event()
            self.tables.add(actor)  # (no await since the check above: no concurrent open in between)
            await actor.submit(actor.commit)
            log.info(
                "tournament table opened",
                extra={"table_id": table_id, "tournament_id": request.tournament_id, "seated": len(request.seats)},
            )
            return await actor.submit(actor.read_state)

        return await self._run(context, run)

    # ------------------------------------------------------------------ between-hands commands
    async def _command(
        self, tournament_id: str, table: int, version: int, command: tt.TournamentTableCommand
    ) -> tt.TournamentTableState:
        _command_id(command.command_id)
        actor = self.actor(tournament_id, table, "from_table" if command.WhichOneof("command") == "move" else "table")
        if command.WhichOneof("command") == "seat":
            elsewhere = self.seated_elsewhere(tournament_id, command.seat.seat.player_id, actor.table_id)
            if elsewhere is not None:
                raise precondition(f"seat: {command.seat.seat.player_id} is seated at {elsewhere}", "SEATED_TWICE")
        reply: tt.TournamentTableState = await actor.submit(
            lambda: actor.tournament_command(command, version), command.command_id, _fingerprint(command)
        )
        return reply

    async def SeatTournamentPlayer(
        self, request: tt.SeatTournamentPlayerRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        command = tt.TournamentTableCommand(command_id=request.command_id, seat=request)
        return await self._run(
            context, lambda: self._command(request.tournament_id, request.table, request.version, command)
        )

    async def RemoveTournamentPlayer(
        self, request: tt.RemoveTournamentPlayerRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        command = tt.TournamentTableCommand(command_id=request.command_id, remove=request)
        return await self._run(
            context, lambda: self._command(request.tournament_id, request.table, request.version, command)
        )

    async def MoveTournamentPlayer(
        self, request: tt.MoveTournamentPlayerRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        command = tt.TournamentTableCommand(command_id=request.command_id, move=request)

        async def run() -> tt.TournamentTableState:
            if request.from_table == request.to_table:
                raise invalid("to_table: a move goes to another table", field="to_table")
            self.actor(request.tournament_id, request.to_table, "to_table")
            reply = await self._command(request.tournament_id, request.from_table, 0, command)
            if not reply.deferred:  # made between hands: answered once he is at the other table, so the
                await self._arrived(request)  # tournament's next command there (a deal) finds him seated
            return reply

        return await self._run(context, run)

    async def _arrived(self, request: tt.MoveTournamentPlayerRequest, bound: float = 10.0) -> None:
        source = self.actor(request.tournament_id, request.from_table, "from_table")
        deadline = asyncio.get_running_loop().time() + bound
        while any(m.move.command_id == request.command_id for m in source.moves_out):
            if asyncio.get_running_loop().time() > deadline:
                log.warning("move not delivered yet; answered", extra={"command_id": request.command_id})
                return
            await asyncio.sleep(0.01)

    async def AddTournamentChips(
        self, request: tt.AddTournamentChipsRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        command = tt.TournamentTableCommand(command_id=request.command_id, add_chips=request)
        return await self._run(
            context, lambda: self._command(request.tournament_id, request.table, request.version, command)
        )

    async def CloseTournamentTable(
        self, request: tt.CloseTournamentTableRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        command = tt.TournamentTableCommand(command_id=request.command_id, close=request)

        async def run() -> tt.TournamentTableState:
            return await self._command(request.tournament_id, request.table, 0, command)

        return await self._run(context, run)

    # ------------------------------------------------------------------ level, pauses, state
    async def SetTournamentLevel(
        self, request: tt.SetTournamentLevelRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        async def run() -> tt.TournamentTableState:
            _command_id(request.command_id)
            actor = self.actor(request.tournament_id, request.table)
            reply: tt.TournamentTableState = await actor.submit(
                lambda: actor.set_level(request), request.command_id, _fingerprint(request)
            )
            return reply

        return await self._run(context, run)

    async def _pause(
        self, request: tt.PauseTournamentTableRequest, on: bool, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        async def run() -> tt.TournamentTableState:
            _command_id(request.command_id)
            actor = self.actor(request.tournament_id, request.table)
            reply: tt.TournamentTableState = await actor.submit(
                lambda: actor.pause(request, on),
                request.command_id,
                (b"pause" if on else b"resume") + _fingerprint(request),
            )
            return reply

        return await self._run(context, run)

    async def PauseTournamentTable(
        self, request: tt.PauseTournamentTableRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        return await self._pause(request, True, context)

    async def ResumeTournamentTable(
        self, request: tt.PauseTournamentTableRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        return await self._pause(request, False, context)

    async def DealTournamentHand(
        self, request: tt.DealTournamentHandRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        async def run() -> tt.TournamentTableState:
            _command_id(request.command_id)
            actor = self.actor(request.tournament_id, request.table)
            reply: tt.TournamentTableState = await actor.submit(
                lambda: actor.deal_hand(request), request.command_id, _fingerprint(request)
            )
            return reply

        return await self._run(context, run)

    async def GetTournamentTable(
        self, request: tt.GetTournamentTableRequest, context: grpc.aio.ServicerContext
    ) -> tt.TournamentTableState:
        async def run() -> tt.TournamentTableState:
            actor = self.actor(request.tournament_id, request.table)
            return await actor.submit(actor.read_state)

        return await self._run(context, run)


__all__ = ["TournamentTablesService"]
