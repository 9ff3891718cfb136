"""Fast tier: the Gateway and GatewayOperator servicers on an in-process gRPC server with
in-memory fakes of the dealer and the wallet — login and its grant, balances when an account
is missing, backend failures passed on with their reason, the operator API's checks."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardroom.runtime import errors
from cardroom.runtime.config import ServiceConfig
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from gateway.clients import Backends
from gateway.config import GatewayConfig
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService
from gateway.tokens import issue
from tests.fast.gateway.fakes import FakeDealer, FakeWallet, backends, rpc_error
from tests.fast.inproc import serving

SECRET = b"fast-secret"


def config(operator_token: str = "op", rate: float = 1000.0, grant: int = 500) -> GatewayConfig:
    service = ServiceConfig("gateway", "127.0.0.1", 0, 0, "none", Path("."), "INFO", 0.0, 0.0)
    return GatewayConfig(
        service=service,
        secret=SECRET,
        token_ttl=3600,
        dealer_addr="",
        wallet_addr="",
        monitor_addr=None,
        rate=rate,
        burst=rate,
        heartbeat_seconds=1.0,
        play_money_grant=grant,
        operator_token=operator_token,
        dev_login=True,
    )


Scenario = Callable[[g_grpc.GatewayStub, g_grpc.GatewayOperatorStub], Coroutine[Any, Any, None]]


def run(back: Backends, scenario: Scenario, cfg: GatewayConfig | None = None) -> None:
    cfg = cfg or config()

    def add(servicers: tuple[GatewayService, GatewayOperatorService], server: grpc.aio.Server) -> None:
        g_grpc.add_GatewayServicer_to_server(servicers[0], server)
        g_grpc.add_GatewayOperatorServicer_to_server(servicers[1], server)

    async def main() -> None:
        servicers = (GatewayService(cfg, back), GatewayOperatorService(cfg.operator_token, back))
        servicers[0].presence.start()  # as gateway.server does
        try:
            async with serving(add, servicers) as address, grpc.aio.insecure_channel(address) as channel:
                await asyncio.wait_for(scenario(g_grpc.GatewayStub(channel), g_grpc.GatewayOperatorStub(channel)), 20)
        finally:
            await servicers[0].presence.stop()

    asyncio.run(main())


def auth(player: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {issue(SECRET, player, int(time.time()) + 600)}")]


async def failure(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value


def test_login_opens_both_accounts_and_grants_play_money_once() -> None:
    wallet = FakeWallet()

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        reply = await stub.Login(g.LoginRequest(player_id="ann"))
        assert reply.player_id == "ann" and reply.token.startswith("cr1.ann.")
        await stub.Login(g.LoginRequest(player_id="ann"))
        assert wallet.balances == {"player_cash:ann:cash": 0, "player_play:ann:play": 500}
        assert [m for m, _ in wallet.calls].count("Deposit") == 1
        err = await failure(stub.Login(g.LoginRequest(player_id="_ann")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ID")
        assert [v.field for v in errors.violations_of(err)] == ["player_id"]

    run(backends(wallet=wallet), scenario)


class SlowDeposits(FakeWallet):
    """A wallet whose deposits take half a second: a caller with a shorter deadline gives up meanwhile."""

    async def Deposit(self, request: Any, **kw: Any) -> Any:  # noqa: N802
        await asyncio.sleep(0.5)
        return await super().Deposit(request, **kw)


def test_a_login_given_up_between_the_opening_and_the_grant_still_grants() -> None:
    """Found by a load test on a slow machine (2026-12-08): 91 players had a play account at 0 and no grant
    ("buy-in: amount: 200 exceeds the balance 0"). Their first login ended between the account's opening and the
    grant's deposit; every later login's OpenAccount said the account existed, so none granted. Now the opening
    runs to its end when its caller gives up."""
    wallet = SlowDeposits()

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        err = await failure(stub.Login(g.LoginRequest(player_id="ann"), timeout=0.2))
        assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        await asyncio.sleep(0.6)
        assert wallet.balances["player_play:ann:play"] == 500

    run(backends(wallet=wallet), scenario)


def test_a_play_account_left_unfunded_gets_the_grant_at_the_next_development_login() -> None:
    """The same gap when the wallet's answer is what got lost (or the gateway stopped): the account is at 0 with
    no transfer, and the next development login (no limit by address there) deposits the grant, once."""
    down = rpc_error(grpc.StatusCode.UNAVAILABLE, "wallet restarting")
    wallet = FakeWallet(fail={"Deposit": down})

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        assert (await failure(stub.Login(g.LoginRequest(player_id="ann")))).code() == grpc.StatusCode.UNAVAILABLE
        assert wallet.balances["player_play:ann:play"] == 0
        del wallet.fail["Deposit"]
        await stub.Login(g.LoginRequest(player_id="ann"))
        await stub.Login(g.LoginRequest(player_id="ann"))
        assert wallet.balances["player_play:ann:play"] == 500
        assert [m for m, _ in wallet.calls].count("Deposit") == 2  # the failed one, then one grant
        wallet.balances["player_play:ann:play"] = 0  # lost at the tables: not unfunded, no new grant
        wallet._record("lost", from_account="player_play:ann:play", to_account="table_escrow:t:play", amount=500)
        await stub.Login(g.LoginRequest(player_id="ann"))
        assert wallet.balances["player_play:ann:play"] == 0

    run(backends(wallet=wallet), scenario)


def test_a_wallet_failure_at_login_is_passed_on_with_its_reason() -> None:
    down = rpc_error(
        grpc.StatusCode.UNAVAILABLE,
        error=errors.unavailable("ledger storage unavailable", reason="STORAGE_UNAVAILABLE"),
    )
    wallet = FakeWallet(fail={"OpenAccount": down})

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        err = await failure(stub.Login(g.LoginRequest(player_id="ann")))
        assert (err.code(), err.details(), errors.reason_of(err)) == (
            grpc.StatusCode.UNAVAILABLE,
            "ledger storage unavailable",
            "STORAGE_UNAVAILABLE",
        )

    run(backends(wallet=wallet), scenario)


def test_balances_count_a_missing_account_as_zero_but_pass_other_failures_on() -> None:
    wallet = FakeWallet(balances={"player_play:ann:play": 70})

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        reply = await stub.MyBalance(g.MyBalanceRequest(), metadata=auth("ann"))
        assert [(b.currency, b.account_id, b.balance) for b in reply.balances] == [
            (common_pb2.CURRENCY_CASH, "player_cash:ann:cash", 0),
            (common_pb2.CURRENCY_PLAY, "player_play:ann:play", 70),
        ]
        wallet.fail["GetBalance"] = rpc_error(grpc.StatusCode.INTERNAL, "disk on fire")
        err = await failure(stub.MyBalance(g.MyBalanceRequest(), metadata=auth("ann")))
        assert (err.code(), err.details()) == (grpc.StatusCode.INTERNAL, "disk on fire")
        err = await failure(stub.MyBalance(g.MyBalanceRequest(player_id="bob"), metadata=auth("ann")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.PERMISSION_DENIED, "OTHER_PLAYER")
        err = await failure(stub.MyBalance(g.MyBalanceRequest()))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")

    run(backends(wallet=wallet), scenario)


def test_join_leave_and_lobby_forward_to_the_dealer_for_the_token_s_player() -> None:
    taken = rpc_error(
        grpc.StatusCode.ALREADY_EXISTS, error=errors.exists("ann is already seated at t1", reason="ALREADY_SEATED")
    )
    dealer = FakeDealer(
        answers={
            "SitDown": [d.SeatResponse(seat=d.SeatView(seat=3, player_id="ann", stack=200)), taken],
            "StandUp": [d.StandUpResponse(cashed_out=200)],
            "ListTables": [
                d.ListTablesResponse(
                    tables=[d.TableInfo(table_id="open", seats_taken=1), d.TableInfo(table_id="shut", closed=True)]
                )
            ],
        }
    )

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        joined = await stub.Join(g.JoinRequest(table_id="t1", buy_in=200), metadata=auth("ann"))
        assert joined.seat.seat == 3
        method, request = dealer.calls[-1]
        assert (method, request.player_id, request.buy_in) == ("SitDown", "ann", 200) and request.request_id
        err = await failure(stub.Join(g.JoinRequest(table_id="t1", buy_in=200), metadata=auth("ann")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_SEATED")
        left = await stub.Leave(g.LeaveRequest(table_id="t1"), metadata=auth("ann"))
        assert left.cashed_out == 200 and dealer.calls[-1][1].player_id == "ann"
        lobby = await stub.Lobby(g.LobbyRequest(), metadata=auth("ann"))
        assert [t.table_id for t in lobby.tables] == ["open"]  # closed tables are not listed

    run(backends(dealer), scenario)


def test_calls_over_the_rate_are_resource_exhausted() -> None:
    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        codes = []
        for _ in range(6):
            try:
                await stub.Login(g.LoginRequest(player_id="ann"))
                codes.append(grpc.StatusCode.OK)
            except grpc.aio.AioRpcError as err:
                codes.append(err.code())
                assert errors.reason_of(err) == errors.RATE_LIMITED
        assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) >= 3 and codes[0] == grpc.StatusCode.OK

    run(backends(), scenario, config(rate=2))


def test_operator_api_checks_its_token_and_funds_through_the_wallet() -> None:
    wallet = FakeWallet()
    dealer = FakeDealer(answers={"CreateTable": [lambda r: d.TableInfo(table_id=r.table_id, config=r.config)]})
    ops = [("authorization", "Operator op")]

    async def scenario(_: g_grpc.GatewayStub, operator: g_grpc.GatewayOperatorStub) -> None:
        fund = g.FundPlayerRequest(player_id="bot1", currency=common_pb2.CURRENCY_PLAY, amount=300, idempotency_key="k")
        err = await failure(operator.FundPlayer(fund, metadata=auth("bot1")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.PERMISSION_DENIED, "OPERATOR_ONLY")
        err = await failure(operator.FundPlayer(fund, metadata=[("authorization", "Operator nope")]))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        assert wallet.calls == []  # refused before the wallet was asked
        funded = await operator.FundPlayer(fund, metadata=ops)
        assert (funded.account_id, funded.balance) == ("player_play:bot1:play", 300)
        deposit = next(r for m, r in wallet.calls if m == "Deposit")
        assert deposit.idempotency_key == "operator:k"
        info = await operator.CreateTable(
            d.CreateTableRequest(table_id="b-1", config=d.TableConfig(variant="NT")), metadata=ops
        )
        assert info.table_id == "b-1" and dealer.calls[-1][0] == "CreateTable"

    run(backends(dealer, wallet), scenario)


def test_operator_api_is_off_without_a_token() -> None:
    async def scenario(_: g_grpc.GatewayStub, operator: g_grpc.GatewayOperatorStub) -> None:
        err = await failure(
            operator.CreateTable(d.CreateTableRequest(table_id="x"), metadata=[("authorization", "Operator ")])
        )
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.PERMISSION_DENIED, "OPERATOR_OFF")

    run(backends(), scenario, config(operator_token=""))


def test_a_play_stream_beyond_the_players_cap_is_refused_and_takes_nothing_over() -> None:
    """Issue 14 item 3, "one player held 300 Play streams": GATEWAY_MAX_PLAY_STREAMS open streams per
    player; the one beyond is refused before it can take over the open one."""

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        first_in: asyncio.Queue[g.PlayRequest | None] = asyncio.Queue()

        async def requests() -> Any:
            while (item := await first_in.get()) is not None:
                yield item

        first = stub.Play(requests(), metadata=auth("ann"))
        await first_in.put(g.PlayRequest(request_id="p1", ping=g.Ping()))
        assert (await first.read()).WhichOneof("kind") == "pong"
        second = stub.Play(iter([g.PlayRequest(ping=g.Ping())]), metadata=auth("ann"))
        err = await failure(second.read())
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "PLAY_STREAM_LIMIT")
        assert "at most 1 per player" in (err.details() or "")
        other = stub.Play(iter([g.PlayRequest(ping=g.Ping())]), metadata=auth("bob"))  # another player's own cap
        assert (await other.read()).WhichOneof("kind") == "pong"
        await first_in.put(g.PlayRequest(request_id="p2", ping=g.Ping()))
        assert (await first.read()).WhichOneof("kind") == "pong"  # still open: not taken over
        await first_in.put(None)
        other.cancel()

    run(backends(), scenario, dataclasses.replace(config(), max_play_streams=1))


def test_the_development_login_cannot_enter_a_password_account() -> None:
    """With GATEWAY_DEV_LOGIN on, ids without a password still log in without one; an id that signed
    up needs its password."""
    wallet = FakeWallet()

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        signed = await stub.SignUp(g.SignUpRequest(player_id="ann", password="ann's password"))
        assert signed.granted and wallet.balances["player_play:ann:play"] == 500
        err = await failure(stub.Login(g.LoginRequest(player_id="ann")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.UNAUTHENTICATED, "PASSWORD_REQUIRED")
        assert (await stub.Login(g.LoginRequest(player_id="ann", password="ann's password"))).player_id == "ann"
        assert (await stub.Login(g.LoginRequest(player_id="bob"))).player_id == "bob"
        err = await failure(
            stub.ChangePassword(
                g.ChangePasswordRequest(old_password="", new_password="bob's new password"), metadata=auth("bob")
            )
        )
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.FAILED_PRECONDITION, "DEV_LOGIN_ONLY")

    run(backends(wallet=wallet), scenario)


def test_a_grant_refused_at_sign_up_is_not_given_at_a_password_login() -> None:
    """The limit of grants by address (rules of the sign-up) holds: an unfunded account of a password player is
    not topped up at his login, only a development login's is."""
    wallet = FakeWallet()

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        signed = await stub.SignUp(g.SignUpRequest(player_id="ann", password="ann's password"))
        assert not signed.granted
        await stub.Login(g.LoginRequest(player_id="ann", password="ann's password"))
        assert wallet.balances["player_play:ann:play"] == 0

    run(backends(wallet=wallet), scenario, dataclasses.replace(config(), grants_per_address_day=0))
