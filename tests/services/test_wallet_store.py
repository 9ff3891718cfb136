"""The ledger store contract (``tests/fast/wallet/store_contract.py``) on a real PostgreSQL
(the session's throwaway cluster from ``tests/services/pg.py``), one fresh database per test."""

from __future__ import annotations

import uuid

import psycopg
import pytest

from tests.fast.wallet.store_contract import DurableStoreContract, FakeClock, SlowFence
from tests.services.pg import PostgresCluster
from wallet.store_api import LedgerStore
from wallet.store_postgresql import PostgresStore


class SlowFencePostgres(SlowFence, PostgresStore):
    pass


class TestPostgresStore(DurableStoreContract):
    def create_store(self, request: pytest.FixtureRequest, clock: FakeClock) -> LedgerStore:
        cluster: PostgresCluster = request.getfixturevalue("postgres")
        self.dsn = cluster.create_database(f"store_{uuid.uuid4().hex[:10]}")
        return PostgresStore(self.dsn, pool_size=4, clock=clock)

    def reopen(self, request: pytest.FixtureRequest, clock: FakeClock) -> LedgerStore:
        return PostgresStore(self.dsn, pool_size=4, clock=clock)

    def reopen_slow_fence(self, request: pytest.FixtureRequest, clock: FakeClock) -> SlowFencePostgres:
        return SlowFencePostgres(self.dsn, pool_size=2, clock=clock)

    def drop_tables(self, request: pytest.FixtureRequest, tables: tuple[str, ...]) -> None:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            for table in tables:
                conn.execute(f"DROP TABLE {table}")
