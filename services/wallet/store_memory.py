"""The ledger in memory: the same contract as the SQL backends, for fast in-process tests
(and any single process that needs no durability). One lock makes every operation atomic;
a rejected operation changes nothing: a transfer runs all its checks before the first write, and the
multi-step operations (a hand's settlement, a reconciliation) restore the state they started from
when a step is refused."""

from __future__ import annotations

import copy
import threading
import uuid
from collections.abc import Callable
from typing import Any, TypeVar, cast

from cardroom.v1 import common_pb2, events_pb2, wallet_pb2
from wallet import ledger
from wallet.escrow import EscrowPositions, HandSettlement, ReconcileRequest, position_change, reconcile_plan
from wallet.fencing import Fence
from wallet.ledger import AK, TK, Limits, TransferSpec
from wallet.store_api import (
    EVENT_ACCOUNT_OPENED,
    EVENT_TRANSFER_POSTED,
    AccountRow,
    Clock,
    EscrowState,
    LedgerStore,
    OutboxRow,
    Reconciliation,
    StoreUnavailable,
    TransferRow,
    balances_after,
    check_replay,
    flagged,
    hand_conflict,
    hand_missing,
    no_account,
    now_us,
    paid_back,
    reconcile_conflict,
    reconciled_since,
    verify_fence,
    verify_settlement,
)

T = TypeVar("T")
#: What a refused multi-step operation restores.
_STATE = (
    "_accounts",
    "_transfers",
    "_by_key",
    "_outbox",
    "_published",
    "_positions",
    "_hands",
    "_reconciliations",
    "_flags",
    "_partition_epochs",
    "_table_epochs",
)


