"""Ledger storage: the interface (:mod:`wallet.store_api`) and the backend chosen by configuration.

* :mod:`wallet.store_api` — :class:`LedgerStore`, the rows, the outbox event types, the errors
  (root :class:`StoreError`).
* :mod:`wallet.store_sqlite` — SQLite (default), :mod:`wallet.store_postgresql` — PostgreSQL
  (both over the SQL in :mod:`wallet.store_sql`), :mod:`wallet.store_memory` — in memory.

The names the service, relay and consumer import from here (``LedgerStore``, ``TransferRow``,
``OutboxRow``, ``EVENT_*``, ``SqliteStore``, ``PostgresStore``, ``open_store``) stay available.
"""

from __future__ import annotations

from pathlib import Path

from wallet.ledger import Limits
from wallet.store_api import (
    EVENT_ACCOUNT_OPENED,
    EVENT_TRANSFER_POSTED,
    AccountNotFound,
    AccountRow,
    Clock,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerStore,
    OutboxRow,
    OutOfRange,
    StoreError,
    StoreRejection,
    StoreUnavailable,
    TransferRow,
    ValueRefused,
    now_us,
)
from wallet.store_memory import MemoryStore
from wallet.store_postgresql import PostgresStore
from wallet.store_sqlite import SqliteStore

__all__ = [
    "EVENT_ACCOUNT_OPENED",
    "EVENT_TRANSFER_POSTED",
    "AccountNotFound",
    "AccountRow",
    "Clock",
    "IdempotencyConflict",
    "InsufficientFunds",
    "LedgerStore",
    "MemoryStore",
    "OutOfRange",
    "OutboxRow",
    "PostgresStore",
    "SqliteStore",
    "StoreError",
    "StoreRejection",
    "StoreUnavailable",
    "TransferRow",
    "ValueRefused",
    "now_us",
    "open_store",
]


def open_store(dsn: str, sqlite_path: Path, pool_size: int = 8, limits: Limits | None = None) -> LedgerStore:
    """PostgreSQL when ``dsn`` is set, else SQLite at ``sqlite_path`` (:class:`MemoryStore` is for
    in-process use and tests)."""
    if dsn:
        return PostgresStore(dsn, pool_size, limits=limits)
    return SqliteStore(sqlite_path, limits=limits)
