"""The cashier: a player's own money — balances with the chips at tables, deposits and
withdrawals, the ledger's history — through the wallet's and the dealer's gRPC APIs only.

* Play money: a deposit is granted at once, up to ``daily_limit`` per UTC day (counted from the
  ledger's deposits with the cashier's reference, so a gateway restart forgets nothing); a
  withdrawal is done at once.
* Real money: the move goes to the payment step (:class:`PaymentStep`). The one here,
  :class:`OperatorApproval`, holds the request until an operator approves (the money moves then,
  idempotent by the move id) or rejects it. A card processor would be another ``PaymentStep``.
  Its pending requests live in the gateway process (a real step keeps them at the processor).
"""

from __future__ import annotations

import datetime as dt
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import grpc

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, wallet_pb2 as w
from gateway.clients import Backends

MOVE = g.CashierMove
PLAY_DEPOSIT = "cashier play-money deposit"
# Keyed by int: account_of also takes a request's raw currency number (checked against these keys).
_ACCOUNT: dict[int, tuple[w.AccountKind, ids.Currency]] = {
    common_pb2.CURRENCY_CASH: (w.ACCOUNT_KIND_PLAYER_CASH, ids.Currency.CASH),
    common_pb2.CURRENCY_PLAY: (w.ACCOUNT_KIND_PLAYER_PLAY, ids.Currency.PLAY),
}
_WHAT = {
    w.TRANSFER_KIND_DEPOSIT: "deposit",
    w.TRANSFER_KIND_WITHDRAWAL: "withdrawal",
    w.TRANSFER_KIND_BUY_IN: "buy-in",
    w.TRANSFER_KIND_CASH_OUT: "cash-out",
    w.TRANSFER_KIND_RAKE: "rake",
    w.TRANSFER_KIND_TOURNAMENT_ENTRY: "tournament entry",
    w.TRANSFER_KIND_TOURNAMENT_FEE: "tournament fee",
    w.TRANSFER_KIND_TOURNAMENT_PRIZE: "tournament prize",
    w.TRANSFER_KIND_TOURNAMENT_REFUND: "tournament refund",
}


async def _call(call: object) -> object:
    try:
        return await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as err:
        raise errors.error_from_call(err) from None


def account_of(player: str, currency: int) -> str:
    if currency not in _ACCOUNT:
        raise errors.invalid(f"currency: CASH or PLAY, got {currency}")
    return ids.player_account_id(player, _ACCOUNT[currency][1])


class PaymentStep(Protocol):
    """Where a real-money move goes before the money moves."""

    def submit(self, move: g.CashierMove) -> g.CashierMove: ...
    def pending(self, player: str = "") -> list[g.CashierMove]: ...
    def decide(self, move_id: str, approve: bool, note: str) -> g.CashierMove: ...


#: How long a decided real-money move is remembered, and how many at most (the dealer's mailbox
#: keeps its answers as long): a player's client sends the same ``request_id`` again within seconds
#: (a lost reply), and gets the decision; a move is never forgotten while it is pending.
DECIDED_SECONDS = 600.0
DECIDED_MAX = 5000


@dataclass
class OperatorApproval:
    """Real-money moves wait here until an operator approves or rejects them.

    A decided move answers a repeat of its request (the same ``request_id``) for ``decided_seconds``
    after the decision, and for the last ``decided_max`` decisions at most; then it is forgotten (a
    repeat after that is a new request; an approved one cannot move the money twice: the wallet
    knows the move id as the deposit's or withdrawal's idempotency key)."""

    moves: dict[str, g.CashierMove] = field(default_factory=dict)
    clock: Callable[[], float] = time.time
    decided_seconds: float = DECIDED_SECONDS
    decided_max: int = DECIDED_MAX
    #: move id -> when the operator decided it, the oldest first
    decided: OrderedDict[str, float] = field(default_factory=OrderedDict)

    def _forget_decided(self) -> None:
        """Drop the decided moves older than ``decided_seconds`` and beyond the last ``decided_max``.
        One still pending (its approval's transfer failed before an answer) stays, as pending."""
        oldest = self.clock() - self.decided_seconds
        while self.decided and (len(self.decided) > self.decided_max or next(iter(self.decided.values())) < oldest):
            move_id, _ = self.decided.popitem(last=False)
            move = self.moves.get(move_id)
            if move is not None and move.status != MOVE.STATUS_PENDING:
                del self.moves[move_id]

    def submit(self, move: g.CashierMove) -> g.CashierMove:
        self._forget_decided()
        known = self.moves.get(move.move_id)
        if known is not None:
            if (known.kind, known.currency, known.amount) != (move.kind, move.currency, move.amount):
                raise errors.ServiceError(
                    grpc.StatusCode.ALREADY_EXISTS, "request_id: already used for a different request"
                )
            return known
        move.status = MOVE.STATUS_PENDING
        move.note = "waiting for the card room's approval"
        self.moves[move.move_id] = move
        return move

    def pending(self, player: str = "") -> list[g.CashierMove]:
        return [
            m for m in self.moves.values() if m.status == MOVE.STATUS_PENDING and (not player or m.player_id == player)
        ]

    def decide(self, move_id: str, approve: bool, note: str) -> g.CashierMove:
        self._forget_decided()
        move = self.moves.get(move_id)
        if move is None:
            raise errors.not_found(f"move_id: no cashier request {move_id!r}")
        if move.status != MOVE.STATUS_PENDING:
            raise errors.precondition(f"cashier request {move_id!r} was already decided")
        if not approve:
            move.status, move.note = MOVE.STATUS_REJECTED, note or "rejected by the card room"
        self.decided[move_id] = self.clock()
        self.decided.move_to_end(move_id)
        return move


