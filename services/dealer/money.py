"""The dealer's calls to the wallet: escrow account, buy-ins, cash-outs (all idempotent)."""

from __future__ import annotations

from typing import cast

import grpc

from cardroom.core import ids
from cardroom.runtime.deadlines import insecure_channel
from cardroom.runtime.errors import error_from_call
from cardroom.v1 import common_pb2, wallet_pb2, wallet_pb2_grpc
from dealer.errors import DealerError, precondition, unavailable
from dealer.fences import Fences

AK = wallet_pb2.AccountKind
TK = wallet_pb2.TransferKind
# Keyed by int: callers pass the proto's Currency (an int subclass) or a plain int read from it.
_CURRENCY: dict[int, ids.Currency] = {
    common_pb2.CURRENCY_CASH: ids.Currency.CASH,
    common_pb2.CURRENCY_PLAY: ids.Currency.PLAY,
}

#: The currency's label in metrics (the wallet's too: ``wallet_table_escrow_cents{currency="cash"}``).
CURRENCY_SLUG: dict[int, str] = {proto: currency.value for proto, currency in _CURRENCY.items()}


def _proto_currency(currency: int) -> common_pb2.Currency:
    # cast only: a proto enum value is a plain int at runtime, and this one came from a Currency field
    return cast(common_pb2.Currency, currency)


def player_account(player: str, currency: int) -> str:
    return ids.player_account_id(player, _CURRENCY[currency])


def escrow_account(table_id: str, currency: int) -> str:
    return ids.escrow_account_id(table_id, _CURRENCY[currency])


def _mapped(err: grpc.aio.AioRpcError, what: str) -> DealerError:
    code = err.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return unavailable(f"wallet unavailable ({what}); retry with the same request_id")
    if code == grpc.StatusCode.NOT_FOUND:
        return precondition(f"{what}: {err.details()} (open a wallet account first)")
    return error_from_call(err, f"{what}: ")


class Wallet:
    """A thin async client of the wallet service."""

    def __init__(self, address: str, timeout: float = 5.0, fences: Fences | None = None) -> None:
        self.channel = insecure_channel(address, timeout)
        self.stub = wallet_pb2_grpc.WalletStub(self.channel)
        #: This replica's holds on the partitions of the tables: every escrow call carries its table's
        #: fence, and a ``fenced`` refusal releases the partition (docs/sharding.md).
        self.fences = fences or Fences()

    def _refused(
        self, err: grpc.aio.AioRpcError, what: str, table_id: str, fence: common_pb2.TableFence | None
    ) -> DealerError:
        error = _mapped(err, what)
        if fence is not None:
            self.fences.refused(error, table_id, fence.epoch)
        return error

    async def claim_tables(self, partition: int, epoch: int) -> None:
        """Tell the wallet this replica now holds ``partition`` at ``epoch``: lower epochs are refused
        from now on. FAILED_PRECONDITION: a later claim exists (this one is stale)."""
        try:
            await self.stub.ClaimTables(
                wallet_pb2.ClaimTablesRequest(fence=common_pb2.TableFence(partition=partition, epoch=epoch))
            )
        except grpc.aio.AioRpcError as err:
            raise _mapped(err, f"claiming partition {partition} of the tables") from None

    async def open_escrow(self, table_id: str, currency: int) -> None:
        try:
            await self.stub.OpenAccount(
                wallet_pb2.OpenAccountRequest(
                    kind=AK.ACCOUNT_KIND_TABLE_ESCROW, owner=table_id, currency=_proto_currency(currency)
                )
            )
        except grpc.aio.AioRpcError as err:
            raise _mapped(err, "opening the table escrow account") from None

    async def buy_in(self, table_id: str, player: str, currency: int, amount: int, key: str) -> None:
        """Player account -> table escrow (a replayed key does not move money again)."""
        fence = self.fences.of(table_id)
        try:
            await self.stub.Transfer(
                wallet_pb2.TransferRequest(
                    from_account=player_account(player, currency),
                    to_account=escrow_account(table_id, currency),
                    amount=amount,
                    kind=TK.TRANSFER_KIND_BUY_IN,
                    reference=f"table:{table_id}",
                    idempotency_key=key,
                    fence=fence,
                )
            )
        except grpc.aio.AioRpcError as err:
            raise self._refused(err, "buy-in", table_id, fence) from None

    async def cash_out(self, table_id: str, player: str, currency: int, amount: int, key: str) -> None:
        """Table escrow -> player account."""
        fence = self.fences.of(table_id)
        try:
            await self.stub.Transfer(
                wallet_pb2.TransferRequest(
                    from_account=escrow_account(table_id, currency),
                    to_account=player_account(player, currency),
                    amount=amount,
                    kind=TK.TRANSFER_KIND_CASH_OUT,
                    reference=f"table:{table_id}",
                    idempotency_key=key,
                    fence=fence,
                )
            )
        except grpc.aio.AioRpcError as err:
            raise self._refused(err, "cash-out", table_id, fence) from None

    async def reconcile_escrow(
        self, table_id: str, currency: int, seated: list[str], request_id: str, settled_hand_id: str = ""
    ) -> wallet_pb2.ReconcileEscrowResponse:
        """After recovery: the wallet pays back every position in the table's escrow of a player not in
        ``seated`` (all of them for an empty table), once per ``request_id``. ``settled_hand_id``, the
        last hand settled at the table, makes the wallet wait (FAILED_PRECONDITION) until it applied it."""
        fence = self.fences.of(table_id)
        try:
            reply: wallet_pb2.ReconcileEscrowResponse = await self.stub.ReconcileEscrow(
                wallet_pb2.ReconcileEscrowRequest(
                    request_id=request_id,
                    escrow_account=escrow_account(table_id, currency),
                    seated_player_ids=sorted(seated),
                    settled_hand_id=settled_hand_id,
                    fence=fence,
                )
            )
        except grpc.aio.AioRpcError as err:
            raise self._refused(err, "reconciling the table escrow", table_id, fence) from None
        return reply

    async def close(self) -> None:
        await self.channel.close()
