"""Ledger storage: one implementation over SQLite (default) and PostgreSQL (when a DSN is set).

All methods are synchronous and thread-safe; the gRPC service calls them from worker threads.
Every mutation runs in one database transaction together with its outbox row, so an event
exists exactly when its change does. Balances are stored on the account row for speed and
checked against the transfers by :meth:`LedgerStore.summary`.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardroom.v1 import events_pb2, wallet_pb2
from wallet import ledger
from wallet.ledger import AK, ErrorKind, LedgerError, TransferSpec

log = logging.getLogger("wallet.store")

EVENT_ACCOUNT_OPENED = "cardroom.wallet.account_opened.v1"
EVENT_TRANSFER_POSTED = "cardroom.wallet.transfer_posted.v1"

_SCHEMA = """
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


def now_us() -> int:
    return time.time_ns() // 1000


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
            account_id=self.account_id, kind=self.kind, owner=self.owner,
            currency=self.currency, balance=self.balance,
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
            transfer_id=self.transfer_id, from_account=self.from_account, to_account=self.to_account,
            amount=self.amount, kind=self.kind, reference=self.reference, idempotency_key=self.key,
            from_balance_after=self.from_balance_after, to_balance_after=self.to_balance_after,
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


_TRANSFER_COLS = (
    "transfer_id, idempotency_key, from_account, to_account, amount, kind, reference, "
    "from_balance_after, to_balance_after, created_us"
)


