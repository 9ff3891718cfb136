"""The ``cardroom.v1.Tournament`` gRPC servicer: a thin shell over :class:`TournamentHouse`."""

from __future__ import annotations

import asyncio
import hmac
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeAlias

import grpc

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.runtime.errors import rpc
from cardroom.v1 import tournament_pb2 as pb, tournament_pb2_grpc as pb_grpc
from tournament import lobby
from tournament.house import TournamentHouse
from tournament.relay import message
from tournament.store import StoredEvent

log = logging.getLogger("tournament.service")
Context: TypeAlias = grpc.aio.ServicerContext


def _entry(body: dict[str, Any], runner_status: pb.TournamentPlayerStatus | None) -> pb.TournamentEntryResponse:
    out = pb.TournamentEntryResponse(
        tournament_id=body["tournament_id"],
        player_id=body["player_id"],
        paid=int(body["paid"]),
        chips=int(body["chips"]),
        replayed=bool(body.get("replayed")),
    )
    if runner_status is not None:
        out.status.CopyFrom(runner_status)
    return out


def check_operator(context: Context, token: str) -> None:
    """Operator calls (create, cancel) carry ``authorization: Operator <TOURNAMENT_OPERATOR_TOKEN>``
    when the token is set (unset: an internal port, every caller trusted, as today)."""
    if not token:
        return
    for key, value in context.invocation_metadata() or ():
        if key.lower() != "authorization" or not isinstance(value, str):
            continue
        scheme, _, given = value.strip().partition(" ")
        if scheme.lower() == "operator" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return
    raise errors.denied(
        "operator calls need metadata 'authorization: Operator <TOURNAMENT_OPERATOR_TOKEN>'", errors.OPERATOR_ONLY
    )


class TournamentService(pb_grpc.TournamentServicer):
    def __init__(self, house: TournamentHouse, operator_token: str = "") -> None:
        self.house = house
        self.operator_token = operator_token

    def _status(self, tournament_id: str, player: str) -> pb.TournamentPlayerStatus | None:
        status = self.house.status_of(tournament_id, player)
        return None if status is None else lobby.player(tournament_id, player, status)

    @rpc
    async def CreateTournament(self, request: pb.CreateTournamentRequest, context: Context) -> pb.TournamentInfo:
        check_operator(context, self.operator_token)
        again = self.house.created_before(request)  # a tournament over, forgotten: its record
        if again is not None:
            return again
        runner = await self.house.create(request)
        return lobby.info(runner, self.house.clock.now())

    @rpc
    async def ListTournaments(self, request: pb.ListTournamentsRequest, context: Context) -> pb.ListTournamentsResponse:
        infos, token = self.house.listing(request.status, request.page_size, request.page_token)
        out = pb.ListTournamentsResponse(next_page_token=token)
        out.tournaments.extend(infos)
        return out

    @rpc
    async def GetTournament(self, request: pb.GetTournamentRequest, context: Context) -> pb.TournamentInfo:
        return self.house.info(request.tournament_id)

    @rpc
    async def Register(self, request: pb.TournamentEntryRequest, context: Context) -> pb.TournamentEntryResponse:
        body = await self.house.register(request.tournament_id, request.player_id, request.request_id)
        return _entry(body, self._status(request.tournament_id, request.player_id))

    @rpc
    async def Unregister(self, request: pb.TournamentEntryRequest, context: Context) -> pb.TournamentEntryResponse:
        body = await self.house.unregister(request.tournament_id, request.player_id, request.request_id)
        return _entry(body, None)

    @rpc
    async def Rebuy(self, request: pb.TournamentRebuyRequest, context: Context) -> pb.TournamentEntryResponse:
        body = await self.house.rebuy(
            request.tournament_id, request.player_id, request.request_id, double=request.double
        )
        return _entry(body, self._status(request.tournament_id, request.player_id))

    @rpc
    async def AddOn(self, request: pb.TournamentEntryRequest, context: Context) -> pb.TournamentEntryResponse:
        body = await self.house.add_on(request.tournament_id, request.player_id, request.request_id)
        return _entry(body, self._status(request.tournament_id, request.player_id))

    @rpc
    async def GetPlayerStatus(
        self, request: pb.GetTournamentPlayerRequest, context: Context
    ) -> pb.TournamentPlayerStatus:
        ids.verify_tournament_id(request.tournament_id)
        if not self.house.is_forgotten(request.tournament_id):
            self.house.get(request.tournament_id)  # NOT_FOUND before the player is checked
        ids.verify_player_id(request.player_id)
        status = self.house.status_of(request.tournament_id, request.player_id)
        if status is None:
            raise errors.not_found(
                f"player_id: {request.player_id} is not registered in {request.tournament_id}", "NOT_REGISTERED"
            )
        return lobby.player(request.tournament_id, request.player_id, status)

    @rpc
    async def CancelTournament(
        self, request: pb.CancelTournamentRequest, context: Context
    ) -> pb.CancelTournamentResponse:
        check_operator(context, self.operator_token)
        body = await self.house.cancel(request.tournament_id, request.request_id)
        return pb.CancelTournamentResponse(
            policy=body["policy"],
            distributed=body["distributed"],
            house_kept=body["house_kept"],
            replayed=bool(body.get("replayed")),
            payouts=[pb.TournamentPayout(player_id=p, amount=a) for p, a in body["payouts"]],
        )

    @rpc
    async def WatchTournament(
        self, request: pb.WatchTournamentRequest, context: Context
    ) -> AsyncIterator[pb.TournamentEventMessage]:
        if self.house.is_forgotten(request.tournament_id):  # over and forgotten: its stored events, then the end
            for event in self._stored(request.tournament_id, request.from_sequence):
                yield message(event)
            return
        runner = self.house.get(request.tournament_id)
        queue: asyncio.Queue[StoredEvent | None] = asyncio.Queue()
        runner.watchers.add(queue)
        try:
            sent = max(0, request.from_sequence - 1)
            while True:  # what is stored first, then live
                stored = self.house.store.events(runner.tournament_id, sent + 1)
                if not stored:
                    break
                for event in stored:
                    sent = event.seq
                    yield message(event)
            if runner.finished and queue.empty():
                return
            while True:
                live = await queue.get()
                if live is None:
                    return
                if live.seq > sent:
                    sent = live.seq
                    yield message(live)
        finally:
            runner.watchers.discard(queue)

    def _stored(self, tournament_id: str, from_sequence: int) -> Iterator[StoredEvent]:
        """A tournament's stored events from ``from_sequence`` on, page by page."""
        sent = max(0, from_sequence - 1)
        while stored := self.house.store.events(tournament_id, sent + 1):
            yield from stored
            sent = stored[-1].seq


__all__ = ["TournamentService"]
