"""Players the tracker forgot, on disk: the last record of each player disconnected for longer than
``CONNECTION_FORGET_SECONDS``, so the process keeps in memory (and sweeps, and lists) only the players
seen lately, while GetConnection still tells a player who disconnected long ago from one never seen
(``NOT_FOUND`` is for the latter only) and his next heartbeat is a RECONNECTED with his real time
offline, as for a player never forgotten."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

from connection_monitor.tracker import Presence, State

SCHEMA = """
CREATE TABLE IF NOT EXISTS forgotten_presences (
    player_id TEXT PRIMARY KEY,
    state INTEGER NOT NULL,
    changed_at REAL NOT NULL,
    last_seen REAL NOT NULL,
    session_id TEXT NOT NULL,
    offline_seconds REAL NOT NULL
);
"""


class PresenceArchive:
    """One row per player ever forgotten (the latest record wins); read only when a player is not
    in memory (his first heartbeat since he was forgotten, or a GetConnection about him)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(SCHEMA)

    def keep(self, presences: Iterable[Presence]) -> None:
        """Store these records (one transaction: a sweep forgets many at once)."""
        rows = [
            (p.player_id, p.state.value, p.changed_at, p.last_seen, p.session_id, p.offline_seconds) for p in presences
        ]
        if not rows:
            return
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT INTO forgotten_presences "
                "(player_id, state, changed_at, last_seen, session_id, offline_seconds) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(player_id) DO UPDATE SET state = excluded.state, changed_at = excluded.changed_at, "
                "last_seen = excluded.last_seen, session_id = excluded.session_id, "
                "offline_seconds = excluded.offline_seconds",
                rows,
            )
            self._db.execute("COMMIT")

    def find(self, player_id: str) -> Presence | None:
        """The player's record as it was when he was forgotten; None: never forgotten."""
        with self._lock:
            row = self._db.execute(
                "SELECT state, changed_at, last_seen, session_id, offline_seconds "
                "FROM forgotten_presences WHERE player_id = ?",
                (player_id,),
            ).fetchone()
        if row is None:
            return None
        state, changed_at, last_seen, session_id, offline_seconds = row
        return Presence(player_id, State(state), changed_at, last_seen, session_id, offline_seconds)

    def drop(self, player_id: str) -> None:
        """Forget the row of a player back in memory: from then on memory has the truth (a restart
        then knows him no more than any player seen since the last start, rather than as he was)."""
        with self._lock:
            self._db.execute("DELETE FROM forgotten_presences WHERE player_id = ?", (player_id,))

    def close(self) -> None:
        with self._lock:
            self._db.close()
