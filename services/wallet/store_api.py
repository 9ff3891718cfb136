"""The ledger store interface: what every backend (SQLite, PostgreSQL, in memory) promises.

The contract (checked for every backend by one test class, ``tests/fast/wallet/store_contract.py``):

* **Double entry**: a transfer moves ``amount > 0`` from one account to another; the stored
  balance of every account equals what its transfers add up to, and the balances of one
  currency sum to zero (the built-in ``external`` account goes negative by what was deposited).
* **No negative balances** except ``ACCOUNT_KIND_EXTERNAL``: an overdraft is refused
  (:class:`InsufficientFunds`) and changes nothing.
* **Idempotency by key**: a transfer is applied at most once per idempotency key; the same
  request again returns the first transfer (``replayed=True``); a *different* request with a
  used key is refused (:class:`IdempotencyConflict`) and changes nothing.
* **Limits** (:class:`~wallet.ledger.Limits`, the store's ``limits``): money from the external
  account may not take an account above ``max_balance``, and no balance may leave the int64 range
  (:class:`OutOfRange`, nothing changed).
* **Outbox**: every opened account and every posted transfer queues exactly one event in the
  same transaction; the relay reads pending events oldest first and marks them published.
* **Escrow positions** (:mod:`wallet.escrow`, issue 14 item 7): a buy-in into a table escrow and a
  cash-out from it move the player's position in the transfer's transaction (a replayed key moves
  nothing); :meth:`LedgerStore.settle_hand` adds a hand's nets to the positions in the transaction
  that posts its rake, once per hand id; so an escrow's balance always equals the sum of its
  positions. :meth:`LedgerStore.reconcile` pays back the positions of players no longer seated, in
  one transaction, once per request id. An escrow whose chips were booked before the store kept
  positions is *flagged* (:meth:`LedgerStore.escrow_state`) and never reconciled automatically;
  the flag and its positions clear when the escrow's balance comes back to 0 (nobody's chips left).
* **Fencing** (:mod:`wallet.fencing`, docs/sharding.md): the store keeps the highest epoch per
  partition of the tables (:meth:`LedgerStore.claim_tables`, and every fenced transfer or
  reconciliation) and the highest epoch of the hand settlements applied per table; a call, claim or
  settlement with a lower epoch is :class:`Fenced` and changes nothing. The check is made in the
  transaction of the movement it guards, and a higher epoch is stored in that same transaction
  (epochs only go up). A replay (key, hand id or request id already done) answers its first result
  without looking at the fence.

Errors: everything a store raises on its own account derives from :class:`StoreError`.
Rejections (:class:`AccountNotFound`, :class:`InsufficientFunds`, :class:`IdempotencyConflict`,
:class:`OutOfRange`, :class:`ValueRefused`) are also :class:`~wallet.ledger.LedgerError` with the
gRPC-facing ``kind``, so callers that map ``LedgerError`` keep working; storage trouble is
:class:`StoreUnavailable` (nothing committed as far as the store knows; retrying with the same
idempotency key is safe). A value the database itself refuses (a number out of its range, text it
cannot hold) is a :class:`ValueRefused` — retrying it would fail for ever, so it is never
"unavailable".
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from cardroom.v1 import common_pb2, wallet_pb2
from wallet import ledger
from wallet.escrow import RECONCILE_KEY_PREFIX, HandSettlement, ReconcileRequest
from wallet.fencing import Fence, can_pass
from wallet.ledger import ErrorKind, LedgerError, Limits, TransferSpec

EVENT_ACCOUNT_OPENED = "cardroom.wallet.account_opened.v1"
EVENT_TRANSFER_POSTED = "cardroom.wallet.transfer_posted.v1"

Clock = Callable[[], int]
"""Microseconds since the epoch; injected so tests can fix time."""


def now_us() -> int:
    return time.time_ns() // 1000


# ---- errors ---------------------------------------------------------------------------------
class StoreError(Exception):
    """Root of every error a ledger store raises."""


class StoreUnavailable(StoreError):
    """The backend failed (connection lost, disk full, retries exhausted); the operation did not
    commit as far as the store knows, and every operation is safe to retry (transfers by key)."""


class StoreRejection(StoreError, LedgerError):
    """A request the ledger refuses; nothing was changed."""

    kind_of_error: ErrorKind = ErrorKind.PRECONDITION

    def __init__(self, message: str) -> None:
        LedgerError.__init__(self, self.kind_of_error, message)


class AccountNotFound(StoreRejection):
    kind_of_error = ErrorKind.NOT_FOUND


class InsufficientFunds(StoreRejection):
    kind_of_error = ErrorKind.PRECONDITION


class IdempotencyConflict(StoreRejection):
    kind_of_error = ErrorKind.CONFLICT


class OutOfRange(StoreRejection):
    """A balance would pass :attr:`Limits.max_balance` or the int64 range."""

    kind_of_error = ErrorKind.OUT_OF_RANGE


class ValueRefused(StoreRejection):
    """The database refused a value of the request (out of its range, or text it cannot store)."""

    def __init__(self, message: str, kind: ErrorKind = ErrorKind.INVALID) -> None:
        LedgerError.__init__(self, kind, message)


class Fenced(StoreRejection):
    """A dealer replica's call, claim or hand settlement whose epoch is below the one the store holds:
    a later claim of its tables exists (docs/sharding.md). The message starts with ``fenced:``;
    ``details`` name the partition (or table) and both epochs."""

    kind_of_error = ErrorKind.PRECONDITION

    def __init__(self, message: str, details: dict[str, str]) -> None:
        super().__init__(message)
        self.details = details


def stale_partition(fence: Fence, stored: int, what: str = "call") -> Fenced:
    """A call (``what``: ``call`` / ``claim``) of partition ``fence.partition`` below its stored epoch."""
    return Fenced(
        f"fenced: partition {fence.partition} is held at epoch {stored}, above this {what}'s epoch {fence.epoch} "
        "(a later claim of the partition exists)",
        {"partition": str(fence.partition), "epoch": str(fence.epoch), "stored_epoch": str(stored)},
    )


def stale_settlement(table_id: str, epoch: int, stored: int) -> Fenced:
    return Fenced(
        f"fenced: table {table_id!r} has a settlement of epoch {stored} applied, above this one's epoch {epoch}",
        {"table_id": table_id, "epoch": str(epoch), "stored_epoch": str(stored)},
    )


def verify_fence(fence: Fence, stored: int, what: str = "call") -> None:
    """:class:`Fenced` unless ``fence`` may pass over the partition's ``stored`` epoch."""
    if not can_pass(fence.epoch, stored):
        raise stale_partition(fence, stored, what)


