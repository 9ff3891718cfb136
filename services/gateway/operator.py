"""The GatewayOperator servicer: what tools (the bots) need from the dealer and the wallet —
create a table, fund a player — behind the operator token, never a player's login token."""

from __future__ import annotations

import hmac
import logging
import uuid

import grpc

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.runtime.errors import rpc
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc, wallet_pb2 as w
from gateway.cashier import Cashier
from gateway.clients import Backends, forward

log = logging.getLogger("gateway.operator")

OPERATOR_OFF = "OPERATOR_OFF"
#: currency -> (account kind, the ids module's currency) of a player's account in it.
PLAYER_ACCOUNT = {
    common_pb2.CURRENCY_CASH: (w.ACCOUNT_KIND_PLAYER_CASH, ids.Currency.CASH),
    common_pb2.CURRENCY_PLAY: (w.ACCOUNT_KIND_PLAYER_PLAY, ids.Currency.PLAY),
}


def check_operator(context: grpc.aio.ServicerContext, token: str) -> None:
    """Pass when the call carries ``authorization: Operator <token>``; else the error saying why."""
    if not token:
        raise errors.denied(
            "the operator API is off: start the gateway with GATEWAY_OPERATOR_TOKEN", reason=OPERATOR_OFF
        )
    for key, value in context.invocation_metadata() or ():
        if key.lower() != "authorization" or not isinstance(value, str):
            continue
        scheme, _, given = value.strip().partition(" ")
        if scheme.lower() == "bearer":
            raise errors.denied("a player's token cannot make operator calls", reason=errors.OPERATOR_ONLY)
        if scheme.lower() == "operator" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return
        break
    raise errors.unauthenticated(
        "operator calls need metadata 'authorization: Operator <GATEWAY_OPERATOR_TOKEN>'", reason=errors.TOKEN_INVALID
    )


class GatewayOperatorService(gateway_pb2_grpc.GatewayOperatorServicer):
    def __init__(self, token: str, backends: Backends, cashier: Cashier | None = None) -> None:
        self.token = token
        self.backends = backends
        self.cashier = cashier

    def _cashier(self) -> Cashier:
        if self.cashier is None:
            raise errors.precondition("the cashier is not wired to the operator API", reason="NO_CASHIER")
        return self.cashier

    @rpc
    async def PendingCashierMoves(
        self, request: g.PendingCashierMovesRequest, context: grpc.aio.ServicerContext
    ) -> g.PendingCashierMovesResponse:
        check_operator(context, self.token)
        return g.PendingCashierMovesResponse(moves=self._cashier().step.pending())

    @rpc
    async def DecideCashierMove(
        self, request: g.DecideCashierMoveRequest, context: grpc.aio.ServicerContext
    ) -> g.CashierMove:
        check_operator(context, self.token)
        move = await self._cashier().decide(request.move_id, request.approve, request.note)
        log.info("operator decided a cashier request", extra={"move_id": move.move_id, "approve": request.approve})
        return move

    @rpc
    async def CreateTable(self, request: d.CreateTableRequest, context: grpc.aio.ServicerContext) -> d.TableInfo:
        check_operator(context, self.token)
        dealers = self.backends.dealers
        if not request.table_id:  # named here, as the dealer would: the id names its partition and owner
            forwarded = d.CreateTableRequest()
            forwarded.CopyFrom(request)
            forwarded.request_id = request.request_id or uuid.uuid4().hex
            forwarded.table_id = ids.created_table_id(forwarded.request_id)
            request = forwarded
        info = await forward(dealers.call(request.table_id, lambda dealer: dealer.CreateTable(request, timeout=10)))
        log.info("operator created a table", extra={"table_id": info.table_id})
        return info

    @rpc
    async def FundPlayer(self, request: g.FundPlayerRequest, context: grpc.aio.ServicerContext) -> g.FundPlayerResponse:
        check_operator(context, self.token)
        player = ids.verify_player_id(request.player_id)
        if request.currency not in PLAYER_ACCOUNT:
            raise errors.invalid(f"currency: CASH or PLAY, got {request.currency}")
        if request.amount <= 0:
            raise errors.invalid(f"amount: must be a positive number of minor units, got {request.amount}")
        if not request.idempotency_key:
            raise errors.invalid("idempotency_key: required (one key per intended deposit)")
        kind, currency = PLAYER_ACCOUNT[request.currency]
        wallet = self.backends.wallet
        await forward(wallet.OpenAccount(w.OpenAccountRequest(kind=kind, owner=player, currency=request.currency)))
        account_id = ids.player_account_id(player, currency)
        reply = await forward(
            wallet.Deposit(
                w.DepositRequest(
                    account_id=account_id,
                    amount=request.amount,
                    idempotency_key=f"operator:{request.idempotency_key}",
                    reference=request.reference or "operator funding",
                )
            )
        )
        return g.FundPlayerResponse(
            account_id=account_id, balance=reply.transfer.to_balance_after, replayed=reply.replayed
        )
