"""The ledger on SQLite (the default backend): WAL mode, one connection, one writer at a time."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wallet.ledger import Limits
from wallet.store_api import Clock, now_us
from wallet.store_sql import SqlLedgerStore


class SqliteStore(SqlLedgerStore):
    """SQLite in WAL mode; one connection, one writer at a time (``BEGIN IMMEDIATE``)."""

    def __init__(self, path: Path, clock: Clock = now_us, limits: Limits | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.clock = clock
        self.limits = limits or Limits()
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

    def _has_table(self, cur: Any, name: str) -> bool:
        return self._one(cur, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) is not None

    def close(self) -> None:
        with self._lock:
            self._conn.close()
