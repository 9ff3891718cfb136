"""The tournament service's port to the wallet: idempotent transfers and account opening.

:class:`GrpcBank` talks to the wallet service; the fast tier uses
``tests/fast/tournament/fakes.py``'s in-memory bank with the same contract. A refusal (not enough
funds, a bad account) is :class:`Refused` with the wallet's status; an unreachable wallet is
:class:`Unavailable` (the transfer may be retried with the same key)."""

from __future__ import annotations

from typing import Any, Protocol, cast

import grpc

from cardroom.runtime.deadlines import insecure_channel
from cardroom.runtime.errors import error_from_call
from cardroom.v1 import wallet_pb2, wallet_pb2_grpc
from tournament.store import MoneyOp

AK = wallet_pb2.AccountKind
_RETRYABLE = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.ABORTED,
)


class Refused(Exception):
    """The wallet refused the transfer (nothing moved)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Unavailable(Exception):
    """The wallet could not be reached; the outcome is unknown (retry with the same key)."""


class Bank(Protocol):
    async def open_account(self, kind: int, owner: str) -> str: ...

    async def transfer(self, op: MoneyOp) -> bool:
        """Move the money once per key; True when it was a replay of an earlier transfer."""
        ...

    async def balance(self, account: str) -> int | None:
        """The balance, or None when the account does not exist."""
        ...

    async def close(self) -> None: ...


class GrpcBank:
    def __init__(self, address: str, timeout: float = 5.0) -> None:
        self.channel = insecure_channel(address, default_timeout=timeout)
        self.stub = wallet_pb2_grpc.WalletStub(self.channel)

    async def open_account(self, kind: int, owner: str) -> str:
        try:
            reply = await self.stub.OpenAccount(wallet_pb2.OpenAccountRequest(kind=cast(Any, kind), owner=owner))
        except grpc.RpcError as err:
            raise self._error(err) from None
        return str(reply.account.account_id)

    async def transfer(self, op: MoneyOp) -> bool:
        request = wallet_pb2.TransferRequest(
            from_account=op.source,
            to_account=op.target,
            amount=op.amount,
            kind=cast(Any, op.kind),
            reference=op.reference,
            idempotency_key=op.key,
        )
        try:
            reply = await self.stub.Transfer(request)
        except grpc.RpcError as err:
            raise self._error(err) from None
        return bool(reply.replayed)

    async def balance(self, account: str) -> int | None:
        try:
            reply = await self.stub.GetBalance(wallet_pb2.GetBalanceRequest(account_id=account))
        except grpc.RpcError as err:
            if err.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise self._error(err) from None
        return int(reply.balance)

    @staticmethod
    def _error(err: grpc.RpcError) -> Exception:
        code = err.code()
        if code in _RETRYABLE:
            return Unavailable(f"wallet: {err.details() or code.name}")
        return Refused(code, error_from_call(err, "wallet: ").message)

    async def close(self) -> None:
        await self.channel.close()


__all__ = ["Bank", "GrpcBank", "Refused", "Unavailable"]
