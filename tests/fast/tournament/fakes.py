"""In-memory fakes for the tournament service's fast tier: a bank with the wallet's contract
(idempotent by key, no account below zero except external, routes by kind as the ledger has them)."""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc

from tournament.bank import Refused, Unavailable
from tournament.store import MoneyOp
from wallet.ledger import LedgerError, TransferSpec


@dataclass
class FakeBank:
    balances: dict[str, int] = field(default_factory=dict)
    transfers: dict[str, MoneyOp] = field(default_factory=dict)
    down: bool = False

    async def open_account(self, kind: int, owner: str) -> str:
        return owner

    def fund(self, account: str, amount: int) -> None:
        self.balances[account] = self.balances.get(account, 0) + amount
        self.balances["external:house:cash"] = self.balances.get("external:house:cash", 0) - amount

    async def transfer(self, op: MoneyOp) -> bool:
        if self.down:
            raise Unavailable("wallet: down")
        seen = self.transfers.get(op.key)
        if seen is not None:
            if seen != op:
                raise Refused(grpc.StatusCode.ALREADY_EXISTS, "idempotency_key: reused")
            return True
        try:
            TransferSpec(op.source, op.target, op.amount, op.kind, op.reference, op.key).validate()
        except LedgerError as exc:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, exc.message) from None
        have = self.balances.get(op.source, 0)
        if have < op.amount and not op.source.startswith("external:"):
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, f"amount: {op.source} holds {have}")
        self.balances[op.source] = have - op.amount
        self.balances[op.target] = self.balances.get(op.target, 0) + op.amount
        self.transfers[op.key] = op
        return False

    async def balance(self, account: str) -> int | None:
        if self.down:
            raise Unavailable("wallet: down")
        return self.balances.get(account)

    async def close(self) -> None:
        return None

    def total(self) -> int:
        return sum(self.balances.values())