class LedgerStore:
    """The ledger over a DB-API connection; subclasses supply connections and dialect."""

    placeholder = "?"
    serial = "INTEGER PRIMARY KEY AUTOINCREMENT"
    blob = "BLOB"
    lock_rows = ""  # appended to the account SELECT inside a transfer (PostgreSQL: FOR UPDATE)

    # ---- dialect hooks -------------------------------------------------------------------
    @contextmanager
    def _tx(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def _is_race(self, exc: Exception) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def close(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    # ---- helpers ---------------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def _one(self, cur: Any, sql: str, params: tuple = ()) -> Any:
        cur.execute(self._sql(sql), params)
        return cur.fetchone()

    def _all(self, cur: Any, sql: str, params: tuple = ()) -> list[Any]:
        cur.execute(self._sql(sql), params)
        return list(cur.fetchall())

    def _run(self, fn: Any, *args: Any) -> Any:
        """Run ``fn(cur, *args)`` in a transaction, retrying lost races."""
        for attempt in range(20):
            try:
                with self._tx() as cur:
                    return fn(cur, *args)
            except LedgerError:
                raise
            except Exception as exc:
                if not self._is_race(exc) or attempt == 19:
                    raise
                time.sleep(0.001 * (attempt + 1))
        raise AssertionError("unreachable")

    def init_schema(self) -> None:
        schema = _SCHEMA.format(serial=self.serial, blob=self.blob)

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
        created = now_us()
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
                "INSERT INTO outbox (event_id, event_key, event_type, payload, created_us) "
                "VALUES (?, ?, ?, ?, ?)"
            ),
            (str(uuid.uuid4()), key, event_type, payload.SerializeToString(), now_us()),
        )

    @staticmethod
    def _account(row: Any) -> AccountRow:
        return AccountRow(row[0], int(row[1]), row[2], int(row[3]), int(row[4]), int(row[5]))

    @staticmethod
    def _transfer(row: Any) -> TransferRow:
        return TransferRow(
            int(row[0]), row[1], row[2], row[3], int(row[4]), int(row[5]), row[6],
            int(row[7]), int(row[8]), int(row[9]),
        )

    # ---- accounts ------------------------------------------------------------------------
    def open_account(self, kind: int, owner: str, currency: int) -> tuple[AccountRow, bool]:
        account = ledger.account_id(kind, owner, currency)

        def op(cur: Any) -> tuple[AccountRow, bool]:
            created = self._insert_account(cur, kind, owner, currency)
            row = self._one(cur, "SELECT account_id, kind, owner, currency, balance, created_us FROM accounts WHERE account_id = ?", (account,))
            return self._account(row), created

        return self._run(op)

    def get_account(self, account: str) -> AccountRow:
        def op(cur: Any) -> AccountRow:
            row = self._one(cur, "SELECT account_id, kind, owner, currency, balance, created_us FROM accounts WHERE account_id = ?", (account,))
            if row is None:
                raise LedgerError(ErrorKind.NOT_FOUND, f"account_id: no account {account!r}")
            return self._account(row)

        return self._run(op)

    # ---- transfers -----------------------------------------------------------------------
    def transfer(self, spec: TransferSpec) -> tuple[TransferRow, bool]:
        """Apply ``spec`` once per key. Returns the transfer and whether it is a replay."""
        return self._run(self._transfer_tx, spec)

    def _transfer_tx(self, cur: Any, spec: TransferSpec) -> tuple[TransferRow, bool]:
        existing = self._one(cur, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE idempotency_key = ?", (spec.key,))
        if existing is not None:
            return self._check_replay(self._transfer(existing), spec), True
        first, second = sorted((spec.from_account, spec.to_account))
        rows = self._all(
            cur,
            "SELECT account_id, kind, owner, currency, balance, created_us FROM accounts "
            f"WHERE account_id IN (?, ?) ORDER BY account_id {self.lock_rows}",
            (first, second),
        )
        accounts = {row[0]: self._account(row) for row in rows}
        # The key may have been committed while we waited for the row locks.
        existing = self._one(cur, f"SELECT {_TRANSFER_COLS} FROM transfers WHERE idempotency_key = ?", (spec.key,))
        if existing is not None:
            return self._check_replay(self._transfer(existing), spec), True
        for field, account in (("from_account", spec.from_account), ("to_account", spec.to_account)):
            if account not in accounts:
                raise LedgerError(ErrorKind.NOT_FOUND, f"{field}: no account {account!r}")
        source, target = accounts[spec.from_account], accounts[spec.to_account]
        from_after = source.balance - spec.amount
        to_after = target.balance + spec.amount
        if from_after < 0 and source.kind not in ledger.MAY_GO_NEGATIVE:
            raise LedgerError(
                ErrorKind.PRECONDITION,
                f"amount: {spec.amount} exceeds the balance {source.balance} of {spec.from_account}",
            )
        created = now_us()
        cur.execute(self._sql("UPDATE accounts SET balance = ? WHERE account_id = ?"), (from_after, spec.from_account))
        cur.execute(self._sql("UPDATE accounts SET balance = ? WHERE account_id = ?"), (to_after, spec.to_account))
        row = self._one(
            cur,
            "INSERT INTO transfers (idempotency_key, from_account, to_account, amount, kind, reference, "
            "from_balance_after, to_balance_after, created_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "RETURNING transfer_id",
            (spec.key, spec.from_account, spec.to_account, spec.amount, spec.kind, spec.reference,
             from_after, to_after, created),
        )
        transfer = TransferRow(
            int(row[0]), spec.key, spec.from_account, spec.to_account, spec.amount, spec.kind,
            spec.reference, from_after, to_after, created,
        )
        self._outbox(cur, spec.from_account, EVENT_TRANSFER_POSTED, events_pb2.TransferPosted(transfer=transfer.to_proto()))
        return transfer, False

    @staticmethod
    def _check_replay(existing: TransferRow, spec: TransferSpec) -> TransferRow:
        if existing.spec() != spec:
            raise LedgerError(
                ErrorKind.CONFLICT,
                f"idempotency_key: {spec.key!r} was already used for a different transfer "
                f"(#{existing.transfer_id}: {existing.amount} from {existing.from_account} to {existing.to_account})",
            )
        return existing

    def list_transfers(self, account: str, after_id: int, limit: int) -> list[TransferRow]:
        def op(cur: Any) -> list[TransferRow]:
            if self._one(cur, "SELECT 1 FROM accounts WHERE account_id = ?", (account,)) is None:
                raise LedgerError(ErrorKind.NOT_FOUND, f"account_id: no account {account!r}")
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
                totals=[wallet_pb2.CurrencyTotal(currency=int(c), sum=int(s or 0)) for c, s in totals],
            )
            out.accounts = int(self._one(cur, "SELECT COUNT(*) FROM accounts")[0])
            out.transfers = int(self._one(cur, "SELECT COUNT(*) FROM transfers")[0])
            out.negative_accounts = int(self._one(
                cur, "SELECT COUNT(*) FROM accounts WHERE balance < 0 AND kind <> ?", (AK.ACCOUNT_KIND_EXTERNAL,),
            )[0])
            out.mismatched_accounts = int(self._one(
                cur,
                "SELECT COUNT(*) FROM accounts a WHERE a.balance <> "
                "COALESCE((SELECT SUM(amount) FROM transfers t WHERE t.to_account = a.account_id), 0) - "
                "COALESCE((SELECT SUM(amount) FROM transfers t WHERE t.from_account = a.account_id), 0)",
            )[0])
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
            cur.execute(self._sql(f"UPDATE outbox SET published_us = ? WHERE event_seq IN ({marks})"), (now_us(), *seqs))

        self._run(op)

    def outbox_stats(self) -> tuple[int, int | None]:
        """(pending events, creation time in µs of the oldest pending one)."""
        def op(cur: Any) -> tuple[int, int | None]:
            row = self._one(cur, "SELECT COUNT(*), MIN(created_us) FROM outbox WHERE published_us IS NULL")
            return int(row[0]), (None if row[1] is None else int(row[1]))

        return self._run(op)


