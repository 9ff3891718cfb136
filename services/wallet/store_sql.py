"""The ledger over a DB-API connection: SQL shared by the SQLite and PostgreSQL backends.

Every mutation runs in one database transaction together with its outbox row, so an event
exists exactly when its change does. Balances are stored on the account row for speed and
checked against the transfers by :meth:`SqlLedgerStore.summary`. Subclasses supply the
connections (:meth:`_tx`), the dialect and which driver errors are lost races (retried).

Escrow positions (issue 14 item 7, :mod:`wallet.escrow`) live in ``escrow_positions`` (escrow,
player account, chips), written in the transaction of the buy-in, cash-out or hand that moves them;
``escrow_hands`` records each settled hand once (its escrow and rake), ``reconciliations`` each
ReconcileEscrow request id and ``escrow_flags`` the escrows whose positions cannot be trusted.

**Migration of an existing database** (the tables are created by :meth:`SqlLedgerStore.init_schema`
when missing, nothing else changes): an escrow's positions *cannot be rebuilt from the ledger*,
because the transfers hold its buy-ins, cash-outs and rakes but not who won which hand. So when the
positions table is created over a database that already has accounts, every table escrow with a
balance other than 0 is *flagged* (``escrow_flags``, reason
:data:`wallet.escrow.PREDATES_POSITIONS`): its buy-ins, cash-outs and hands are still tracked, but
ReconcileEscrow refuses it (FAILED_PRECONDITION) — the operator settles it from the hand records.
The flag and the escrow's positions are cleared when its balance comes back to 0 (then every
player's true position is 0), and from there on the escrow is exact. An escrow at 0 is exact at once.
A hand whose rake was posted before the migration and that is delivered again is recorded without
touching any position (its nets are in no position yet).

**Fencing** (:mod:`wallet.fencing`, docs/sharding.md): ``partition_epochs`` holds the highest epoch per
partition of the tables, ``table_epochs`` the highest epoch of the hand settlements applied per table.
A fenced transfer or reconciliation reads its partition's row under a share lock (PostgreSQL
``FOR SHARE``; SQLite has one writer at a time) after raising it when the fence is higher, and keeps the
lock until it commits, so a claim (an update of that row) waits for the movements it would fence, and
the movements after it see its epoch. A database from before fencing gets both tables, empty, when it
is opened: every partition and table at epoch 0, so the first claims and fences are taken as they come.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from cardroom.v1 import common_pb2, events_pb2, wallet_pb2
from wallet import ledger
from wallet.escrow import (
    PREDATES_POSITIONS,
    RECONCILE_KEY_PREFIX,
    EscrowPositions,
    HandSettlement,
    ReconcileRequest,
    position_change,
    reconcile_plan,
)
from wallet.fencing import Fence
from wallet.ledger import AK, TK, LedgerError, TransferSpec
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
    ValueRefused,
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

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
  account_id TEXT PRIMARY KEY,
  kind INTEGER NOT NULL,
  owner TEXT NOT NULL,
  currency INTEGER NOT NULL,
  balance BIGINT NOT NULL DEFAULT 0,
  created_us BIGINT NOT NULL,
  CHECK (balance >= 0 OR kind = 7)  -- only ACCOUNT_KIND_EXTERNAL may go negative
);
CREATE TABLE IF NOT EXISTS transfers (
  transfer_id {serial},
  idempotency_key TEXT NOT NULL UNIQUE,
  from_account TEXT NOT NULL REFERENCES accounts(account_id),
  to_account TEXT NOT NULL REFERENCES accounts(account_id),
  amount BIGINT NOT NULL CHECK (amount > 0),
  kind INTEGER NOT NULL,
  reference TEXT NOT NULL,
  from_balance_after BIGINT NOT NULL,
  to_balance_after BIGINT NOT NULL,
  created_us BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS transfers_from ON transfers (from_account, transfer_id);
CREATE INDEX IF NOT EXISTS transfers_to ON transfers (to_account, transfer_id);
CREATE TABLE IF NOT EXISTS outbox (
  event_seq {serial},
  event_id TEXT NOT NULL,
  event_key TEXT NOT NULL,
  event_type TEXT NOT NULL,
  payload {blob} NOT NULL,
  created_us BIGINT NOT NULL,
  published_us BIGINT
);
CREATE INDEX IF NOT EXISTS outbox_pending ON outbox (event_seq) WHERE published_us IS NULL;
CREATE TABLE IF NOT EXISTS escrow_positions (
  escrow TEXT NOT NULL REFERENCES accounts(account_id),
  account TEXT NOT NULL,
  amount BIGINT NOT NULL,
  PRIMARY KEY (escrow, account)
);
CREATE TABLE IF NOT EXISTS escrow_hands (
  hand_id TEXT PRIMARY KEY,
  escrow TEXT NOT NULL REFERENCES accounts(account_id),
  rake BIGINT NOT NULL,
  applied_us BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS escrow_flags (
  escrow TEXT PRIMARY KEY REFERENCES accounts(account_id),
  reason TEXT NOT NULL,
  flagged_us BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS reconciliations (
  request_id TEXT PRIMARY KEY,
  escrow TEXT NOT NULL REFERENCES accounts(account_id),
  fingerprint TEXT NOT NULL,
  created_us BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS partition_epochs (
  table_partition BIGINT PRIMARY KEY,
  epoch BIGINT NOT NULL,
  updated_us BIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS table_epochs (
  table_id TEXT PRIMARY KEY,
  epoch BIGINT NOT NULL,
  updated_us BIGINT NOT NULL
);
"""

