"""Where the gateway keeps player accounts (password hashes, failed logins, lockouts), refresh
tokens and play-money grant counts: one interface, :class:`MemoryAccountStore` (tests' fast tier),
:class:`SqliteAccountStore` (``$DATA_DIR/accounts.sqlite3``, durable across restarts; one gateway)
and ``gateway.account_store_postgresql.PostgresAccountStore`` (replicated gateways).

The store holds no policy: what a failure or a lockout means is :mod:`gateway.accounts`."""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Account:
    """A player who signed up with a password (``password_hash``: an argon2id PHC string)."""

    player_id: str
    password_hash: str
    created_at: float
    failed_logins: int = 0
    """Failed password checks since the last success (reset by a success or a lockout's end)."""
    locked_until: float = 0.0
    """Unix seconds; before it, logins are refused even with the right password."""
    password_changed_at: float = 0.0


@dataclass(frozen=True, slots=True)
class RefreshToken:
    """A refresh token, kept by its SHA-256 (the token itself is never stored)."""

    token_hash: str
    player_id: str
    expires_at: float
    used: bool = False


class AccountStore(Protocol):
    def create(self, account: Account) -> bool:
        """Add ``account``; False (nothing changed) when its player id is taken."""
        ...

    def get(self, player_id: str) -> Account | None: ...

    def update(self, account: Account) -> None:
        """Replace the stored account of ``account.player_id`` (which exists)."""
        ...

    def add_refresh(self, token: RefreshToken) -> None: ...

    def get_refresh(self, token_hash: str) -> RefreshToken | None: ...

    def use_refresh(self, token_hash: str) -> bool:
        """Mark the token used; False when it was used already (or is unknown): only one caller wins."""
        ...

    def revoke_refresh(self, player_id: str) -> int:
        """Forget every refresh token of the player; how many there were."""
        ...

    def purge_refresh(self, now: float) -> int:
        """Forget the refresh tokens expired by ``now`` (used ones are kept until then: a replay is
        recognised); how many."""
        ...

    def take_grant(self, key: str, day: str, limit: int) -> bool:
        """Count one grant for ``key`` on ``day`` when fewer than ``limit`` were counted; False otherwise."""
        ...

    def close(self) -> None: ...


class MemoryAccountStore:
    """The store in a dict (lost with the process)."""

    def __init__(self) -> None:
        self.accounts: dict[str, Account] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.grants: dict[tuple[str, str], int] = {}

    def create(self, account: Account) -> bool:
        if account.player_id in self.accounts:
            return False
        self.accounts[account.player_id] = account
        return True

    def get(self, player_id: str) -> Account | None:
        return self.accounts.get(player_id)

    def update(self, account: Account) -> None:
        if account.player_id not in self.accounts:
            raise KeyError(account.player_id)
        self.accounts[account.player_id] = account

    def add_refresh(self, token: RefreshToken) -> None:
        self.refresh[token.token_hash] = token

    def get_refresh(self, token_hash: str) -> RefreshToken | None:
        return self.refresh.get(token_hash)

    def use_refresh(self, token_hash: str) -> bool:
        token = self.refresh.get(token_hash)
        if token is None or token.used:
            return False
        self.refresh[token_hash] = dataclasses.replace(token, used=True)
        return True

    def revoke_refresh(self, player_id: str) -> int:
        gone = [h for h, t in self.refresh.items() if t.player_id == player_id]
        for token_hash in gone:
            del self.refresh[token_hash]
        return len(gone)

    def purge_refresh(self, now: float) -> int:
        gone = [h for h, t in self.refresh.items() if t.expires_at <= now]
        for token_hash in gone:
            del self.refresh[token_hash]
        return len(gone)

    def take_grant(self, key: str, day: str, limit: int) -> bool:
        count = self.grants.get((key, day), 0)
        if count >= limit:
            return False
        self.grants[(key, day)] = count + 1
        return True

    def close(self) -> None:
        pass


SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    player_id TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    failed_logins INTEGER NOT NULL DEFAULT 0,
    locked_until REAL NOT NULL DEFAULT 0,
    password_changed_at REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    expires_at REAL NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS refresh_tokens_player ON refresh_tokens (player_id);
CREATE TABLE IF NOT EXISTS grants (
    key TEXT NOT NULL,
    day TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (key, day)
);
"""
_ACCOUNT_COLUMNS = "player_id, password_hash, created_at, failed_logins, locked_until, password_changed_at"


class SqliteAccountStore:
    """The store in a SQLite file (WAL, autocommit; one lock around the connection)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def create(self, account: Account) -> bool:
        with self._lock:
            cursor = self._db.execute(
                f"INSERT OR IGNORE INTO accounts ({_ACCOUNT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                dataclasses.astuple(account),
            )
            return cursor.rowcount == 1

    def get(self, player_id: str) -> Account | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_ACCOUNT_COLUMNS} FROM accounts WHERE player_id = ?", (player_id,)
            ).fetchone()
        return None if row is None else Account(*row)

    def update(self, account: Account) -> None:
        with self._lock:
            cursor = self._db.execute(
                "UPDATE accounts SET password_hash = ?, created_at = ?, failed_logins = ?, locked_until = ?,"
                " password_changed_at = ? WHERE player_id = ?",
                (*dataclasses.astuple(account)[1:], account.player_id),
            )
        if cursor.rowcount != 1:
            raise KeyError(account.player_id)

    def add_refresh(self, token: RefreshToken) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO refresh_tokens (token_hash, player_id, expires_at, used) VALUES (?, ?, ?, ?)",
                (token.token_hash, token.player_id, token.expires_at, int(token.used)),
            )

    def get_refresh(self, token_hash: str) -> RefreshToken | None:
        with self._lock:
            row = self._db.execute(
                "SELECT token_hash, player_id, expires_at, used FROM refresh_tokens WHERE token_hash = ?", (token_hash,)
            ).fetchone()
        return None if row is None else RefreshToken(row[0], row[1], row[2], bool(row[3]))

    def use_refresh(self, token_hash: str) -> bool:
        with self._lock:
            cursor = self._db.execute(
                "UPDATE refresh_tokens SET used = 1 WHERE token_hash = ? AND used = 0", (token_hash,)
            )
            return cursor.rowcount == 1

    def revoke_refresh(self, player_id: str) -> int:
        with self._lock:
            return self._db.execute("DELETE FROM refresh_tokens WHERE player_id = ?", (player_id,)).rowcount

    def purge_refresh(self, now: float) -> int:
        with self._lock:
            return self._db.execute("DELETE FROM refresh_tokens WHERE expires_at <= ?", (now,)).rowcount

    def take_grant(self, key: str, day: str, limit: int) -> bool:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT count FROM grants WHERE key = ? AND day = ?", (key, day)).fetchone()
                count = 0 if row is None else row[0]
                if count >= limit:
                    self._db.execute("ROLLBACK")
                    return False
                self._db.execute(
                    "INSERT INTO grants (key, day, count) VALUES (?, ?, 1)"
                    " ON CONFLICT (key, day) DO UPDATE SET count = count + 1",
                    (key, day),
                )
                self._db.execute("COMMIT")
                return True
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self._lock:
            self._db.close()