class SqliteStore(LedgerStore):
    """SQLite in WAL mode; one connection, one writer at a time (``BEGIN IMMEDIATE``)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self.init_schema()

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._lock:
            cur = self._conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    def _is_race(self, exc: Exception) -> bool:
        return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


class PostgresStore(LedgerStore):
    """PostgreSQL through a small pool of psycopg connections; rows locked with FOR UPDATE."""

    placeholder = "%s"
    serial = "BIGSERIAL PRIMARY KEY"
    blob = "BYTEA"
    lock_rows = "FOR UPDATE"

    def __init__(self, dsn: str, pool_size: int = 8) -> None:
        import psycopg  # imported here so SQLite deployments need no libpq

        self._psycopg = psycopg
        self._dsn = dsn
        self._pool: queue.Queue[Any] = queue.Queue()
        for _ in range(pool_size):
            self._pool.put(psycopg.connect(dsn, autocommit=False))
        self._size = pool_size
        with psycopg.connect(dsn, autocommit=True) as lock_conn:
            # One schema creator at a time: concurrent CREATE ... IF NOT EXISTS can still collide.
            lock_conn.execute("SELECT pg_advisory_lock(727274)")
            try:
                self.init_schema()
            finally:
                lock_conn.execute("SELECT pg_advisory_unlock(727274)")

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        conn = self._pool.get()
        try:
            if conn.closed:  # lost earlier (server restart): reconnect, or fail this call only
                conn = self._psycopg.connect(self._dsn, autocommit=False)
            cur = conn.cursor()
            try:
                yield cur
            except BaseException:
                if not conn.closed:
                    try:
                        conn.rollback()
                    except Exception:
                        log.warning("rollback failed", exc_info=True)
                raise
            conn.commit()
        finally:
            self._pool.put(conn)  # always back: the pool never shrinks

    def _is_race(self, exc: Exception) -> bool:
        """Races, and lost connections: every operation is idempotent (transfers by key, accounts
        by id, outbox marks by sequence), so running it again is safe even after an unknown commit."""
        errors = self._psycopg.errors
        return isinstance(exc, (errors.UniqueViolation, errors.SerializationFailure, errors.DeadlockDetected,
                                self._psycopg.OperationalError))

    def close(self) -> None:
        for _ in range(self._size):
            self._pool.get().close()


def open_store(dsn: str, sqlite_path: Path, pool_size: int = 8) -> LedgerStore:
    """PostgreSQL when ``dsn`` is set, else SQLite at ``sqlite_path``."""
    if dsn:
        return PostgresStore(dsn, pool_size)
    return SqliteStore(sqlite_path)
