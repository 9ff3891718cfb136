"""Per-player positions inside a table escrow (issue 14 item 7), with no storage.

A buy-in into an escrow credits the buying player's position; a cash-out debits it; a settled hand
adds each seat's net to its player's position (the rake is what the nets leave out: sum(net) + rake
== 0, so the positions drop by exactly the rake the escrow pays). Invariant: the escrow's balance
equals the sum of its positions. :func:`reconcile_plan` is what pays every position back.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from wallet import ledger
from wallet.ledger import AK, TK, ErrorKind, LedgerError, TransferSpec


@dataclass
class EscrowPositions:
    """Player account id -> chips of that player inside one table escrow (all positions >= 0)."""

    escrow: str
    positions: dict[str, int] = field(default_factory=dict)

    def total(self) -> int:
        return sum(self.positions.values())

    def apply_transfer(self, spec: TransferSpec) -> None:
        """A buy-in into this escrow credits the payer; a cash-out from it debits the payee."""
        if spec.kind == TK.TRANSFER_KIND_BUY_IN and spec.to_account == self.escrow:
            self._add(spec.from_account, spec.amount)
        elif spec.kind == TK.TRANSFER_KIND_CASH_OUT and spec.from_account == self.escrow:
            self._add(spec.to_account, -spec.amount)

    def apply_hand(self, nets: Iterable[tuple[str, int]]) -> None:
        """Each ``(player account, net)`` of a settled hand; all or nothing."""
        after = dict(self.positions)
        for account, net in nets:
            after[account] = after.get(account, 0) + net
        negative = sorted(a for a, v in after.items() if v < 0)
        if negative:
            raise LedgerError(ErrorKind.PRECONDITION, f"results: position of {negative[0]!r} would go below zero")
        self.positions = {a: v for a, v in after.items() if v != 0}

    def _add(self, account: str, amount: int) -> None:
        value = self.positions.get(account, 0) + amount
        if value < 0:
            raise LedgerError(ErrorKind.PRECONDITION, f"position of {account!r} in {self.escrow!r} would go below zero")
        if value:
            self.positions[account] = value
        else:
            self.positions.pop(account, None)


def player_account(player_id: str, currency: int) -> str:
    """The account a player's escrow position returns to (cash or play by the table's currency)."""
    kind = AK.ACCOUNT_KIND_PLAYER_CASH if currency == ledger.common_pb2.CURRENCY_CASH else AK.ACCOUNT_KIND_PLAYER_PLAY
    return ledger.account_id(kind, player_id, currency)


def reconcile_plan(positions: EscrowPositions, balance: int, request_id: str) -> list[TransferSpec]:
    """The cash-outs that pay every position back and leave the escrow at exactly 0; FAILED_PRECONDITION
    when the positions do not add up to the balance. Keys derive from ``request_id`` (replay-safe)."""
    if positions.total() != balance:
        raise LedgerError(
            ErrorKind.PRECONDITION,
            f"escrow {positions.escrow!r}: positions add up to {positions.total()}, the balance is {balance}",
        )
    return [
        TransferSpec(
            from_account=positions.escrow,
            to_account=account,
            amount=amount,
            kind=TK.TRANSFER_KIND_CASH_OUT,
            reference=f"reconcile:{positions.escrow}",
            key=f"reconcile:{request_id}:{account}",
        )
        for account, amount in sorted(positions.positions.items())
    ]
