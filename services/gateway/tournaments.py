"""The tournament lobby for players: the lobby, one tournament's page, the player's own entries
(register, unregister, re-buy, add-on) and his status, through the tournament service.

The tournament service is an optional peer (``TOURNAMENT_ADDR``): without it every call here is
FAILED_PRECONDITION, reason ``TOURNAMENTS_OFF``. The player is always the token's (the servicer passes
it in). A request id is scoped to its player before it reaches the tournament service, which
de-duplicates by (tournament, request id): one player's id never answers, or blocks, another's — as
the dealer scopes its seat commands' ids (``DealerService._scoped``). Input is checked here, before
any backend call; the tournament service's refusals come back with their status and reason."""

from __future__ import annotations

import re

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.v1 import gateway_pb2 as g, tournament_pb2 as t, tournament_pb2_grpc as t_grpc
from gateway.clients import forward

TOURNAMENTS_OFF = "TOURNAMENTS_OFF"
#: A client's request id: what the tournament service accepts (120 characters) less the scope.
REQUEST_ID_MAX = 64
_REQUEST_ID = re.compile(rf"[A-Za-z0-9_.:-]{{1,{REQUEST_ID_MAX}}}")
#: Statuses a lobby may be filtered by (UNSPECIFIED: every one).
_STATUSES = frozenset(t.TournamentStatus.values())


def scoped(player: str, request_id: str) -> str:
    """``request_id`` as the tournament service sees it: the player's own."""
    return ids.player_request_id(player, request_id)


def verify_request_id(request_id: str) -> str:
    if not request_id:
        raise errors.invalid("request_id: required (the same id again is the same request)")
    if not _REQUEST_ID.fullmatch(request_id):
        raise errors.invalid(
            f"request_id: {ids.shown(request_id)} is not 1-{REQUEST_ID_MAX} letters, digits, '_', '-', '.' or ':'"
        )
    return request_id


def lobby_line(info: t.TournamentInfo) -> g.LobbyTournament:
    """The lobby's line of one tournament (the page is the whole ``TournamentInfo``)."""
    line = g.LobbyTournament(
        tournament_id=info.tournament_id,
        name=info.name,
        format=info.format,
        variant=info.variant,
        status=info.status,
        buy_in=info.buy_in,
        fee=info.fee,
        entrants=info.entrants,
        max_entrants=info.max_entrants,
        remaining=info.remaining,
        prize_pool=info.prize_pool,
        guarantee=info.guarantee,
        level=info.level,
        blinds=info.blinds,
        seconds_to_next_level=info.seconds_to_next_level,
        on_break=info.on_break,
    )
    if info.starts_at > 0:
        line.starts_at.FromMicroseconds(round(info.starts_at * 1_000_000))
    else:
        line.sit_and_go_size = info.max_entrants
    return line


class TournamentDesk:
    """The gateway's side of the tournament service (``stub`` None: tournaments are off here)."""

    def __init__(self, stub: t_grpc.TournamentStub | None) -> None:
        self._tournaments = stub

    @property
    def enabled(self) -> bool:
        return self._tournaments is not None

    def _stub(self) -> t_grpc.TournamentStub:
        if self._tournaments is None:
            raise errors.precondition(
                "tournaments are not enabled here (this gateway has no tournament service: TOURNAMENT_ADDR is unset)",
                reason=TOURNAMENTS_OFF,
            )
        return self._tournaments

    async def lobby(self, request: t.ListTournamentsRequest) -> g.TournamentLobbyResponse:
        stub = self._stub()
        if request.status not in _STATUSES:
            raise errors.invalid(f"status: no tournament status {request.status}")
        asked = t.ListTournamentsRequest(
            status=request.status, page_size=request.page_size, page_token=request.page_token
        )
        listed = await forward(stub.ListTournaments(asked))
        infos = sorted(listed.tournaments, key=lambda i: i.tournament_id)
        return g.TournamentLobbyResponse(
            tournaments=[lobby_line(i) for i in infos], next_page_token=listed.next_page_token
        )

    async def page(self, tournament_id: str) -> t.TournamentInfo:
        stub = self._stub()
        ids.verify_tournament_id(tournament_id)
        return await forward(stub.GetTournament(t.GetTournamentRequest(tournament_id=tournament_id)))

    @staticmethod
    def _entry(player: str, request: g.MyTournamentEntryRequest) -> t.TournamentEntryRequest:
        ids.verify_tournament_id(request.tournament_id)
        verify_request_id(request.request_id)
        return t.TournamentEntryRequest(
            tournament_id=request.tournament_id, player_id=player, request_id=scoped(player, request.request_id)
        )

    async def register(self, player: str, request: g.MyTournamentEntryRequest) -> t.TournamentEntryResponse:
        stub = self._stub()
        return await forward(stub.Register(self._entry(player, request)))

    async def unregister(self, player: str, request: g.MyTournamentEntryRequest) -> t.TournamentEntryResponse:
        stub = self._stub()
        return await forward(stub.Unregister(self._entry(player, request)))

    async def add_on(self, player: str, request: g.MyTournamentEntryRequest) -> t.TournamentEntryResponse:
        stub = self._stub()
        return await forward(stub.AddOn(self._entry(player, request)))

    async def rebuy(self, player: str, request: g.MyTournamentRebuyRequest) -> t.TournamentEntryResponse:
        stub = self._stub()
        ids.verify_tournament_id(request.tournament_id)
        verify_request_id(request.request_id)
        rebuy = t.TournamentRebuyRequest(
            tournament_id=request.tournament_id,
            player_id=player,
            request_id=scoped(player, request.request_id),
            double=request.double,
        )
        return await forward(stub.Rebuy(rebuy))

    async def status(self, player: str, tournament_id: str) -> t.TournamentPlayerStatus:
        stub = self._stub()
        ids.verify_tournament_id(tournament_id)
        return await forward(
            stub.GetPlayerStatus(t.GetTournamentPlayerRequest(tournament_id=tournament_id, player_id=player))
        )


__all__ = ["REQUEST_ID_MAX", "TOURNAMENTS_OFF", "TournamentDesk", "lobby_line", "scoped", "verify_request_id"]