def verify_settlement(settlement: HandSettlement, fence: Fence | None, stored: int) -> None:
    """:class:`Fenced` when a fenced settlement's epoch is below the table's ``stored`` one."""
    if fence is not None and not can_pass(fence.epoch, stored):
        raise stale_settlement(settlement.table_id, fence.epoch, stored)


def no_account(field: str, account: str) -> AccountNotFound:
    return AccountNotFound(f"{field}: no account {account!r}")


def overdraft(spec: TransferSpec, balance: int) -> InsufficientFunds:
    return InsufficientFunds(f"amount: {spec.amount} exceeds the balance {balance} of {spec.from_account}")


def balances_after(spec: TransferSpec, source: AccountRow, target: AccountRow, limits: Limits) -> tuple[int, int]:
    """The two balances ``spec`` leaves, or the rejection (overdraft, balance maximum, int64 range)."""
    from_after = source.balance - spec.amount
    to_after = target.balance + spec.amount
    if from_after < 0 and source.kind not in ledger.MAY_GO_NEGATIVE:
        raise overdraft(spec, source.balance)
    from_outside = source.kind == ledger.AK.ACCOUNT_KIND_EXTERNAL
    if from_outside and to_after > limits.max_balance:
        raise OutOfRange(
            f"amount: {spec.amount} would take {spec.to_account} to {to_after}, above the balance maximum "
            f"{limits.max_balance} for money from outside (balance now {target.balance})"
        )
    for account, after in ((spec.from_account, from_after), (spec.to_account, to_after)):
        if not -ledger.INT64_MAX <= after <= ledger.INT64_MAX:
            raise OutOfRange(f"amount: {spec.amount} would take {account} out of the int64 range of the ledger")
    return from_after, to_after


