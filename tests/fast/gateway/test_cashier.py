"""Fast tier: the gateway's cashier (issue 13) — a player's own money through the wallet's API:
balances with the chips at tables, play money at once up to a daily limit, real money waiting for
an operator's approval, the ledger's history. In-process gRPC server, in-memory wallet/dealer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import grpc

from cardroom.runtime import errors
from cardroom.runtime.config import ServiceConfig
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from gateway.config import GatewayConfig
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService
from tests.fast.gateway.fakes import FakeDealer, FakeWallet, backends
from tests.fast.gateway.test_gateway_service import SECRET, auth, failure
from tests.fast.inproc import serving

PLAY, CASH = common_pb2.CURRENCY_PLAY, common_pb2.CURRENCY_CASH
OPS = [("authorization", "Operator op")]


def run(back: Any, scenario: Any, limit: int = 1000) -> None:
    service = ServiceConfig("gateway", "127.0.0.1", 0, 0, "none", Path("."), "INFO", 0.0, 0.0)
    cfg = GatewayConfig(
        service=service,
        secret=SECRET,
        token_ttl=3600,
        dealer_addr="",
        wallet_addr="",
        monitor_addr=None,
        rate=1000.0,
        burst=1000.0,
        heartbeat_seconds=1.0,
        play_money_grant=0,
        operator_token="op",
        play_money_daily_limit=limit,
        dev_login=True,
    )

    def add(servicers: Any, server: grpc.aio.Server) -> None:
        g_grpc.add_GatewayServicer_to_server(servicers[0], server)
        g_grpc.add_GatewayOperatorServicer_to_server(servicers[1], server)

    async def main() -> None:
        gateway = GatewayService(cfg, back)
        servicers = (gateway, GatewayOperatorService("op", back, gateway.cashier))
        async with serving(add, servicers) as address, grpc.aio.insecure_channel(address) as channel:
            await asyncio.wait_for(scenario(g_grpc.GatewayStub(channel), g_grpc.GatewayOperatorStub(channel)), 20)

    asyncio.run(main())


def tables_with(player: str, stack: int, bet: int) -> FakeDealer:
    info = d.TableInfo(table_id="t1", seats_taken=2, config=d.TableConfig(currency=PLAY))
    state = d.TableState(
        seats=[
            d.SeatView(seat=1, player_id=player, stack=stack, bet=bet),
            d.SeatView(seat=2, player_id="bob", stack=999),
        ]
    )
    return FakeDealer(answers={"ListTables": [d.ListTablesResponse(tables=[info])], "GetTable": [state]})


def test_play_money_is_granted_at_once_up_to_the_daily_limit() -> None:
    wallet = FakeWallet(balances={"player_play:ann:play": 0, "player_cash:ann:cash": 0})

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        me = auth("ann")
        done = await stub.CashierDeposit(g.CashierMoveRequest(currency=PLAY, amount=600, request_id="r1"), metadata=me)
        assert done.status == g.CashierMove.STATUS_DONE and done.balance == 600
        again = await stub.CashierDeposit(g.CashierMoveRequest(currency=PLAY, amount=600, request_id="r1"), metadata=me)
        assert again.balance == 600 and wallet.balances["player_play:ann:play"] == 600  # the same request
        err = await failure(
            stub.CashierDeposit(g.CashierMoveRequest(currency=PLAY, amount=500, request_id="r2"), metadata=me)
        )
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and errors.reason_of(err) == "DAILY_LIMIT"
        assert "400 left today" in (err.details() or "")
        await stub.CashierDeposit(g.CashierMoveRequest(currency=PLAY, amount=400, request_id="r3"), metadata=me)
        view = await stub.Cashier(g.CashierRequest(), metadata=me)
        play = next(b for b in view.balances if b.currency == PLAY)
        assert (play.wallet, play.deposited_today, play.daily_limit) == (1000, 1000, 1000)
        err = await failure(
            stub.CashierDeposit(g.CashierMoveRequest(currency=PLAY, amount=0, request_id="r4"), metadata=me)
        )
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT

    run(backends(dealer=FakeDealer(answers={"ListTables": [d.ListTablesResponse()]}), wallet=wallet), scenario)


def test_real_money_waits_for_the_operator_and_moves_once_approved() -> None:
    wallet = FakeWallet(balances={"player_play:ann:play": 0, "player_cash:ann:cash": 300})

    async def scenario(stub: g_grpc.GatewayStub, operator: g_grpc.GatewayOperatorStub) -> None:
        me = auth("ann")
        asked = await stub.CashierDeposit(
            g.CashierMoveRequest(currency=CASH, amount=5000, request_id="d1"), metadata=me
        )
        assert asked.status == g.CashierMove.STATUS_PENDING and wallet.balances["player_cash:ann:cash"] == 300
        out = await stub.CashierWithdraw(g.CashierMoveRequest(currency=CASH, amount=200, request_id="w1"), metadata=me)
        assert out.status == g.CashierMove.STATUS_PENDING
        err = await failure(
            stub.CashierWithdraw(g.CashierMoveRequest(currency=CASH, amount=301, request_id="w2"), metadata=me)
        )
        assert errors.reason_of(err) == "INSUFFICIENT_FUNDS"
        view = await stub.Cashier(g.CashierRequest(), metadata=me)
        assert sorted(m.move_id for m in view.pending) == ["ann:d1", "ann:w1"]
        err = await failure(operator.PendingCashierMoves(g.PendingCashierMovesRequest(), metadata=me))
        assert err.code() == grpc.StatusCode.PERMISSION_DENIED  # a player is no operator
        pending = await operator.PendingCashierMoves(g.PendingCashierMovesRequest(), metadata=OPS)
        assert len(pending.moves) == 2
        ok = await operator.DecideCashierMove(g.DecideCashierMoveRequest(move_id="ann:d1", approve=True), metadata=OPS)
        assert ok.status == g.CashierMove.STATUS_DONE and wallet.balances["player_cash:ann:cash"] == 5300
        no = await operator.DecideCashierMove(
            g.DecideCashierMoveRequest(move_id="ann:w1", approve=False, note="documents missing"), metadata=OPS
        )
        assert no.status == g.CashierMove.STATUS_REJECTED and wallet.balances["player_cash:ann:cash"] == 5300
        err = await failure(
            operator.DecideCashierMove(g.DecideCashierMoveRequest(move_id="ann:d1", approve=True), metadata=OPS)
        )
        assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and wallet.balances["player_cash:ann:cash"] == 5300
        history = await stub.CashierHistory(g.CashierHistoryRequest(), metadata=me)
        assert [(e.what, e.amount, e.currency) for e in history.entries] == [("deposit", 5000, CASH)]

    run(backends(dealer=FakeDealer(answers={"ListTables": [d.ListTablesResponse()]}), wallet=wallet), scenario)


def test_the_balance_counts_the_chips_at_tables() -> None:
    wallet = FakeWallet(balances={"player_play:ann:play": 250, "player_cash:ann:cash": 0})

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        view = await stub.Cashier(g.CashierRequest(), metadata=auth("ann"))
        play = next(b for b in view.balances if b.currency == PLAY)
        assert (play.wallet, play.at_tables, play.total) == (250, 700, 950)

    run(backends(dealer=tables_with("ann", 680, 20), wallet=wallet), scenario)
