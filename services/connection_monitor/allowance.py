"""The artificial all-in allowance, durable: the rules core's :class:`AllInAllowance` counts
uses in the rolling window; SQLite keeps every use (with its idempotency key) across restarts."""

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

    def __init__(self, path: Path, per_window: int, window_seconds: int) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.window_seconds = window_seconds
        self.rules = AllInAllowance(per_day=per_window, window_seconds=window_seconds)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)
        self._keys: dict[str, str] = {}
        resets = dict(self._db.execute("SELECT player_id, reset_at FROM all_in_resets"))
        for key, player, used_at in self._db.execute(
            "SELECT key, player_id, used_at FROM all_in_uses ORDER BY used_at"
        ):
            self._keys[key] = player
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
            owner = self._keys.get(key)
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
            self._keys[key] = player_id
            self.rules.use(player_id, now)
            return self._status(player_id, now), False

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