# ---- rows -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AccountRow:
    account_id: str
    kind: int
    owner: str
    currency: int
    balance: int
    created_us: int

    def to_proto(self) -> wallet_pb2.Account:
        msg = wallet_pb2.Account(
            account_id=self.account_id,
            kind=cast(wallet_pb2.AccountKind, self.kind),
            owner=self.owner,
            currency=cast(common_pb2.Currency, self.currency),
            balance=self.balance,
        )
        msg.created_at.FromMicroseconds(self.created_us)
        return msg


@dataclass(frozen=True)
class TransferRow:
    transfer_id: int
    key: str
    from_account: str
    to_account: str
    amount: int
    kind: int
    reference: str
    from_balance_after: int
    to_balance_after: int
    created_us: int

    def spec(self) -> TransferSpec:
        return TransferSpec(self.from_account, self.to_account, self.amount, self.kind, self.reference, self.key)

    def to_proto(self) -> wallet_pb2.Transfer:
        msg = wallet_pb2.Transfer(
            transfer_id=self.transfer_id,
            from_account=self.from_account,
            to_account=self.to_account,
            amount=self.amount,
            kind=cast(wallet_pb2.TransferKind, self.kind),
            reference=self.reference,
            idempotency_key=self.key,
            from_balance_after=self.from_balance_after,
            to_balance_after=self.to_balance_after,
        )
        msg.created_at.FromMicroseconds(self.created_us)
        return msg


@dataclass(frozen=True)
class OutboxRow:
    seq: int
    event_id: str
    key: str
    type: str
    payload: bytes
    created_us: int


def check_replay(existing: TransferRow, spec: TransferSpec) -> TransferRow:
    """``existing`` if it is the transfer ``spec`` asks for again, else :class:`IdempotencyConflict`."""
    if existing.spec() != spec:
        raise IdempotencyConflict(
            f"idempotency_key: {spec.key!r} was already used for a different transfer "
            f"(#{existing.transfer_id}: {existing.amount} from {existing.from_account} to {existing.to_account})"
        )
    return existing


@dataclass(frozen=True)
class EscrowState:
    """One table escrow: its balance, each player account's position, and why its positions cannot be
    trusted (``flag``, "" when they can)."""

    escrow: str
    balance: int
    positions: dict[str, int]
    flag: str = ""


@dataclass(frozen=True)
class Reconciliation:
    """What one reconciliation paid back (a replay of its request id returns it with ``replayed``)."""

    escrow: str
    transfers: tuple[TransferRow, ...]
    replayed: bool = False

    @property
    def total(self) -> int:
        return sum(t.amount for t in self.transfers)


def hand_conflict(hand_id: str, escrow: str, rake: int) -> IdempotencyConflict:
    return IdempotencyConflict(f"hand_id: {hand_id!r} was already settled differently (a rake of {rake} from {escrow})")


def reconciled_since(existing: TransferRow, later: TransferRow) -> bool:
    """``later`` is a reconciliation's pay-back of buy-in ``existing`` (same escrow and player, after it)."""
    return (
        later.transfer_id > existing.transfer_id
        and later.from_account == existing.to_account
        and later.to_account == existing.from_account
        and later.key.startswith(RECONCILE_KEY_PREFIX)
    )


def paid_back(existing: TransferRow) -> LedgerError:
    """A buy-in asked for again after a reconciliation returned it: the chips are back in the player's
    account, so the table must not seat them (it would hold chips its escrow no longer has)."""
    return LedgerError(
        ErrorKind.PRECONDITION,
        f"idempotency_key: buy-in #{existing.transfer_id} was paid back to {existing.from_account} by an escrow "
        "reconciliation; buy in again with a new request",
    )


def reconcile_conflict(request: ReconcileRequest, escrow: str) -> IdempotencyConflict:
    return IdempotencyConflict(
        f"request_id: {request.request_id!r} was already used for a different reconciliation (of {escrow})"
    )


def flagged(escrow: str, reason: str) -> LedgerError:
    return LedgerError(
        ErrorKind.PRECONDITION,
        f"escrow_account: {escrow!r} cannot be reconciled from its positions: {reason} "
        "(the flag clears when its balance is back to 0; until then settle it by hand from the hand records)",
    )


def hand_missing(request: ReconcileRequest) -> LedgerError:
    return LedgerError(
        ErrorKind.PRECONDITION,
        f"settled_hand_id: hand {request.settled_hand_id!r} is not applied to {request.escrow} yet; retry",
    )