class MemoryStore(LedgerStore):
    """Accounts, transfers and the outbox in dictionaries and lists, under one lock."""

    def __init__(self, clock: Clock = now_us, limits: Limits | None = None) -> None:
        self.clock = clock
        self.limits = limits or Limits()
        self._lock = threading.Lock()
        self._closed = False
        self._accounts: dict[str, AccountRow] = {}
        self._transfers: list[TransferRow] = []
        self._by_key: dict[str, TransferRow] = {}
        self._outbox: list[OutboxRow] = []
        self._published: set[int] = set()
        self._positions: dict[str, dict[str, int]] = {}  # escrow -> player account -> chips
        self._hands: dict[str, tuple[str, int]] = {}  # hand id -> (escrow, rake)
        self._reconciliations: dict[str, tuple[str, str, tuple[int, ...]]] = {}  # id -> (escrow, fingerprint, ids)
        self._flags: dict[str, str] = {}  # never set: a memory store has no history older than itself
        self._partition_epochs: dict[int, int] = {}  # partition of the tables -> highest epoch
        self._table_epochs: dict[str, int] = {}  # table id -> highest epoch of its applied settlements
        with self._lock:
            for currency in ledger.CURRENCY_SLUG:
                self._insert_account(AK.ACCOUNT_KIND_EXTERNAL, ledger.HOUSE, currency)
                self._insert_account(AK.ACCOUNT_KIND_HOUSE_RAKE, ledger.HOUSE, currency)

    # ---- helpers (callers hold the lock) -------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailable("ledger storage failed: the in-memory store is closed")

    def _queue(self, key: str, event_type: str, payload: Any) -> None:
        self._outbox.append(
            OutboxRow(
                len(self._outbox) + 1, str(uuid.uuid4()), key, event_type, payload.SerializeToString(), self.clock()
            )
        )

    def _insert_account(self, kind: int, owner: str, currency: int) -> bool:
        account = ledger.account_id(kind, owner, currency)
        if account in self._accounts:
            return False
        row = AccountRow(account, kind, owner, currency, 0, self.clock())
        self._accounts[account] = row
        self._queue(account, EVENT_ACCOUNT_OPENED, events_pb2.AccountOpened(account=row.to_proto()))
        return True

    # ---- accounts ----------------------------------------------------------------------------
    def open_account(self, kind: int, owner: str, currency: int) -> tuple[AccountRow, bool]:
        with self._lock:
            self._check_open()
            created = self._insert_account(kind, owner, currency)
            return self._accounts[ledger.account_id(kind, owner, currency)], created

    def get_account(self, account: str) -> AccountRow:
        with self._lock:
            self._check_open()
            if account not in self._accounts:
                raise no_account("account_id", account)
            return self._accounts[account]

    # ---- transfers ---------------------------------------------------------------------------
    def transfer(self, spec: TransferSpec, fence: Fence | None = None) -> tuple[TransferRow, bool]:
        with self._lock:
            self._check_open()
            if fence is None or spec.key in self._by_key:  # a replay answers whatever its fence
                return self._transfer(spec)
            verify_fence(fence, self._partition_epochs.get(fence.partition, 0))
            done = self._transfer(spec)  # checks everything before its first write
            self._raise_partition(fence)
            return done

    # ---- fencing (wallet.fencing; callers of the _ helpers hold the lock) ---------------------------
    def _raise_partition(self, fence: Fence) -> None:
        self._partition_epochs[fence.partition] = max(fence.epoch, self._partition_epochs.get(fence.partition, 0))

    def claim_tables(self, fence: Fence) -> int:
        with self._lock:
            self._check_open()
            verify_fence(fence, self._partition_epochs.get(fence.partition, 0), "claim")
            self._raise_partition(fence)
            return self._partition_epochs[fence.partition]

    def partition_epoch(self, partition: int) -> int:
        with self._lock:
            self._check_open()
            return self._partition_epochs.get(partition, 0)

    def table_epoch(self, table_id: str) -> int:
        with self._lock:
            self._check_open()
            return self._table_epochs.get(table_id, 0)

    def _transfer(self, spec: TransferSpec) -> tuple[TransferRow, bool]:
        existing = self._by_key.get(spec.key)
        if existing is not None:
            replay = check_replay(existing, spec)
            if spec.kind == TK.TRANSFER_KIND_BUY_IN and any(
                reconciled_since(existing, t) for t in self._transfers[existing.transfer_id :]
            ):
                raise paid_back(existing)
            return replay, True
        for field, account in (("from_account", spec.from_account), ("to_account", spec.to_account)):
            if account not in self._accounts:
                raise no_account(field, account)
        source, target = self._accounts[spec.from_account], self._accounts[spec.to_account]
        from_after, to_after = balances_after(spec, source, target, self.limits)
        change = position_change(spec)
        positions = None
        if change is not None:
            positions = self._escrow_positions(change[0])
            positions.apply_transfer(spec)  # may refuse (int64): before any write
        transfer = TransferRow(
            len(self._transfers) + 1,
            spec.key,
            spec.from_account,
            spec.to_account,
            spec.amount,
            spec.kind,
            spec.reference,
            from_after,
            to_after,
            self.clock(),
        )
        self._accounts[source.account_id] = _with_balance(source, from_after)
        self._accounts[target.account_id] = _with_balance(target, to_after)
        if positions is not None:
            self._positions[positions.escrow] = positions.positions
        self._transfers.append(transfer)
        self._by_key[spec.key] = transfer
        self._queue(spec.from_account, EVENT_TRANSFER_POSTED, events_pb2.TransferPosted(transfer=transfer.to_proto()))
        if source.kind == AK.ACCOUNT_KIND_TABLE_ESCROW and from_after == 0 and source.account_id in self._flags:
            del self._flags[source.account_id]  # nobody's chips left: positions are exact again
            self._positions.pop(source.account_id, None)
        return transfer, False

    def _escrow_positions(self, escrow: str) -> EscrowPositions:
        return EscrowPositions(escrow, dict(self._positions.get(escrow, {})))

    def _atomic(self, fn: Callable[[], T]) -> T:
        """Run a multi-step operation under the lock; a refused step restores the state before it."""
        with self._lock:
            self._check_open()
            # shallow copies suffice: rows are frozen and every position dict is replaced, never edited
            saved = {name: copy.copy(getattr(self, name)) for name in _STATE}
            try:
                return fn()
            except BaseException:
                self.__dict__.update(saved)
                raise

    # ---- escrow positions ----------------------------------------------------------------------
    def settle_hand(self, settlement: HandSettlement, fence: Fence | None = None) -> tuple[TransferRow | None, bool]:
        def op() -> tuple[TransferRow | None, bool]:
            rake = settlement.rake.amount if settlement.rake else 0
            booked = self._hands.get(settlement.hand_id)
            if booked is not None:
                if booked != (settlement.escrow, rake):
                    raise hand_conflict(settlement.hand_id, *booked)
                if settlement.rake is None:
                    return None, True
                return check_replay(self._by_key[settlement.rake.key], settlement.rake), True
            if settlement.escrow not in self._accounts:
                raise no_account("table_id", settlement.escrow)
            if fence is not None:
                table_id = settlement.table_id
                verify_settlement(settlement, fence, self._table_epochs.get(table_id, 0))
                self._table_epochs[table_id] = max(fence.epoch, self._table_epochs.get(table_id, 0))
            if settlement.rake is not None and settlement.rake.key in self._by_key:
                # rake posted before the store kept positions: record the hand, leave the positions
                self._hands[settlement.hand_id] = (settlement.escrow, rake)
                return check_replay(self._by_key[settlement.rake.key], settlement.rake), True
            positions = self._escrow_positions(settlement.escrow)
            positions.apply_hand(settlement.nets)
            self._positions[settlement.escrow] = positions.positions
            self._hands[settlement.hand_id] = (settlement.escrow, rake)
            if settlement.rake is None:
                return None, False
            return self._transfer(settlement.rake)[0], False

        return self._atomic(op)

    def escrow_state(self, escrow: str) -> EscrowState:
        with self._lock:
            self._check_open()
            if escrow not in self._accounts:
                raise no_account("escrow_account", escrow)
            positions = dict(self._positions.get(escrow, {}))
            return EscrowState(escrow, self._accounts[escrow].balance, positions, self._flags.get(escrow, ""))

    def reconcile(self, request: ReconcileRequest, fence: Fence | None = None) -> Reconciliation:
        def op() -> Reconciliation:
            prior = self._reconciliations.get(request.request_id)
            if prior is not None:
                if prior[:2] != (request.escrow, request.fingerprint()):
                    raise reconcile_conflict(request, prior[0])
                return Reconciliation(request.escrow, tuple(self._transfers[i - 1] for i in prior[2]), replayed=True)
            if request.escrow not in self._accounts:
                raise no_account("escrow_account", request.escrow)
            if fence is not None:
                verify_fence(fence, self._partition_epochs.get(fence.partition, 0))
                self._raise_partition(fence)  # restored by _atomic when a later step refuses
            if request.escrow in self._flags:
                raise flagged(request.escrow, self._flags[request.escrow])
            if request.settled_hand_id and self._hands.get(request.settled_hand_id, ("",))[0] != request.escrow:
                raise hand_missing(request)
            plan = reconcile_plan(
                self._escrow_positions(request.escrow),
                self._accounts[request.escrow].balance,
                request.request_id,
                request.seated,
            )
            rows = tuple(self._transfer(spec)[0] for spec in plan)
            self._reconciliations[request.request_id] = (
                request.escrow,
                request.fingerprint(),
                tuple(r.transfer_id for r in rows),
            )
            return Reconciliation(request.escrow, rows)

        return self._atomic(op)

    def list_transfers(self, account: str, after_id: int, limit: int) -> list[TransferRow]:
        with self._lock:
            self._check_open()
            if account not in self._accounts:
                raise no_account("account_id", account)
            rows = [
                t for t in self._transfers if t.transfer_id > after_id and account in (t.from_account, t.to_account)
            ]
            return rows[:limit]

    # ---- invariants --------------------------------------------------------------------------
    def summary(self) -> wallet_pb2.LedgerSummary:
        with self._lock:
            self._check_open()
            derived: dict[str, int] = {}
            for t in self._transfers:
                derived[t.to_account] = derived.get(t.to_account, 0) + t.amount
                derived[t.from_account] = derived.get(t.from_account, 0) - t.amount
            totals = self._totals()
            return wallet_pb2.LedgerSummary(
                totals=[
                    wallet_pb2.CurrencyTotal(currency=cast(common_pb2.Currency, c), sum=s)
                    for c, s in sorted(totals.items())
                ],
                accounts=len(self._accounts),
                transfers=len(self._transfers),
                negative_accounts=sum(
                    1 for a in self._accounts.values() if a.balance < 0 and a.kind != AK.ACCOUNT_KIND_EXTERNAL
                ),
                mismatched_accounts=sum(
                    1 for a in self._accounts.values() if a.balance != derived.get(a.account_id, 0)
                ),
                outbox_pending=len(self._outbox) - len(self._published),
            )

    def _totals(self, kind: int | None = None) -> dict[int, int]:
        totals: dict[int, int] = {}
        for a in self._accounts.values():
            if kind is None or a.kind == kind:
                totals[a.currency] = totals.get(a.currency, 0) + a.balance
        return totals

    def balances_by_currency(self, kind: int | None = None) -> dict[int, int]:
        with self._lock:
            self._check_open()
            return self._totals(kind)

    # ---- outbox ------------------------------------------------------------------------------
    def outbox_batch(self, limit: int) -> list[OutboxRow]:
        with self._lock:
            self._check_open()
            return [row for row in self._outbox if row.seq not in self._published][:limit]

    def mark_published(self, seqs: list[int]) -> None:
        with self._lock:
            self._check_open()
            self._published.update(s for s in seqs if 1 <= s <= len(self._outbox))

    def outbox_stats(self) -> tuple[int, int | None]:
        with self._lock:
            self._check_open()
            pending = [row.created_us for row in self._outbox if row.seq not in self._published]
            return len(pending), (min(pending) if pending else None)

    def close(self) -> None:
        with self._lock:
            self._closed = True


def _with_balance(row: AccountRow, balance: int) -> AccountRow:
    return AccountRow(row.account_id, row.kind, row.owner, row.currency, balance, row.created_us)