_ACCOUNT_COLS = "account_id, kind, owner, currency, balance, created_us"
_TRANSFER_COLS = (
    "transfer_id, idempotency_key, from_account, to_account, amount, kind, reference, "
    "from_balance_after, to_balance_after, created_us"
)
_RETRIES = 20


class SqlLedgerStore(LedgerStore):
    """The ledger in three tables (accounts, transfers, outbox); subclasses supply connections."""

    placeholder = "?"
    serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
    blob = "BLOB"
    lock_rows = ""  # appended to the account SELECT inside a transfer (PostgreSQL: FOR UPDATE)
    share_rows = ""  # appended to the partition epoch SELECT of a fenced call (PostgreSQL: FOR SHARE)
    clock: Clock = staticmethod(now_us)

    # ---- dialect hooks -------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def _is_race(self, exc: Exception) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def _has_table(self, cur: Any, name: str) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def _refused(self, exc: Exception) -> ValueRefused | None:
        """The driver's refusal of a value of the request (never retried, never "unavailable"), else None.
        Python's own conversion limit (an int beyond 64 bits) is the same for every driver."""
        if isinstance(exc, OverflowError):
            return ValueRefused("request: a number is outside the ledger's int64 range", ledger.ErrorKind.OUT_OF_RANGE)
        return None

    # ---- helpers ---------------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def _one(self, cur: Any, sql: str, params: tuple[Any, ...] = ()) -> Any:
        cur.execute(self._sql(sql), params)
        return cur.fetchone()

    def _all(self, cur: Any, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        cur.execute(self._sql(sql), params)
        return list(cur.fetchall())

    def _run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(cur, *args)`` in a transaction, retrying lost races; driver errors become
        :class:`StoreUnavailable`."""
        for attempt in range(_RETRIES):
            try:
                with self._tx() as cur:
                    return fn(cur, *args)
            except LedgerError:
                raise
            except StoreUnavailable:
                raise
            except Exception as exc:
                refused = self._refused(exc)
                if refused is not None:
                    raise refused from exc
                if not self._is_race(exc) or attempt == _RETRIES - 1:
                    raise StoreUnavailable(f"ledger storage failed: {type(exc).__name__}: {exc}") from exc
                time.sleep(0.001 * (attempt + 1))
        raise AssertionError("unreachable")

    def init_schema(self) -> None:
        schema = SCHEMA.format(serial=self.serial, blob=self.blob)

        def create(cur: Any) -> None:
            migrating = self._has_table(cur, "accounts") and not self._has_table(cur, "escrow_positions")
            for statement in schema.split(";"):
                if statement.strip():
                    cur.execute(statement)
            if migrating:  # see the module docstring: positions cannot be rebuilt, the escrow is flagged
                cur.execute(
                    self._sql(
                        "INSERT INTO escrow_flags (escrow, reason, flagged_us) SELECT account_id, ?, ? "
                        "FROM accounts WHERE kind = ? AND balance <> 0"
                    ),
                    (PREDATES_POSITIONS, self.clock(), AK.ACCOUNT_KIND_TABLE_ESCROW),
                )
            for currency in ledger.CURRENCY_SLUG:
                self._insert_account(cur, AK.ACCOUNT_KIND_EXTERNAL, ledger.HOUSE, currency)
                self._insert_account(cur, AK.ACCOUNT_KIND_HOUSE_RAKE, ledger.HOUSE, currency)

        self._run(create)

    def _insert_account(self, cur: Any, kind: int, owner: str, currency: int) -> bool:
        """Insert an account unless it exists; True when created (and its event queued)."""
        account = ledger.account_id(kind, owner, currency)
        created = self.clock()
        cur.execute(
            self._sql(
                "INSERT INTO accounts (account_id, kind, owner, currency, balance, created_us) "
                "VALUES (?, ?, ?, ?, 0, ?) ON CONFLICT (account_id) DO NOTHING"
            ),
            (account, kind, owner, currency, created),
        )
        if cur.rowcount != 1:
            return False
        row = AccountRow(account, kind, owner, currency, 0, created)
        self._outbox(cur, account, EVENT_ACCOUNT_OPENED, events_pb2.AccountOpened(account=row.to_proto()))
        return True

    def _outbox(self, cur: Any, key: str, event_type: str, payload: Any) -> None:
        cur.execute(
            self._sql(
                "INSERT INTO outbox (event_id, event_key, event_type, payload, created_us) VALUES (?, ?, ?, ?, ?)"
            ),
            (str(uuid.uuid4()), key, event_type, payload.SerializeToString(), self.clock()),
        )

    @staticmethod
    def _account(row: Any) -> AccountRow:
        return AccountRow(row[0], int(row[1]), row[2], int(row[3]), int(row[4]), int(row[5]))

    @staticmethod
    def _transfer(row: Any) -> TransferRow:
        return TransferRow(
            int(row[0]), row[1], row[2], row[3], int(row[4]), int(row[5]), row[6], int(row[7]), int(row[8]), int(row[9])
        )

    # ---- accounts ------------------------------------------------------------------------
    def open_account(self, kind: int, owner: str, currency: int) -> tuple[AccountRow, bool]:
        account = ledger.account_id(kind, owner, currency)

        def op(cur: Any) -> tuple[AccountRow, bool]:
            created = self._insert_account(cur, kind, owner, currency)
            row = self._one(cur, f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE account_id = ?", (account,))
            return self._account(row), created

        return self._run(op)

    def get_account(self, account: str) -> AccountRow:
        def op(cur: Any) -> AccountRow:
            row = self._one(cur, f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE account_id = ?", (account,))
            if row is None:
                raise no_account("account_id", account)
            return self._account(row)

        return self._run(op)

    # ---- transfers -----------------------------------------------------------------------
    def transfer(self, spec: TransferSpec, fence: Fence | None = None) -> tuple[TransferRow, bool]:
        return self._run(self._transfer_tx, spec, fence)

    def _transfer_tx(self, cur: Any, spec: TransferSpec, fence: Fence | None = None) -> tuple[TransferRow, bool]:
        existing = self._one(cur, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE idempotency_key = ?", (spec.key,))
        if existing is not None:
            return self._replay(cur, self._transfer(existing), spec), True
        first, second = sorted((spec.from_account, spec.to_account))
        rows = self._all(
            cur,
            f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE account_id IN (?, ?) ORDER BY account_id {self.lock_rows}",
            (first, second),
        )
        accounts = {row[0]: self._account(row) for row in rows}
        # The key may have been committed while we waited for the row locks.
        existing = self._one(cur, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE idempotency_key = ?", (spec.key,))
        if existing is not None:
            return self._replay(cur, self._transfer(existing), spec), True
        if fence is not None:
            self._hold_partition(cur, fence)
        for field, account in (("from_account", spec.from_account), ("to_account", spec.to_account)):
            if account not in accounts:
                raise no_account(field, account)
        source, target = accounts[spec.from_account], accounts[spec.to_account]
        from_after, to_after = balances_after(spec, source, target, self.limits)
        change = position_change(spec)
        if change is not None:
            before = self._load_positions(cur, change[0])
            after = EscrowPositions(before.escrow, dict(before.positions))
            after.apply_transfer(spec)
            self._save_positions(cur, before, after)
        if source.kind == AK.ACCOUNT_KIND_TABLE_ESCROW and from_after == 0:
            self._unflag_emptied(cur, source.account_id)
        created = self.clock()
        cur.execute(self._sql("UPDATE accounts SET balance = ? WHERE account_id = ?"), (from_after, spec.from_account))
        cur.execute(self._sql("UPDATE accounts SET balance = ? WHERE account_id = ?"), (to_after, spec.to_account))
        row = self._one(
            cur,
            "INSERT INTO transfers (idempotency_key, from_account, to_account, amount, kind, reference, "
            "from_balance_after, to_balance_after, created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "RETURNING transfer_id",
            (
                spec.key,
                spec.from_account,
                spec.to_account,
                spec.amount,
                spec.kind,
                spec.reference,
                from_after,
                to_after,
                created,
            ),
        )
        transfer = TransferRow(
            int(row[0]),
            spec.key,
            spec.from_account,
            spec.to_account,
            spec.amount,
            spec.kind,
            spec.reference,
            from_after,
            to_after,
            created,
        )
        self._outbox(
            cur, spec.from_account, EVENT_TRANSFER_POSTED, events_pb2.TransferPosted(transfer=transfer.to_proto())
        )
        return transfer, False

    def _replay(self, cur: Any, existing: TransferRow, spec: TransferSpec) -> TransferRow:
        """The transfer ``spec`` asks for again; a buy-in that a reconciliation paid back since is refused."""
        replay = check_replay(existing, spec)
        if spec.kind == TK.TRANSFER_KIND_BUY_IN:
            later = self._all(
                cur,
                f"SELECT {_TRANSFER_COLS} FROM transfers WHERE from_account = ? AND to_account = ? "
                "AND transfer_id > ? AND idempotency_key LIKE ?",
                (existing.to_account, existing.from_account, existing.transfer_id, RECONCILE_KEY_PREFIX + "%"),
            )
            if any(reconciled_since(existing, self._transfer(t)) for t in later):
                raise paid_back(existing)
        return replay

    # ---- fencing (wallet.fencing) -------------------------------------------------------------
    def _hold_partition(self, cur: Any, fence: Fence, what: str = "call") -> int:
        """Raise the partition's epoch to the fence's when it is higher, then read it under a share lock
        kept to the commit; :class:`Fenced` when the stored epoch is higher. The epoch now stored."""
        cur.execute(
            self._sql(
                "INSERT INTO partition_epochs (table_partition, epoch, updated_us) VALUES (?, 0, ?) "
                "ON CONFLICT (table_partition) DO NOTHING"
            ),
            (fence.partition, self.clock()),
        )
        cur.execute(
            self._sql("UPDATE partition_epochs SET epoch = ?, updated_us = ? WHERE table_partition = ? AND epoch < ?"),
            (fence.epoch, self.clock(), fence.partition, fence.epoch),
        )
        row = self._one(
            cur, f"SELECT epoch FROM partition_epochs WHERE table_partition = ? {self.share_rows}", (fence.partition,)
        )
        stored = int(row[0])
        verify_fence(fence, stored, what)
        return stored

    def claim_tables(self, fence: Fence) -> int:
        return self._run(self._hold_partition, fence, "claim")

    def partition_epoch(self, partition: int) -> int:
        def op(cur: Any) -> int:
            row = self._one(cur, "SELECT epoch FROM partition_epochs WHERE table_partition = ?", (partition,))
            return 0 if row is None else int(row[0])

        return self._run(op)

    def _stored_table_epoch(self, cur: Any, table_id: str) -> int:
        row = self._one(cur, "SELECT epoch FROM table_epochs WHERE table_id = ?", (table_id,))
        return 0 if row is None else int(row[0])

    def table_epoch(self, table_id: str) -> int:
        return self._run(self._stored_table_epoch, table_id)

    def _hold_table(self, cur: Any, settlement: HandSettlement, fence: Fence | None) -> None:
        """Refuse a settlement below the table's epoch (:class:`Fenced`), else raise the table's epoch to
        the fence's. Runs under the escrow's lock: a table's settlements are booked one at a time."""
        if fence is None:
            return
        table_id = settlement.table_id
        verify_settlement(settlement, fence, self._stored_table_epoch(cur, table_id))
        cur.execute(
            self._sql(
                "INSERT INTO table_epochs (table_id, epoch, updated_us) VALUES (?, ?, ?) "
                "ON CONFLICT (table_id) DO UPDATE SET epoch = excluded.epoch, updated_us = excluded.updated_us "
                "WHERE table_epochs.epoch < excluded.epoch"
            ),
            (table_id, fence.epoch, self.clock()),
        )

    # ---- escrow positions --------------------------------------------------------------------
    def _load_positions(self, cur: Any, escrow: str) -> EscrowPositions:
        rows = self._all(cur, "SELECT account, amount FROM escrow_positions WHERE escrow = ?", (escrow,))
        return EscrowPositions(escrow, {r[0]: int(r[1]) for r in rows})

    def _save_positions(self, cur: Any, before: EscrowPositions, after: EscrowPositions) -> None:
        for account in sorted(set(before.positions) | set(after.positions)):
            old, new = before.positions.get(account), after.positions.get(account)
            if old == new:
                continue
            params: tuple[Any, ...]
            if new is None:
                sql, params = "DELETE FROM escrow_positions WHERE escrow = ? AND account = ?", (after.escrow, account)
            elif old is None:
                sql = "INSERT INTO escrow_positions (escrow, account, amount) VALUES (?, ?, ?)"
                params = (after.escrow, account, new)
            else:
                sql = "UPDATE escrow_positions SET amount = ? WHERE escrow = ? AND account = ?"
                params = (new, after.escrow, account)
            cur.execute(self._sql(sql), params)

    def _unflag_emptied(self, cur: Any, escrow: str) -> None:
        """A flagged escrow back at 0 holds nobody's chips: its positions are exact (all 0) again."""
        cur.execute(self._sql("DELETE FROM escrow_flags WHERE escrow = ?"), (escrow,))
        if cur.rowcount:
            cur.execute(self._sql("DELETE FROM escrow_positions WHERE escrow = ?"), (escrow,))

    def _lock_account(self, cur: Any, account: str, field: str) -> AccountRow:
        row = self._one(cur, f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE account_id = ? {self.lock_rows}", (account,))
        if row is None:
            raise no_account(field, account)
        return self._account(row)

    def _by_key(self, cur: Any, key: str) -> TransferRow | None:
        row = self._one(cur, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE idempotency_key = ?", (key,))
        return None if row is None else self._transfer(row)

    def settle_hand(self, settlement: HandSettlement, fence: Fence | None = None) -> tuple[TransferRow | None, bool]:
        return self._run(self._settle_tx, settlement, fence)

    def _settle_tx(self, cur: Any, settlement: HandSettlement, fence: Fence | None) -> tuple[TransferRow | None, bool]:
        rake = settlement.rake.amount if settlement.rake else 0
        booked = self._one(cur, "SELECT escrow, rake FROM escrow_hands WHERE hand_id = ?", (settlement.hand_id,))
        if booked is None:
            self._lock_account(cur, settlement.escrow, "table_id")
            booked = self._one(cur, "SELECT escrow, rake FROM escrow_hands WHERE hand_id = ?", (settlement.hand_id,))
        if booked is not None:
            if (booked[0], int(booked[1])) != (settlement.escrow, rake):
                raise hand_conflict(settlement.hand_id, booked[0], int(booked[1]))
            if settlement.rake is None:
                return None, True
            existing = self._by_key(cur, settlement.rake.key)
            assert existing is not None, "a booked hand with rake has its rake transfer"
            return check_replay(existing, settlement.rake), True
        self._hold_table(cur, settlement, fence)
        record = "INSERT INTO escrow_hands (hand_id, escrow, rake, applied_us) VALUES (?, ?, ?, ?)"
        old = self._by_key(cur, settlement.rake.key) if settlement.rake else None
        if old is not None and settlement.rake is not None:  # rake posted before positions: record only
            replay = check_replay(old, settlement.rake)
            cur.execute(self._sql(record), (settlement.hand_id, settlement.escrow, rake, self.clock()))
            return replay, True
        before = self._load_positions(cur, settlement.escrow)
        after = EscrowPositions(before.escrow, dict(before.positions))
        after.apply_hand(settlement.nets)
        self._save_positions(cur, before, after)
        cur.execute(self._sql(record), (settlement.hand_id, settlement.escrow, rake, self.clock()))
        if settlement.rake is None:
            return None, False
        return self._transfer_tx(cur, settlement.rake)[0], False

    def escrow_state(self, escrow: str) -> EscrowState:
        def op(cur: Any) -> EscrowState:
            row = self._one(cur, f"SELECT {_ACCOUNT_COLS} FROM accounts WHERE account_id = ?", (escrow,))
            if row is None:
                raise no_account("escrow_account", escrow)
            flag = self._one(cur, "SELECT reason FROM escrow_flags WHERE escrow = ?", (escrow,))
            positions = self._load_positions(cur, escrow).positions
            return EscrowState(escrow, self._account(row).balance, positions, "" if flag is None else flag[0])

        return self._run(op)

    def reconcile(self, request: ReconcileRequest, fence: Fence | None = None) -> Reconciliation:
        return self._run(self._reconcile_tx, request, fence)

    def _reconcile_tx(self, cur: Any, request: ReconcileRequest, fence: Fence | None) -> Reconciliation:
        prior_sql = "SELECT escrow, fingerprint FROM reconciliations WHERE request_id = ?"
        prior = self._one(cur, prior_sql, (request.request_id,))
        if prior is None:
            account = self._lock_account(cur, request.escrow, "escrow_account")
            prior = self._one(cur, prior_sql, (request.request_id,))  # committed while we waited for the lock
        if prior is not None:
            if (prior[0], prior[1]) != (request.escrow, request.fingerprint()):
                raise reconcile_conflict(request, prior[0])
            rows = self._all(
                cur,
                f"SELECT {_TRANSFER_COLS} FROM transfers WHERE from_account = ? AND reference = ? ORDER BY transfer_id",
                (request.escrow, f"reconcile:{request.request_id}"),
            )
            prefix = f"reconcile:{request.request_id}:"
            paid = tuple(t for t in map(self._transfer, rows) if t.key.startswith(prefix))
            return Reconciliation(request.escrow, paid, replayed=True)
        if fence is not None:
            self._hold_partition(cur, fence)
        flag = self._one(cur, "SELECT reason FROM escrow_flags WHERE escrow = ?", (request.escrow,))
        if flag is not None:
            raise flagged(request.escrow, flag[0])
        if request.settled_hand_id:
            hand = self._one(cur, "SELECT escrow FROM escrow_hands WHERE hand_id = ?", (request.settled_hand_id,))
            if hand is None or hand[0] != request.escrow:
                raise hand_missing(request)
        plan = reconcile_plan(
            self._load_positions(cur, request.escrow), account.balance, request.request_id, request.seated
        )
        transfers = tuple(self._transfer_tx(cur, spec)[0] for spec in plan)
        cur.execute(
            self._sql("INSERT INTO reconciliations (request_id, escrow, fingerprint, created_us) VALUES (?, ?, ?, ?)"),
            (request.request_id, request.escrow, request.fingerprint(), self.clock()),
        )
        return Reconciliation(request.escrow, transfers)

    def list_transfers(self, account: str, after_id: int, limit: int) -> list[TransferRow]:
        def op(cur: Any) -> list[TransferRow]:
            if self._one(cur, "SELECT 1 FROM accounts WHERE account_id = ?", (account,)) is None:
                raise no_account("account_id", account)
            rows = self._all(
                cur,
                f"SELECT {_TRANSFER_COLS} FROM transfers WHERE (from_account = ? OR to_account = ?) "
                "AND transfer_id > ? ORDER BY transfer_id LIMIT ?",
                (account, account, after_id, limit),
            )
            return [self._transfer(r) for r in rows]

        return self._run(op)

    # ---- invariants ------------------------------------------------------------------------
    def summary(self) -> wallet_pb2.LedgerSummary:
        def op(cur: Any) -> wallet_pb2.LedgerSummary:
            totals = self._all(cur, "SELECT currency, SUM(balance) FROM accounts GROUP BY currency ORDER BY currency")
            out = wallet_pb2.LedgerSummary(
                totals=[
                    wallet_pb2.CurrencyTotal(currency=cast(common_pb2.Currency, int(c)), sum=int(s or 0))
                    for c, s in totals
                ]
            )
            out.accounts = int(self._one(cur, "SELECT COUNT(*) FROM accounts")[0])
            out.transfers = int(self._one(cur, "SELECT COUNT(*) FROM transfers")[0])
            out.negative_accounts = int(
                self._one(
                    cur, "SELECT COUNT(*) FROM accounts WHERE balance < 0 AND kind <> ?", (AK.ACCOUNT_KIND_EXTERNAL,)
                )[0]
            )
            out.mismatched_accounts = int(
                self._one(
                    cur,
                    "SELECT COUNT(*) FROM accounts a WHERE a.balance <> "
                    "COALESCE((SELECT SUM(amount) FROM transfers t WHERE t.to_account = a.account_id), 0) - "
                    "COALESCE((SELECT SUM(amount) FROM transfers t WHERE t.from_account = a.account_id), 0)",
                )[0]
            )
            out.outbox_pending = int(self._one(cur, "SELECT COUNT(*) FROM outbox WHERE published_us IS NULL")[0])
            return out

        return self._run(op)

    def balances_by_currency(self, kind: int | None = None) -> dict[int, int]:
        def op(cur: Any) -> dict[int, int]:
            if kind is None:
                rows = self._all(cur, "SELECT currency, SUM(balance) FROM accounts GROUP BY currency")
            else:
                rows = self._all(
                    cur, "SELECT currency, SUM(balance) FROM accounts WHERE kind = ? GROUP BY currency", (kind,)
                )
            return {int(c): int(s or 0) for c, s in rows}

        return self._run(op)

    # ---- outbox ----------------------------------------------------------------------------
    def outbox_batch(self, limit: int) -> list[OutboxRow]:
        def op(cur: Any) -> list[OutboxRow]:
            rows = self._all(
                cur,
                "SELECT event_seq, event_id, event_key, event_type, payload, created_us FROM outbox "
                "WHERE published_us IS NULL ORDER BY event_seq LIMIT ?",
                (limit,),
            )
            return [OutboxRow(int(r[0]), r[1], r[2], r[3], bytes(r[4]), int(r[5])) for r in rows]

        return self._run(op)

    def mark_published(self, seqs: list[int]) -> None:
        if not seqs:
            return
        marks = ", ".join("?" for _ in seqs)

        def op(cur: Any) -> None:
            cur.execute(
                self._sql(f"UPDATE outbox SET published_us = ? WHERE event_seq IN ({marks}) AND published_us IS NULL"),
                (self.clock(), *seqs),
            )

        self._run(op)

    def outbox_stats(self) -> tuple[int, int | None]:
        def op(cur: Any) -> tuple[int, int | None]:
            row = self._one(cur, "SELECT COUNT(*), MIN(created_us) FROM outbox WHERE published_us IS NULL")
            return int(row[0]), (None if row[1] is None else int(row[1]))

        return self._run(op)
