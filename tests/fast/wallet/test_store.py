"""The ledger store contract (``store_contract.py``) on the in-process backends: in memory and SQLite."""

from __future__ import annotations

import sqlite3

import pytest

from tests.fast.wallet.store_contract import DurableStoreContract, FakeClock, LedgerStoreContract, SlowFence
from wallet.store_api import LedgerStore
from wallet.store_memory import MemoryStore
from wallet.store_sqlite import SqliteStore


class SlowFenceSqlite(SlowFence, SqliteStore):
    pass


class TestMemoryStore(LedgerStoreContract):
    def create_store(self, request: pytest.FixtureRequest, clock: FakeClock) -> LedgerStore:
        return MemoryStore(clock)


class TestSqliteStore(DurableStoreContract):
    def create_store(self, request: pytest.FixtureRequest, clock: FakeClock) -> LedgerStore:
        return SqliteStore(request.getfixturevalue("tmp_path") / "wallet.sqlite3", clock)

    def reopen(self, request: pytest.FixtureRequest, clock: FakeClock) -> LedgerStore:
        return self.create_store(request, clock)

    def reopen_slow_fence(self, request: pytest.FixtureRequest, clock: FakeClock) -> SlowFenceSqlite:
        return SlowFenceSqlite(request.getfixturevalue("tmp_path") / "wallet.sqlite3", clock)

    def drop_tables(self, request: pytest.FixtureRequest, tables: tuple[str, ...]) -> None:
        with sqlite3.connect(request.getfixturevalue("tmp_path") / "wallet.sqlite3") as conn:
            for table in tables:
                conn.execute(f"DROP TABLE {table}")
