"""The ledger over a DB-API connection: SQL shared by the SQLite and PostgreSQL backends.

Every mutation runs in one database transaction together with its outbox row, so an event
exists exactly when its change does. Balances are stored on the account row for speed and
checked against the transfers by :meth:`SqlLedgerStore.summary`. Subclasses supply the
connections (:meth:`_tx`), the dialect and which driver errors are lost races (retried).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from cardroom.v1 import common_pb2, events_pb2, wallet_pb2
from wallet import ledger
from wallet.ledger import AK, LedgerError, TransferSpec
from wallet.store_api import (
    EVENT_ACCOUNT_OPENED,
    EVENT_TRANSFER_POSTED,
    AccountRow,
    Clock,
    LedgerStore,
    OutboxRow,
    StoreUnavailable,
    TransferRow,
    ValueRefused,
    balances_after,
    check_replay,
    no_account,
    now_us,
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
    clock: Clock = staticmethod(now_us)

    # ---- dialect hooks -------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def _is_race(self, exc: Exception) -> bool:  # pragma: no cover - abstract
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
            for statement in schema.split(";"):
                if statement.strip():
                    cur.execute(statement)
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
    def transfer(self, spec: TransferSpec) -> tuple[TransferRow, bool]:
        return self._run(self._transfer_tx, spec)

    def _transfer_tx(self, cur: Any, spec: TransferSpec) -> tuple[TransferRow, bool]:
        existing = self._one(cur, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE idempotency_key = ?", (spec.key,))
        if existing is not None:
            return check_replay(self._transfer(existing), spec), True
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
            return check_replay(self._transfer(existing), spec), True
        for field, account in (("from_account", spec.from_account), ("to_account", spec.to_account)):
            if account not in accounts:
                raise no_account(field, account)
        source, target = accounts[spec.from_account], accounts[spec.to_account]
        from_after, to_after = balances_after(spec, source, target, self.limits)
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

    def balances_by_currency(self) -> dict[int, int]:
        def op(cur: Any) -> dict[int, int]:
            rows = self._all(cur, "SELECT currency, SUM(balance) FROM accounts GROUP BY currency")
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
