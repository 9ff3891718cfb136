"""An async gateway client: sign-up and login (the access token refreshed in the background),
lobby, join/leave, balance, Play streams and the tournament lobby with the player's entries."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardroom.client.pacing import Pace
from cardroom.runtime.keepalive import NO_BDP_PROBE
from cardroom.runtime.lost_status import unmasked
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc, tournament_pb2 as t

_CLOSE = object()
log = logging.getLogger("cardroom.client")
#: Refresh the access token this long before it expires (at most a fifth of its life).
REFRESH_AHEAD_SECONDS = 60.0


#: Failures that leave nothing changed and pass: a loaded machine, a backend restarting.
TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: Failures an idempotent call is made again after: the transient ones, and a refusal as over one of
#: the gateway's rates (RESOURCE_EXHAUSTED: nothing changed, its bucket refills in a moment).
RETRIED = (*TRANSIENT, grpc.StatusCode.RESOURCE_EXHAUSTED)


#: The request id of the table opening that :meth:`GatewayClient.play` sends first: an error with it
#: is the stream's own (no such table, not yours), not a refusal of an action.
OPEN_REQUEST_ID = "open"


@dataclass
class PlayStream:
    """A bidi Play stream: ``send`` queues requests, iterate for events."""

    call: grpc.aio.StreamStreamCall
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)

    async def send(self, request: g.PlayRequest) -> str:
        if not request.request_id:
            request.request_id = uuid.uuid4().hex[:12]
        await self.queue.put(request)
        return request.request_id

    async def close(self) -> None:
        await self.queue.put(_CLOSE)

    def cancel(self) -> None:
        self.call.cancel()

    def __aiter__(self) -> AsyncIterator[g.PlayEvent]:
        return self._events()

    async def _events(self) -> AsyncIterator[g.PlayEvent]:
        """The stream's events, a burst (``PlayEvent.table_burst``) as its table events one by one, then
        the answer it carries (``burst_result``) as a result of its own."""
        async for kind, message in self.items():
            yield g.PlayEvent(**{kind: message})

    async def items(self) -> AsyncIterator[tuple[str, Any]]:
        """The same as iterating the stream, each event as ``(kind, message)``: the name of its
        ``PlayEvent.kind`` and that message itself, not copied into a new ``PlayEvent`` (what a client
        reading thousands of events a second, the load test, saves)."""
        try:
            async for event in self.call:
                kind = event.WhichOneof("kind")
                if kind == "table_burst":
                    for table_event in event.table_burst.events:
                        yield "table", table_event
                    if event.HasField("burst_result"):
                        yield "result", event.burst_result
                elif kind is not None:
                    yield kind, getattr(event, kind)
        except grpc.aio.AioRpcError as err:
            status = unmasked(err, "the Play stream")
            if status is err:
                raise
            raise status from err


class _Paced(grpc.aio.UnaryUnaryClientInterceptor):
    """Every unary call waits for its turn in the player's :class:`Pace` first."""

    def __init__(self, pace: Pace) -> None:
        self.pace = pace

    async def intercept_unary_unary(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        await self.pace.take()
        return await continuation(client_call_details, request)


#: A player's connection: its own HTTP/2 connection (not a subchannel shared with the process's other
#: clients), without gRPC's bandwidth-delay probe (a PING answering each burst the gateway sends).
PLAYER_CHANNEL_OPTIONS: list[tuple[str, int]] = [("grpc.use_local_subchannel_pool", 1), NO_BDP_PROBE]


class GatewayClient:
    """One player's connection to the gateway (one HTTP/2 connection per client). His calls and
    Play messages keep under the budget his login names (:mod:`cardroom.client.pacing`)."""

    def __init__(self, address: str, timeout: float = 10.0) -> None:
        self.pace = Pace()
        self.channel = grpc.aio.insecure_channel(
            address, options=PLAYER_CHANNEL_OPTIONS, interceptors=[_Paced(self.pace)]
        )
        self.stub = g_grpc.GatewayStub(self.channel)
        self.timeout = timeout
        self.token = ""
        self.player_id = ""
        self.refresh_token = ""
        self.expires_at = 0.0
        self._refresher: asyncio.Task[None] | None = None

    @property
    def metadata(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {self.token}")]

    async def login(self, player_id: str, password: str = "") -> g.LoginResponse:
        """Log in; no ``password`` is the development login (a gateway with GATEWAY_DEV_LOGIN=1)."""
        reply = await self.stub.Login(g.LoginRequest(player_id=player_id, password=password), timeout=self.timeout)
        return self._logged_in(reply)

    async def sign_up(self, player_id: str, password: str) -> g.LoginResponse:
        """A new account with a password; logged in as it."""
        reply = await self.stub.SignUp(g.SignUpRequest(player_id=player_id, password=password), timeout=self.timeout)
        return self._logged_in(reply)

    async def refresh(self) -> g.LoginResponse:
        """A new access token for the refresh token (which is used up; the reply has the next)."""
        reply = await self.stub.Refresh(g.RefreshRequest(refresh_token=self.refresh_token), timeout=self.timeout)
        return self._logged_in(reply)

    async def change_password(self, old: str, new: str) -> g.LoginResponse:
        reply = await self.stub.ChangePassword(
            g.ChangePasswordRequest(old_password=old, new_password=new), timeout=self.timeout, metadata=self.metadata
        )
        return self._logged_in(reply)

    def _logged_in(self, reply: g.LoginResponse) -> g.LoginResponse:
        self.token, self.player_id = reply.token, reply.player_id
        self.refresh_token = reply.refresh_token
        self.expires_at = float(reply.expires_at.seconds)
        self.pace.keep_under(reply.calls_per_second, reply.call_burst)
        if self.refresh_token and (self._refresher is None or self._refresher.done()):
            self._refresher = asyncio.get_running_loop().create_task(self._keep_fresh())
        return reply

    async def _keep_fresh(self) -> None:
        """Refresh the access token shortly before it expires, for as long as the client lives
        (a gateway that is down is retried until the token has expired; a refused refresh stops)."""
        while self.refresh_token:
            left = self.expires_at - time.time()
            await asyncio.sleep(max(1.0, left - min(REFRESH_AHEAD_SECONDS, left / 5)))
            try:
                await self.refresh()
            except grpc.aio.AioRpcError as err:
                if err.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.INVALID_ARGUMENT):
                    log.warning("token refresh refused: log in again", extra={"player_id": self.player_id})
                    return
                if self.expires_at <= time.time():
                    log.warning("token expired while the gateway was unreachable", extra={"player_id": self.player_id})
                    return
                await asyncio.sleep(2.0)

    async def lobby(self, variant: str = "") -> list[g.LobbyTable]:
        reply = await self.stub.Lobby(g.LobbyRequest(variant=variant), timeout=self.timeout, metadata=self.metadata)
        return list(reply.tables)

    async def join(self, table_id: str, buy_in: int, seat: int = 0, request_id: str = "") -> g.JoinResponse:
        """Sit down; the same ``request_id`` again is the same sit-down (safe to retry)."""
        return await self.stub.Join(
            g.JoinRequest(table_id=table_id, buy_in=buy_in, seat=seat, request_id=request_id),
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def leave(self, table_id: str) -> g.LeaveResponse:
        return await self.stub.Leave(g.LeaveRequest(table_id=table_id), timeout=self.timeout, metadata=self.metadata)

    async def cashier(self) -> g.CashierResponse:
        return await self.stub.Cashier(g.CashierRequest(), timeout=self.timeout, metadata=self.metadata)

    async def cashier_move(self, deposit: bool, currency: int, amount: int, request_id: str) -> g.CashierMove:
        """A deposit or withdrawal request; the same ``request_id`` again is the same request."""
        call = self.stub.CashierDeposit if deposit else self.stub.CashierWithdraw
        return await call(
            g.CashierMoveRequest(currency=currency, amount=amount, request_id=request_id),  # type: ignore[arg-type]
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def cashier_history(self, limit: int = 20) -> g.CashierHistoryResponse:
        return await self.stub.CashierHistory(
            g.CashierHistoryRequest(limit=limit), timeout=self.timeout, metadata=self.metadata
        )

    async def my_hands(self, limit: int = 10, pokerstars: bool = False) -> g.MyHandsResponse:
        """The player's own recent hands, newest first (with ``pokerstars``: also as one text file)."""
        fmt = g.HANDS_FORMAT_POKERSTARS if pokerstars else g.HANDS_FORMAT_UNSPECIFIED
        return await self.stub.MyHands(
            g.MyHandsRequest(limit=limit, format=fmt), timeout=self.timeout, metadata=self.metadata
        )

    async def balances(self) -> g.MyBalanceResponse:
        return await self.stub.MyBalance(g.MyBalanceRequest(), timeout=self.timeout, metadata=self.metadata)

    # ------------------------------------------------------------------ tournaments
    async def tournament_lobby(self, status: int = 0, page_token: str = "") -> g.TournamentLobbyResponse:
        """The tournament lobby (``status``: a ``TournamentStatus``, 0 = every one in play), by id. The
        tournaments over (FINISHED, CANCELLED) come in pages (the tournament service's 100 by id): the
        reply's ``next_page_token``, sent back as ``page_token``, asks for the next ("": none left)."""
        return await self.stub.TournamentLobby(
            t.ListTournamentsRequest(status=status, page_token=page_token),  # type: ignore[arg-type]
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def tournament(self, tournament_id: str) -> t.TournamentInfo:
        return await self.stub.GetTournament(
            t.GetTournamentRequest(tournament_id=tournament_id), timeout=self.timeout, metadata=self.metadata
        )

    async def register_tournament(self, tournament_id: str, request_id: str) -> t.TournamentEntryResponse:
        """Buy in (the buy-in and fee from the cash account); the same ``request_id`` again is the same entry."""
        return await self.stub.RegisterTournament(
            g.MyTournamentEntryRequest(tournament_id=tournament_id, request_id=request_id),
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def unregister_tournament(self, tournament_id: str, request_id: str) -> t.TournamentEntryResponse:
        return await self.stub.UnregisterTournament(
            g.MyTournamentEntryRequest(tournament_id=tournament_id, request_id=request_id),
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def tournament_rebuy(
        self, tournament_id: str, request_id: str, double: bool = False
    ) -> t.TournamentEntryResponse:
        return await self.stub.TournamentRebuy(
            g.MyTournamentRebuyRequest(tournament_id=tournament_id, request_id=request_id, double=double),
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def tournament_add_on(self, tournament_id: str, request_id: str) -> t.TournamentEntryResponse:
        return await self.stub.TournamentAddOn(
            g.MyTournamentEntryRequest(tournament_id=tournament_id, request_id=request_id),
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def tournament_status(self, tournament_id: str) -> t.TournamentPlayerStatus:
        """The player's own status in ``tournament_id`` (NOT_FOUND / NOT_REGISTERED when not an entrant)."""
        return await self.stub.MyTournamentStatus(
            g.MyTournamentStatusRequest(tournament_id=tournament_id), timeout=self.timeout, metadata=self.metadata
        )

    def play(self, table_id: str, bursts: bool = True) -> PlayStream:
        """Open a Play stream already following ``table_id``; ``bursts``: the gateway sends a burst of
        table events as one message, with the answer to the player's action that brought it (fewer
        messages; the stream still yields one event at a time, the answer after the burst's events)."""
        queue: asyncio.Queue = asyncio.Queue()
        opening = g.OpenTable(table_id=table_id, bursts=bursts, results_in_bursts=bursts)
        queue.put_nowait(g.PlayRequest(request_id=OPEN_REQUEST_ID, open=opening))

        async def requests() -> AsyncIterator[g.PlayRequest]:
            while True:
                item = await queue.get()
                if item is _CLOSE:
                    return
                await self.pace.take()  # each Play message takes a token of the player's budget
                yield item

        call = self.stub.Play(requests(), metadata=self.metadata)
        return PlayStream(call, queue)

    async def close(self) -> None:
        if self._refresher is not None:
            self._refresher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._refresher
        await self.channel.close()


class OperatorClient:
    """The gateway's operator API (create tables, fund players) with the operator token."""

    def __init__(self, address: str, token: str, timeout: float = 10.0) -> None:
        self.channel = grpc.aio.insecure_channel(address)
        self.stub = g_grpc.GatewayOperatorStub(self.channel)
        self.token = token
        self.timeout = timeout

    @property
    def metadata(self) -> list[tuple[str, str]]:
        return [("authorization", f"Operator {self.token}")]

    async def create_table(self, table_id: str, config: d.TableConfig, request_id: str = "") -> d.TableInfo:
        return await self.stub.CreateTable(
            d.CreateTableRequest(table_id=table_id, config=config, request_id=request_id or f"create-{table_id}"),
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def fund(
        self, player_id: str, currency: common_pb2.Currency, amount: int, key: str, reference: str = ""
    ) -> g.FundPlayerResponse:
        return await self.stub.FundPlayer(
            g.FundPlayerRequest(
                player_id=player_id, currency=currency, amount=amount, idempotency_key=key, reference=reference
            ),
            timeout=self.timeout,
            metadata=self.metadata,
        )

    async def close(self) -> None:
        await self.channel.close()