# ---- the interface ----------------------------------------------------------------------------
class LedgerStore(ABC):
    """The ledger's storage. Methods are synchronous and thread-safe (the gRPC service calls them
    from worker threads); each mutation is one transaction together with its outbox event.
    ``limits`` bound the balances (set at construction; the defaults of :class:`Limits`)."""

    limits: Limits = Limits()

    @abstractmethod
    def open_account(self, kind: int, owner: str, currency: int) -> tuple[AccountRow, bool]:
        """The account (opened now unless it exists) and whether it was created by this call."""

    @abstractmethod
    def get_account(self, account: str) -> AccountRow:
        """The account, or :class:`AccountNotFound`."""

    @abstractmethod
    def transfer(self, spec: TransferSpec, fence: Fence | None = None) -> tuple[TransferRow, bool]:
        """Apply a validated ``spec`` once per key; returns the transfer and whether it is a replay.
        With a ``fence``: :class:`Fenced` (nothing moved) when its partition's stored epoch is higher,
        else the transfer, the partition's epoch raised to the fence's in the same transaction. A
        replay answers the first transfer whatever the fence."""

    @abstractmethod
    def settle_hand(self, settlement: HandSettlement, fence: Fence | None = None) -> tuple[TransferRow | None, bool]:
        """Book a settled hand once per hand id: its nets to the escrow's positions and its rake (when
        not 0) in one transaction. Returns the rake transfer and whether the hand was booked before
        (the same hand again; a different rake or escrow for a booked hand id is
        :class:`IdempotencyConflict`). A hand whose rake was posted before the store kept positions
        is recorded without touching the positions. With a ``fence``: :class:`Fenced` (nothing booked)
        when a settlement of a higher epoch was applied for the table, else the table's epoch raised
        to the fence's in the same transaction (a hand booked before is a replay, whatever its fence)."""

    @abstractmethod
    def claim_tables(self, fence: Fence) -> int:
        """Store ``fence.epoch`` for ``fence.partition`` and return it; the same epoch again changes
        nothing. :class:`Fenced` (nothing changed) when the stored epoch is higher."""

    @abstractmethod
    def partition_epoch(self, partition: int) -> int:
        """The highest epoch stored for ``partition`` (0: never claimed nor fenced)."""

    @abstractmethod
    def table_epoch(self, table_id: str) -> int:
        """The highest epoch of the hand settlements applied for ``table_id`` (0: none fenced)."""

    @abstractmethod
    def escrow_state(self, escrow: str) -> EscrowState:
        """The escrow's balance, positions and flag, or :class:`AccountNotFound`."""

    @abstractmethod
    def reconcile(self, request: ReconcileRequest, fence: Fence | None = None) -> Reconciliation:
        """Pay back every position of ``request.escrow`` whose account is not seated, in one transaction,
        once per request id (a replay returns the first result; the same id for another escrow or
        seating is :class:`IdempotencyConflict`). FAILED_PRECONDITION, nothing moved, when the escrow is
        flagged, the named settled hand is not applied yet, a position is negative or the positions do
        not add up to the balance; :class:`AccountNotFound` for an unknown escrow. A ``fence`` is
        checked and stored as by :meth:`transfer` (:class:`Fenced`, nothing moved)."""

    @abstractmethod
    def list_transfers(self, account: str, after_id: int, limit: int) -> list[TransferRow]:
        """Up to ``limit`` transfers from or to ``account`` with ids above ``after_id``, oldest first."""

    @abstractmethod
    def summary(self) -> wallet_pb2.LedgerSummary:
        """Totals per currency and the invariant counters (negatives, mismatches, outbox backlog)."""

    @abstractmethod
    def balances_by_currency(self, kind: int | None = None) -> dict[int, int]:
        """Sum of all balances per currency (0 when the ledger is sound); with ``kind``, of the accounts
        of that kind only (the table escrows: what the dealers' tables hold, per currency)."""

    @abstractmethod
    def outbox_batch(self, limit: int) -> list[OutboxRow]:
        """Up to ``limit`` unpublished events, oldest first."""

    @abstractmethod
    def mark_published(self, seqs: list[int]) -> None:
        """Mark the events with these sequence numbers published (idempotent)."""

    @abstractmethod
    def outbox_stats(self) -> tuple[int, int | None]:
        """(pending events, creation time in µs of the oldest pending one)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
