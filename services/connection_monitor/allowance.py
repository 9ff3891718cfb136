"""The artificial all-in allowance, durable: the rules core's :class:`AllInAllowance` counts
uses in the rolling window; SQLite keeps every use (with its idempotency key) across restarts.

In memory only what a rule still needs: the uses inside the window (rules/002: a use older than
24 hours no longer counts; :meth:`AllowanceBook.forget` drops the players whose last use left it).
An idempotency key is looked up in SQLite (its primary key), not kept in memory: a key used once
answers ``replayed`` forever, however old, as the API promises."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

from cardroom.core.table import AllInAllowance

SCHEMA = """
CREATE TABLE IF NOT EXISTS all_in_uses (
    key TEXT PRIMARY KEY,
    player_id TEXT NOT NULL,
    used_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS all_in_uses_at ON all_in_uses (used_at);
CREATE TABLE IF NOT EXISTS all_in_resets (
    player_id TEXT PRIMARY KEY,
    reset_at REAL NOT NULL
);
"""


class NoneLeft(Exception):
    """The player has no artificial all-in left in the window."""


@dataclass(frozen=True, slots=True)
class Status:
    player_id: str
    left: int
    per_window: int
    window_seconds: int
    next_restore_at: float | None


class AllowanceBook:
    """Thread-safe allowance per player with idempotent uses and operator resets."""

    def __init__(self, path: Path, per_window: int, window_seconds: int, now: float | None = None) -> None:
        """``now``: the uses loaded at the start are those still in the window then (a service passes its
        clock's time: every use ever made stayed on disk, and all of them were read into memory at each
        start, to be dropped by the first sweep); None: every use (a caller with no clock)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.window_seconds = window_seconds
        self.rules = AllInAllowance(per_day=per_window, window_seconds=window_seconds)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        resets = dict(self._db.execute("SELECT player_id, reset_at FROM all_in_resets"))
        since = float("-inf") if now is None else now - window_seconds
        for player, used_at in self._db.execute(
            "SELECT player_id, used_at FROM all_in_uses WHERE used_at > ? ORDER BY used_at", (since,)
        ):
            if used_at > resets.get(player, float("-inf")):
                self.rules.uses.setdefault(player, []).append(used_at)

    def status(self, player_id: str, now: float) -> Status:
        with self._lock:
            return self._status(player_id, now)

    def _status(self, player_id: str, now: float) -> Status:
        left = self.rules.left(player_id, now)
        uses = self.rules.uses.get(player_id) or []
        restore = min(uses) + self.window_seconds if uses else None
        return Status(player_id, left, self.rules.per_day, self.window_seconds, restore)

    def consume(self, player_id: str, key: str, now: float) -> tuple[Status, bool]:
        """Use one; ``(status, replayed)``. Raise :class:`NoneLeft` (nothing changes) when empty,
        ``ValueError`` when ``key`` was used for another player."""
        with self._lock:
            owner = self._owner(key)
            if owner is not None:
                if owner != player_id:
                    raise ValueError(f"key {key!r} was already used for another player")
                return self._status(player_id, now), True
            if self.rules.left(player_id, now) <= 0:
                raise NoneLeft(
                    f"player {player_id!r} has no artificial all-in left "
                    f"({self.rules.per_day} per {self.window_seconds} s)"
                )
            self._db.execute(
                "INSERT INTO all_in_uses (key, player_id, used_at) VALUES (?, ?, ?)", (key, player_id, now)
            )
            self.rules.use(player_id, now)
            return self._status(player_id, now), False

    def _owner(self, key: str) -> str | None:
        """The player ``key`` was used for (None: never used)."""
        row = self._db.execute("SELECT player_id FROM all_in_uses WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def forget(self, now: float) -> int:
        """Drop the players with no use left in the window (their allowance is full: asking about
        them answers the same without a record). Returns how many were dropped."""
        with self._lock:
            uses, window = self.rules.uses, self.window_seconds
            spent = [player for player, times in uses.items() if all(now - t >= window for t in times)]
            for player in spent:
                del uses[player]
            return len(spent)

    def reset(self, player_id: str, now: float) -> Status:
        """Operator reset: uses before ``now`` no longer count."""
        with self._lock:
            self._db.execute(
                "INSERT INTO all_in_resets (player_id, reset_at) VALUES (?, ?) "
                "ON CONFLICT(player_id) DO UPDATE SET reset_at = excluded.reset_at",
                (player_id, now),
            )
            self.rules.reset(player_id)
            return self._status(player_id, now)

    def close(self) -> None:
        with self._lock:
            self._db.close()
