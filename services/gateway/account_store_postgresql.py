"""The account store on PostgreSQL (``GATEWAY_ACCOUNTS_DSN``): what replicated gateways share (a
SQLite file under each replica's DATA_DIR would give each its own accounts). Tables are prefixed
``gateway_`` so the wallet's database can hold them too. One connection behind a lock; a lost
connection is reopened at the next call."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gateway.account_store import Account, RefreshToken

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS gateway_accounts (
        player_id TEXT PRIMARY KEY,
        password_hash TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        failed_logins INTEGER NOT NULL DEFAULT 0,
        locked_until DOUBLE PRECISION NOT NULL DEFAULT 0,
        password_changed_at DOUBLE PRECISION NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS gateway_refresh_tokens (
        token_hash TEXT PRIMARY KEY,
        player_id TEXT NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL,
        used BOOLEAN NOT NULL DEFAULT FALSE
    )""",
    "CREATE INDEX IF NOT EXISTS gateway_refresh_tokens_player ON gateway_refresh_tokens (player_id)",
    """CREATE TABLE IF NOT EXISTS gateway_grants (
        key TEXT NOT NULL,
        day TEXT NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (key, day)
    )""",
)
_SCHEMA_LOCK = 727275  # advisory lock id: one schema creator at a time
_COLUMNS = "player_id, password_hash, created_at, failed_logins, locked_until, password_changed_at"


class PostgresAccountStore:
    def __init__(self, dsn: str) -> None:
        import psycopg  # imported here so SQLite deployments need no libpq

        self._psycopg = psycopg
        self._dsn = dsn
        self._lock = threading.Lock()
        self._conn: Any = psycopg.connect(dsn, autocommit=True)
        with self._cursor() as cur:
            cur.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
            try:
                for statement in SCHEMA:
                    cur.execute(statement)
            finally:
                cur.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        with self._lock:
            if self._conn.closed:
                self._conn = self._psycopg.connect(self._dsn, autocommit=True)
            with self._conn.cursor() as cur:
                yield cur

    def create(self, account: Account) -> bool:
        with self._cursor() as cur:
            cur.execute(
                f"INSERT INTO gateway_accounts ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (player_id) DO NOTHING",
                dataclasses.astuple(account),
            )
            return bool(cur.rowcount == 1)

    def get(self, player_id: str) -> Account | None:
        with self._cursor() as cur:
            cur.execute(f"SELECT {_COLUMNS} FROM gateway_accounts WHERE player_id = %s", (player_id,))
            row = cur.fetchone()
        return None if row is None else Account(*row)

    def update(self, account: Account) -> None:
        with self._cursor() as cur:
            cur.execute(
                "UPDATE gateway_accounts SET password_hash = %s, created_at = %s, failed_logins = %s,"
                " locked_until = %s, password_changed_at = %s WHERE player_id = %s",
                (*dataclasses.astuple(account)[1:], account.player_id),
            )
            if cur.rowcount != 1:
                raise KeyError(account.player_id)

    def add_refresh(self, token: RefreshToken) -> None:
        with self._cursor() as cur:
            cur.execute(
                "INSERT INTO gateway_refresh_tokens (token_hash, player_id, expires_at, used) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (token_hash) DO UPDATE SET player_id = EXCLUDED.player_id,"
                " expires_at = EXCLUDED.expires_at, used = EXCLUDED.used",
                (token.token_hash, token.player_id, token.expires_at, token.used),
            )

    def get_refresh(self, token_hash: str) -> RefreshToken | None:
        with self._cursor() as cur:
            cur.execute(
                "SELECT token_hash, player_id, expires_at, used FROM gateway_refresh_tokens WHERE token_hash = %s",
                (token_hash,),
            )
            row = cur.fetchone()
        return None if row is None else RefreshToken(row[0], row[1], row[2], bool(row[3]))

    def use_refresh(self, token_hash: str) -> bool:
        with self._cursor() as cur:
            cur.execute(
                "UPDATE gateway_refresh_tokens SET used = TRUE WHERE token_hash = %s AND NOT used", (token_hash,)
            )
            return bool(cur.rowcount == 1)

    def revoke_refresh(self, player_id: str) -> int:
        with self._cursor() as cur:
            cur.execute("DELETE FROM gateway_refresh_tokens WHERE player_id = %s", (player_id,))
            return int(cur.rowcount)

    def purge_refresh(self, now: float) -> int:
        with self._cursor() as cur:
            cur.execute("DELETE FROM gateway_refresh_tokens WHERE expires_at <= %s", (now,))
            return int(cur.rowcount)

    def take_grant(self, key: str, day: str, limit: int) -> bool:
        if limit <= 0:
            return False
        with self._cursor() as cur:
            cur.execute(
                "INSERT INTO gateway_grants (key, day, count) VALUES (%s, %s, 1) ON CONFLICT (key, day)"
                " DO UPDATE SET count = gateway_grants.count + 1 WHERE gateway_grants.count < %s RETURNING count",
                (key, day, limit),
            )
            return cur.fetchone() is not None

    def close(self) -> None:
        with self._lock:
            self._conn.close()
