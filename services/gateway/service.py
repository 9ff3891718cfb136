"""The Gateway gRPC servicer: authenticates every call, limits each connection's rate and
forwards to the dealer, the wallet and the tournament service for the token's own player only."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import grpc

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.runtime.errors import rpc
from cardroom.v1 import (
    common_pb2,
    dealer_pb2 as d,
    gateway_pb2 as g,
    gateway_pb2_grpc,
    tournament_pb2 as t,
    wallet_pb2 as w,
)
from gateway import metrics
from gateway.accounts import Accounts
from gateway.auth import authenticate, login_accounts, other_player
from gateway.caller import Caller, caller_of
from gateway.cashier import Cashier
from gateway.clients import Backends, forward
from gateway.config import GatewayConfig
from gateway.play import PlaySession
from gateway.presence import Presence
from gateway.ratelimit import STREAM_LIMIT, Limits, RateLimiter, Refusal, StreamCounter
from gateway.tokens import Claims, issue
from gateway.tournaments import TournamentDesk

log = logging.getLogger("gateway")


def _settled_opening(held: set[asyncio.Future[bool]]) -> Callable[[asyncio.Future[bool]], None]:
    """An account opening's done callback: it leaves ``held``; a failure whose caller had gone is read here
    (nobody else will), and the next login opens the accounts again."""

    def settled(opening: asyncio.Future[bool]) -> None:
        held.discard(opening)
        if not opening.cancelled():
            opening.exception()

    return settled


T = TypeVar("T")

DEV_LOGIN_OFF = "DEV_LOGIN_OFF"
PASSWORD_REQUIRED = "PASSWORD_REQUIRED"
DEV_LOGIN_ONLY = "DEV_LOGIN_ONLY"
#: A TableCommand naming no open WatchMyTable session of the player.
SESSION_NOT_OPEN = "SESSION_NOT_OPEN"

#: (account kind, currency) of a player's two wallet accounts, with the currency in the ids module.
PLAYER_ACCOUNTS = (
    (w.ACCOUNT_KIND_PLAYER_CASH, common_pb2.CURRENCY_CASH, ids.Currency.CASH),
    (w.ACCOUNT_KIND_PLAYER_PLAY, common_pb2.CURRENCY_PLAY, ids.Currency.PLAY),
)


class GatewayService(gateway_pb2_grpc.GatewayServicer):
    def __init__(self, config: GatewayConfig, backends: Backends, cashier: Cashier | None = None) -> None:
        self.config = config
        self.backends = backends
        self.limiter = RateLimiter(config.rate, config.burst)
        self.limits = Limits(
            self.limiter,
            RateLimiter(config.address_rate, config.address_burst),
            RateLimiter(config.player_rate, config.player_burst),
            RateLimiter(config.login_rate, config.login_burst),
            RateLimiter(config.signup_rate, config.signup_burst),
        )
        self.streams = StreamCounter(config.max_play_streams)
        self.accounts: Accounts = login_accounts(config)
        self._hashing = asyncio.Semaphore(4)
        self._opening: set[asyncio.Future[bool]] = set()  # account openings under way (each its grant)
        """At most 4 password hashes at once (argon2id takes memory_kib each)."""
        self.cashier = cashier or Cashier(backends, config.play_money_daily_limit)
        self.tournaments = TournamentDesk(backends.tournament)
        """The tournament lobby and the player's entries (off without the tournament service)."""
        self.sessions: dict[str, PlaySession] = {}
        """The open Play session of each player (a second one takes over from the first)."""
        self.presence = Presence(backends.monitor, config.heartbeat_seconds)
        """The players of the open sessions, beaten to the connection monitor (started with the server)."""

    @staticmethod
    def _refuse(refusal: Refusal | None) -> None:
        if refusal is not None:
            metrics.RATE_LIMITED.inc()
            raise errors.exhausted(refusal.message, reason=refusal.reason)

    def _who(self, context: grpc.aio.ServicerContext) -> Caller:
        """The connection and client address of this call (behind a trusted proxy: the client's)."""
        return caller_of(context.peer(), context.invocation_metadata() or (), self.config.trusted_proxies)

    def _limit(self, context: grpc.aio.ServicerContext) -> Caller:
        """Refuse a call over its connection's or address's limits; the caller it was counted for."""
        who = self._who(context)
        self._refuse(self.limits.check(who.connection, who.address))
        return who

    def _caller(self, context: grpc.aio.ServicerContext, requested_player: str = "") -> Claims:
        self._limit(context)
        return self._claims(context, requested_player)

    def _claims(self, context: grpc.aio.ServicerContext, requested_player: str = "") -> Claims:
        """The token's player, within his own limits, acting for nobody else."""
        claims = authenticate(context, self.config.secret)
        self._refuse(self.limits.check_player(claims.player_id))
        denied = other_player(claims, requested_player)
        if denied is not None:
            raise denied
        return claims

    @staticmethod
    async def _forward(context: grpc.aio.ServicerContext, call: Awaitable[T]) -> T:
        return await forward(call)

    async def _open_accounts(self, player: str, grant_key: str = "", *, unfunded_too: bool = False) -> bool:
        """Open the player's wallet accounts (idempotent). A new play account gets the grant when
        ``grant_key`` (the sign-up's address) has grants left today; True when it was deposited. With
        ``unfunded_too`` (the development login, which has no limit by address) so does a play account
        opened before that never had a transfer: a login that ended between the opening and the deposit
        (the wallet's answer lost, the gateway stopped) left it at 0 for good, the next login's
        OpenAccount saying it existed. Runs to its end when its caller gives up meanwhile (the same gap)."""
        opening = asyncio.ensure_future(self._open_and_grant(player, grant_key, unfunded_too))
        self._opening.add(opening)
        opening.add_done_callback(_settled_opening(self._opening))
        return await asyncio.shield(opening)

    async def _never_funded(self, account: w.Account) -> bool:
        """``account`` is at 0 and no transfer ever touched it."""
        if account.balance != 0:
            return False
        listed = await forward(
            self.backends.wallet.ListTransfers(w.ListTransfersRequest(account_id=account.account_id, page_size=1))
        )
        return not listed.transfers

    async def _open_and_grant(self, player: str, grant_key: str, unfunded_too: bool) -> bool:
        granted = False
        for kind, currency, _ in PLAYER_ACCOUNTS:
            opened = await forward(
                self.backends.wallet.OpenAccount(w.OpenAccountRequest(kind=kind, owner=player, currency=currency))
            )
            if currency != common_pb2.CURRENCY_PLAY or self.config.play_money_grant <= 0:
                continue
            if not opened.created and not (unfunded_too and await self._never_funded(opened.account)):
                continue
            if grant_key:
                day = dt.datetime.now(dt.UTC).date().isoformat()
                limit = self.config.grants_per_address_day
                if not await asyncio.to_thread(self.accounts.store.take_grant, grant_key, day, limit):
                    log.info("play-money grant refused", extra={"player_id": player, "address": grant_key})
                    continue
            await forward(
                self.backends.wallet.Deposit(
                    w.DepositRequest(
                        account_id=opened.account.account_id,
                        amount=self.config.play_money_grant,
                        idempotency_key=f"gateway:grant:{player}",
                        reference="play-money grant",
                    )
                )
            )
            granted = True
        return granted

    async def _logged_in(self, player: str, how: str) -> g.LoginResponse:
        now = time.time()
        expires = int(now) + self.config.token_ttl
        refresh, refresh_expires = await asyncio.to_thread(self.accounts.issue_refresh, player, now)
        metrics.LOGINS.inc()
        log.info("login", extra={"player_id": player, "how": how})
        reply = g.LoginResponse(
            token=issue(self.config.secret, player, expires),
            player_id=player,
            refresh_token=refresh,
            calls_per_second=self.config.player_rate,
            call_burst=self.config.player_burst,
        )
        reply.expires_at.FromSeconds(expires)
        reply.refresh_expires_at.FromSeconds(int(refresh_expires))
        return reply

    async def _hash(self, fn: Callable[..., T], *args: object) -> T:
        async with self._hashing:
            return await asyncio.to_thread(fn, *args)

    @rpc
    async def Login(self, request: g.LoginRequest, context: grpc.aio.ServicerContext) -> g.LoginResponse:
        who = self._limit(context)
        player = ids.verify_player_id(request.player_id)
        if not request.password:
            if not self.config.dev_login:
                raise errors.unauthenticated(
                    "password required (the gateway's development login is off): sign up, then log in with"
                    " your password",
                    reason=DEV_LOGIN_OFF,
                )
            if await asyncio.to_thread(self.accounts.has_password, player):
                raise errors.unauthenticated(
                    f"player {player!r} has a password: log in with it", reason=PASSWORD_REQUIRED
                )
            await self._open_accounts(player, unfunded_too=True)
            return await self._logged_in(player, "development")
        self._refuse(self.limits.check_login(who.address))
        await self._hash(self.accounts.verify_login, player, request.password, time.time())
        await self._open_accounts(player)
        return await self._logged_in(player, "password")

    @rpc
    async def SignUp(self, request: g.SignUpRequest, context: grpc.aio.ServicerContext) -> g.LoginResponse:
        address = self._limit(context).address
        player = await asyncio.to_thread(self.accounts.verify_sign_up, request.player_id, request.password)
        self._refuse(self.limits.check_signup(address))
        await self._hash(self.accounts.sign_up, player, request.password, time.time())
        metrics.SIGNUPS.inc()
        granted = await self._open_accounts(player, grant_key=address)
        reply = await self._logged_in(player, "sign-up")
        reply.granted = granted
        return reply

    @rpc
    async def Refresh(self, request: g.RefreshRequest, context: grpc.aio.ServicerContext) -> g.LoginResponse:
        self._limit(context)
        player = await asyncio.to_thread(self.accounts.redeem_refresh, request.refresh_token, time.time())
        if not self.config.dev_login and not await asyncio.to_thread(self.accounts.has_password, player):
            raise errors.unauthenticated(
                "this refresh token is from a development login, which is off: log in again", reason=DEV_LOGIN_OFF
            )
        return await self._logged_in(player, "refresh")

    @rpc
    async def ChangePassword(
        self, request: g.ChangePasswordRequest, context: grpc.aio.ServicerContext
    ) -> g.LoginResponse:
        who = self._limit(context)
        claims = self._claims(context)
        self._refuse(self.limits.check_login(who.address))
        if not await asyncio.to_thread(self.accounts.has_password, claims.player_id):
            raise errors.precondition(
                f"player {claims.player_id!r} has no password account (a development login): sign up instead",
                reason=DEV_LOGIN_ONLY,
            )
        await self._hash(
            self.accounts.change_password, claims.player_id, request.old_password, request.new_password, time.time()
        )
        log.info("password changed", extra={"player_id": claims.player_id})
        return await self._logged_in(claims.player_id, "password change")

    @rpc
    async def Lobby(self, request: g.LobbyRequest, context: grpc.aio.ServicerContext) -> g.LobbyResponse:
        claims = self._caller(context)
        listed = await self._forward(
            context, self.backends.dealers.list_tables(d.ListTablesRequest(variant=request.variant))
        )
        tables = [
            g.LobbyTable(
                table_id=t.table_id,
                name=t.config.name,
                variant=t.config.variant,
                currency=t.config.currency,
                stakes=t.config.stakes,
                seats=t.config.seats,
                seats_taken=t.seats_taken,
                min_buy_in=t.min_buy_in,
                max_buy_in=t.max_buy_in,
                hands_dealt=t.hands_dealt,
                average_pot=t.average_pot,
                hands_per_hour=t.hands_per_hour,
            )
            # unlisted tables (a load test's) only to their owner; sorted by id: stable lobby numbers
            for t in sorted(listed.tables, key=lambda t: t.table_id)
            if not t.closed and (not t.config.unlisted or t.config.owner == claims.player_id)
        ]
        return g.LobbyResponse(tables=tables)

    @rpc
    async def Join(self, request: g.JoinRequest, context: grpc.aio.ServicerContext) -> g.JoinResponse:
        claims = self._caller(context, request.player_id)
        sit = d.SitDownRequest(
            table_id=request.table_id,
            player_id=claims.player_id,
            seat=request.seat,
            buy_in=request.buy_in,
            request_id=request.request_id or uuid.uuid4().hex,
            post_now=request.post_now,
        )
        reply = await self._forward(
            context, self.backends.dealers.call(sit.table_id, lambda dealer: dealer.SitDown(sit))
        )
        return g.JoinResponse(seat=reply.seat)

    @rpc
    async def Leave(self, request: g.LeaveRequest, context: grpc.aio.ServicerContext) -> g.LeaveResponse:
        claims = self._caller(context, request.player_id)
        stand = d.SeatCommandRequest(
            table_id=request.table_id, player_id=claims.player_id, request_id=request.request_id or uuid.uuid4().hex
        )
        reply = await self._forward(
            context, self.backends.dealers.call(stand.table_id, lambda dealer: dealer.StandUp(stand))
        )
        return g.LeaveResponse(cashed_out=reply.cashed_out, pending=reply.pending, returning=reply.returning)

    @rpc
    async def MyBalance(self, request: g.MyBalanceRequest, context: grpc.aio.ServicerContext) -> g.MyBalanceResponse:
        claims = self._caller(context, request.player_id)
        reply = g.MyBalanceResponse(player_id=claims.player_id)
        for _, currency, money in PLAYER_ACCOUNTS:
            account_id = ids.player_account_id(claims.player_id, money)
            balance = 0
            try:
                balance = (await self.backends.wallet.GetBalance(w.GetBalanceRequest(account_id=account_id))).balance
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.NOT_FOUND:
                    raise errors.error_from_call(err) from None
            reply.balances.add(currency=currency, account_id=account_id, balance=balance)
        return reply

    @rpc
    async def Cashier(self, request: g.CashierRequest, context: grpc.aio.ServicerContext) -> g.CashierResponse:
        return await self.cashier.overview(self._caller(context).player_id)

    @rpc
    async def CashierDeposit(self, request: g.CashierMoveRequest, context: grpc.aio.ServicerContext) -> g.CashierMove:
        return await self.cashier.deposit(self._caller(context).player_id, request)

    @rpc
    async def CashierWithdraw(self, request: g.CashierMoveRequest, context: grpc.aio.ServicerContext) -> g.CashierMove:
        return await self.cashier.withdraw(self._caller(context).player_id, request)

    @rpc
    async def CashierHistory(
        self, request: g.CashierHistoryRequest, context: grpc.aio.ServicerContext
    ) -> g.CashierHistoryResponse:
        return await self.cashier.history(self._caller(context).player_id, request.limit)

    @rpc
    async def MyHands(self, request: g.MyHandsRequest, context: grpc.aio.ServicerContext) -> g.MyHandsResponse:
        """The token's own recent hands, from every dealer replica (merged, newest first), which ask
        for the token's player only; redacted there for him (his hole cards, others' only where shown
        at the showdown)."""
        claims = self._caller(context, request.player_id)
        if request.limit < 0:
            raise errors.invalid(f"limit: must be 0 (all kept) or positive, not {request.limit}", field="limit")
        kept = await self._forward(
            context,
            self.backends.dealers.player_hands(d.PlayerHandsRequest(player_id=claims.player_id, limit=request.limit)),
        )
        reply = g.MyHandsResponse(player_id=claims.player_id, hands=kept.hands)
        if request.format == g.HANDS_FORMAT_POKERSTARS and kept.hands:
            # one file for tracking tools: oldest first, hands separated by two blank lines
            reply.pokerstars = "\n\n\n".join(h.pokerstars for h in reversed(kept.hands)) + "\n"
        return reply

    # ------------------------------------------------------------------ tournaments
    @rpc
    async def TournamentLobby(
        self, request: t.ListTournamentsRequest, context: grpc.aio.ServicerContext
    ) -> g.TournamentLobbyResponse:
        self._caller(context)
        return await self.tournaments.lobby(request)

    @rpc
    async def GetTournament(
        self, request: t.GetTournamentRequest, context: grpc.aio.ServicerContext
    ) -> t.TournamentInfo:
        self._caller(context)
        return await self.tournaments.page(request.tournament_id)

    @rpc
    async def RegisterTournament(
        self, request: g.MyTournamentEntryRequest, context: grpc.aio.ServicerContext
    ) -> t.TournamentEntryResponse:
        return await self.tournaments.register(self._caller(context, request.player_id).player_id, request)

    @rpc
    async def UnregisterTournament(
        self, request: g.MyTournamentEntryRequest, context: grpc.aio.ServicerContext
    ) -> t.TournamentEntryResponse:
        return await self.tournaments.unregister(self._caller(context, request.player_id).player_id, request)

    @rpc
    async def TournamentRebuy(
        self, request: g.MyTournamentRebuyRequest, context: grpc.aio.ServicerContext
    ) -> t.TournamentEntryResponse:
        return await self.tournaments.rebuy(self._caller(context, request.player_id).player_id, request)

    @rpc
    async def TournamentAddOn(
        self, request: g.MyTournamentEntryRequest, context: grpc.aio.ServicerContext
    ) -> t.TournamentEntryResponse:
        return await self.tournaments.add_on(self._caller(context, request.player_id).player_id, request)

    @rpc
    async def MyTournamentStatus(
        self, request: g.MyTournamentStatusRequest, context: grpc.aio.ServicerContext
    ) -> t.TournamentPlayerStatus:
        claims = self._caller(context, request.player_id)
        return await self.tournaments.status(claims.player_id, request.tournament_id)

    # ------------------------------------------------------------------ play sessions
    def _open_session(self, claims: Claims, who: Caller) -> PlaySession:
        """A new session of the player within his stream cap; his open one (if any) is taken over."""
        if not self.streams.can_open(claims.player_id):
            self._refuse(
                Refusal(
                    STREAM_LIMIT, f"too many open Play streams: at most {self.streams.cap} per player; close one first"
                )
            )
        session = PlaySession(
            self.backends,
            claims,
            f"{who.connection}/{uuid.uuid4().hex[:8]}",
            lambda: self.limits.check(who.connection, who.address, claims.player_id),
            self.presence,
        )
        log.info("play stream opened", extra={"player_id": claims.player_id, "session": session.session_id})
        previous = self.sessions.get(claims.player_id)
        self.sessions[claims.player_id] = session
        if previous is not None:
            log.info("play stream taken over", extra={"player_id": claims.player_id, "session": previous.session_id})
            previous.take_over()
        self.streams.opened(claims.player_id)
        return session

    def _close_session(self, session: PlaySession) -> None:
        player = session.claims.player_id
        self.streams.closed(player)
        if self.sessions.get(player) is session:
            del self.sessions[player]
        log.info("play stream closed", extra={"player_id": player, "session": session.session_id})

    @rpc
    async def Play(
        self, request_iterator: AsyncIterator[g.PlayRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[g.PlayEvent]:
        who = self._limit(context)
        session = self._open_session(self._claims(context), who)
        try:
            async for event in session.run(request_iterator):
                yield event
        finally:
            self._close_session(session)

    @rpc
    async def WatchMyTable(
        self, request: g.WatchMyTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[g.PlayEvent]:
        """Play's outgoing half for gRPC-Web clients: the same session, its requests by TableCommand."""
        who = self._limit(context)
        claims = self._claims(context)
        if not request.table_id:
            raise errors.invalid("table_id: required")
        table_id = ids.verify_table_id(request.table_id)
        session = self._open_session(claims, who)
        try:
            async for event in session.watch(table_id):
                yield event
        finally:
            self._close_session(session)

    @rpc
    async def TableCommand(self, request: g.TableCommandRequest, context: grpc.aio.ServicerContext) -> g.PlayEvent:
        """Play's incoming half for gRPC-Web clients: one request of an open WatchMyTable session."""
        claims = self._caller(context)
        if not request.session_id:
            raise errors.invalid("session_id: required (SessionOpened.session_id of your WatchMyTable stream)")
        session = self.sessions.get(claims.player_id)
        if session is None or not session.one_table or session.public_id != request.session_id:
            raise errors.precondition(
                f"session {errors.clip(request.session_id, 40)!r} is not open: it was closed or taken over by"
                " another session; watch the table again (WatchMyTable)",
                reason=SESSION_NOT_OPEN,
            )
        kind = request.WhichOneof("kind")
        if kind is None:
            raise errors.invalid("empty TableCommand: set act, seat or ping", reason="EMPTY_MESSAGE")
        event = await session.command(g.PlayRequest(request_id=request.request_id, **{kind: getattr(request, kind)}))
        assert event is not None  # only `open` has no answer, and a TableCommand cannot carry one
        return event