class Cashier:
    def __init__(
        self,
        backends: Backends,
        daily_limit: int,
        step: PaymentStep | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.backends = backends
        self.daily_limit = daily_limit
        self.step: PaymentStep = step or OperatorApproval(clock=now)
        self.now = now

    async def _transfers(self, account_id: str, pages: int = 40) -> list[w.Transfer]:
        """The account's transfers, oldest first (the wallet's pages, at most ``pages`` of 500)."""
        out: list[w.Transfer] = []
        token = ""
        for _ in range(pages):
            try:
                reply = await self.backends.wallet.ListTransfers(
                    w.ListTransfersRequest(account_id=account_id, page_size=500, page_token=token)
                )
            except grpc.aio.AioRpcError as err:
                if err.code() == grpc.StatusCode.NOT_FOUND:
                    return out
                raise errors.error_from_call(err) from None
            out.extend(reply.transfers)
            token = reply.next_page_token
            if not token:
                break
        return out

    async def _balance(self, account_id: str) -> int:
        try:
            return (await self.backends.wallet.GetBalance(w.GetBalanceRequest(account_id=account_id))).balance
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.NOT_FOUND:
                return 0
            raise errors.error_from_call(err) from None

    async def deposited_today(self, player: str, key: str = "") -> int:
        """Play money the cashier deposited today (UTC); -1 when ``key`` is among them (a repeat)."""
        account = account_of(player, common_pb2.CURRENCY_PLAY)
        today = dt.datetime.fromtimestamp(self.now(), dt.UTC).date()
        total = 0
        for t in await self._transfers(account):
            if t.to_account == account and t.reference == PLAY_DEPOSIT:
                if key and t.idempotency_key == key:
                    return -1
                if t.created_at.ToDatetime(dt.UTC).date() == today:
                    total += t.amount
        return total

    async def at_tables(self, player: str) -> dict[int, int]:
        """Chips in front of ``player`` at every table, per currency."""
        # every replica must answer: chips at one that did not would be missing from the totals
        listed = await _call(self.backends.dealers.list_tables(d.ListTablesRequest(), partial=False))
        out: dict[int, int] = {}
        for info in listed.tables:  # type: ignore[attr-defined]
            if info.closed or info.seats_taken == 0:
                continue
            state = await _call(self._table(info.table_id))
            for seat in state.seats:  # type: ignore[attr-defined]
                if seat.player_id == player:
                    currency = info.config.currency or common_pb2.CURRENCY_CASH
                    out[currency] = out.get(currency, 0) + seat.stack + seat.bet
        return out

    async def _table(self, table_id: str) -> d.TableState:
        request = d.GetTableRequest(table_id=table_id)
        return await self.backends.dealers.call(table_id, lambda dealer: dealer.GetTable(request))

    async def overview(self, player: str) -> g.CashierResponse:
        tables = await self.at_tables(player)
        reply = g.CashierResponse(player_id=player, pending=self.step.pending(player))
        for currency in (common_pb2.CURRENCY_CASH, common_pb2.CURRENCY_PLAY):
            wallet = await self._balance(account_of(player, currency))
            balance = reply.balances.add(
                currency=currency,
                wallet=wallet,
                at_tables=tables.get(currency, 0),
                total=wallet + tables.get(currency, 0),
            )
            if currency == common_pb2.CURRENCY_PLAY:
                balance.deposited_today = await self.deposited_today(player)
                balance.daily_limit = self.daily_limit
        return reply

    def _move(self, player: str, kind: int, req: g.CashierMoveRequest) -> g.CashierMove:
        account_of(player, req.currency)
        if req.amount <= 0:
            raise errors.invalid(f"amount: must be a positive number of minor units, got {req.amount}")
        if not req.request_id:
            raise errors.invalid("request_id: required (the same id again is the same request)")
        return g.CashierMove(
            move_id=f"{player}:{req.request_id}",
            player_id=player,
            kind=kind,  # type: ignore[arg-type]
            currency=req.currency,
            amount=req.amount,
        )

    async def deposit(self, player: str, req: g.CashierMoveRequest) -> g.CashierMove:
        move = self._move(player, MOVE.KIND_DEPOSIT, req)
        if req.currency != common_pb2.CURRENCY_PLAY:
            return self.step.submit(move)
        done = await self.deposited_today(player, f"cashier:{move.move_id}")
        if done >= 0 and done + req.amount > self.daily_limit:
            left = max(0, self.daily_limit - done)
            raise errors.ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"play money: at most {self.daily_limit} a day; {left} left today",
                reason="DAILY_LIMIT",
            )
        return await self._apply(move, PLAY_DEPOSIT)

    async def withdraw(self, player: str, req: g.CashierMoveRequest) -> g.CashierMove:
        move = self._move(player, MOVE.KIND_WITHDRAWAL, req)
        wallet = await self._balance(account_of(player, req.currency))
        if req.amount > wallet:
            raise errors.ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"only {wallet} in your account (chips at tables come back when you leave)",
                reason="INSUFFICIENT_FUNDS",
            )
        if req.currency != common_pb2.CURRENCY_PLAY:
            return self.step.submit(move)
        return await self._apply(move, "cashier play-money withdrawal")

    async def _apply(self, move: g.CashierMove, reference: str) -> g.CashierMove:
        """Move the money (idempotent: the key is the move id)."""
        wallet = self.backends.wallet
        kind, _ = _ACCOUNT[move.currency]
        await _call(wallet.OpenAccount(w.OpenAccountRequest(kind=kind, owner=move.player_id, currency=move.currency)))
        account = account_of(move.player_id, move.currency)
        key = f"cashier:{move.move_id}"
        if move.kind == MOVE.KIND_DEPOSIT:
            reply = await _call(
                wallet.Deposit(
                    w.DepositRequest(account_id=account, amount=move.amount, idempotency_key=key, reference=reference)
                )
            )
            move.balance = reply.transfer.to_balance_after  # type: ignore[attr-defined]
        else:
            reply = await _call(
                wallet.Withdraw(
                    w.WithdrawRequest(account_id=account, amount=move.amount, idempotency_key=key, reference=reference)
                )
            )
            move.balance = reply.transfer.from_balance_after  # type: ignore[attr-defined]
        move.status, move.note = MOVE.STATUS_DONE, ""
        return move

    async def decide(self, move_id: str, approve: bool, note: str) -> g.CashierMove:
        move = self.step.decide(move_id, approve, note)
        if approve:
            try:
                await self._apply(
                    move, note or f"cashier real-money {'deposit' if move.kind == MOVE.KIND_DEPOSIT else 'withdrawal'}"
                )
            except errors.ServiceError as exc:
                move.status, move.note = MOVE.STATUS_REJECTED, f"the wallet refused: {exc.message}"
        return move

    async def history(self, player: str, limit: int) -> g.CashierHistoryResponse:
        limit = min(200, limit or 20)
        entries: list[g.CashierEntry] = []
        for currency in (common_pb2.CURRENCY_CASH, common_pb2.CURRENCY_PLAY):
            account = account_of(player, currency)
            for t in await self._transfers(account):
                into = t.to_account == account
                entries.append(
                    g.CashierEntry(
                        currency=currency,
                        amount=t.amount if into else -t.amount,
                        balance_after=t.to_balance_after if into else t.from_balance_after,
                        what=_WHAT.get(t.kind, "transfer"),
                        reference=t.reference,
                        time=t.created_at,
                    )
                )
        entries.sort(key=lambda e: (e.time.seconds, e.time.nanos), reverse=True)
        return g.CashierHistoryResponse(entries=entries[:limit])
