"""The ledger on PostgreSQL (when ``WALLET_DB_DSN`` is set): a small pool of psycopg connections,
account rows locked with ``FOR UPDATE`` inside a transfer, a fenced call's partition epoch row with
``FOR SHARE`` (a claim's update of it waits for the calls in flight)."""

from __future__ import annotations

import logging
import queue
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from wallet.ledger import ErrorKind, Limits
from wallet.store_api import Clock, StoreUnavailable, ValueRefused, now_us
from wallet.store_sql import SqlLedgerStore

log = logging.getLogger("wallet.store")

_SCHEMA_LOCK = 727274  # advisory lock id: one schema creator at a time


class PostgresStore(SqlLedgerStore):
    """PostgreSQL through a small pool of psycopg connections; rows locked with FOR UPDATE."""

    placeholder = "%s"
    serial = "BIGSERIAL PRIMARY KEY"
    blob = "BYTEA"
    lock_rows = "FOR UPDATE"
    share_rows = "FOR SHARE"

    def __init__(self, dsn: str, pool_size: int = 8, clock: Clock = now_us, limits: Limits | None = None) -> None:
        import psycopg  # imported here so SQLite deployments need no libpq

        self._psycopg = psycopg
        self._dsn = dsn
        self.clock = clock
        self.limits = limits or Limits()
        self._pool: queue.Queue[Any] = queue.Queue()
        for _ in range(pool_size):
            self._pool.put(psycopg.connect(dsn, autocommit=False))
        self._size = pool_size
        self._closed = False
        with psycopg.connect(dsn, autocommit=True) as lock_conn:
            # Concurrent CREATE ... IF NOT EXISTS can still collide.
            lock_conn.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
            try:
                self.init_schema()
            finally:
                lock_conn.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        if self._closed:
            raise StoreUnavailable("ledger storage failed: the PostgreSQL store is closed")
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
        return isinstance(
            exc,
            (
                errors.UniqueViolation,
                errors.SerializationFailure,
                errors.DeadlockDetected,
                self._psycopg.OperationalError,
            ),
        )

    def _has_table(self, cur: Any, name: str) -> bool:
        return self._one(cur, "SELECT to_regclass(?)", (name,))[0] is not None

    def _refused(self, exc: Exception) -> ValueRefused | None:
        """A number out of PostgreSQL's range is OUT_OF_RANGE; any other data error (text with NUL,
        an encoding it cannot hold) INVALID_ARGUMENT. Neither is retried."""
        errors = self._psycopg.errors
        if isinstance(exc, errors.NumericValueOutOfRange):
            return ValueRefused("request: a number is outside the ledger's int64 range", ErrorKind.OUT_OF_RANGE)
        if isinstance(exc, self._psycopg.DataError):
            return ValueRefused("request: a value the ledger's database cannot store")
        return super()._refused(exc)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for _ in range(self._size):
            self._pool.get().close()
