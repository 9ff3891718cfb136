"""The tournament service's store (SQLite under ``DATA_DIR``): everything needed to rebuild every
tournament after a kill -9.

* ``tournaments`` — each tournament's creation request (its settings) and seed.
* ``commands`` — every command applied to a tournament's core :class:`Tournament`, in order
  (register, tick, deal, act, re-buy, cancel, crash ...). The core is pure, so replaying them
  rebuilds the same state, chip for chip (:mod:`tournament.commands`).
* ``requests`` — client request ids (idempotency) and payments in flight (``paying``): a buy-in,
  re-buy or add-on whose wallet transfers may have happened before the command was logged.
* ``money`` — wallet transfers owed (refunds, prizes, overlay, cancellation payouts), each with
  its idempotency key; ``done`` once the wallet took it.
* ``events`` — the outbox of tournament events (Kafka ``cardroom.tournament.events``).
* ``table_commands`` — on the dealer's tables: how many of a tournament's table commands the dealer
  answered (a replay after a restart sends only the ones after them).
* ``finished`` — a tournament over and forgotten by the house (its retention window passed, all
  its money paid): its last lobby answer (``info``, with its ``status`` and ``format`` numbers beside
  it, indexed by status and id), every entrant's last status and its refusals. The only place of its
  record: each answer about it reads its row, a history page (ListTournaments FINISHED / CANCELLED)
  reads that page's rows, a start counts them by format and status. A restart does not replay the
  tournament's commands (they stay, for the record). A store whose ``finished`` has no ``status``
  and ``format`` (an older one) gets them at open, filled from each row's ``info``.

One transaction per step: the commands of a step, its events and its money are committed
together, so a crash loses a whole step or nothing.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardroom.v1 import tournament_pb2 as pb

SCHEMA = """
CREATE TABLE IF NOT EXISTS tournaments (
  tournament_id TEXT PRIMARY KEY, request BLOB NOT NULL, seed INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS commands (
  tournament_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (tournament_id, seq));
CREATE TABLE IF NOT EXISTS requests (
  tournament_id TEXT NOT NULL, request_id TEXT NOT NULL, op TEXT NOT NULL, player TEXT NOT NULL,
  state TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (tournament_id, request_id));
CREATE TABLE IF NOT EXISTS money (
  key TEXT PRIMARY KEY, tournament_id TEXT NOT NULL, seq INTEGER NOT NULL, source TEXT NOT NULL,
  target TEXT NOT NULL, amount INTEGER NOT NULL, kind INTEGER NOT NULL, reference TEXT NOT NULL,
  done INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS events (
  tournament_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, at REAL NOT NULL, body TEXT NOT NULL,
  published INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tournament_id, seq));
CREATE TABLE IF NOT EXISTS table_commands (tournament_id TEXT PRIMARY KEY, acked INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS finished (
  tournament_id TEXT PRIMARY KEY, at REAL NOT NULL, info BLOB NOT NULL, detail TEXT NOT NULL,
  status INTEGER, format INTEGER);
CREATE INDEX IF NOT EXISTS money_pending ON money (done, seq);
CREATE INDEX IF NOT EXISTS events_pending ON events (published, tournament_id, seq);
"""
#: The columns of ``finished`` filled from its ``info`` (the lobby answer's status and format numbers),
#: added to an older store's at open.
FINISHED_COLUMNS = ("status", "format")
FINISHED_INDEX = "CREATE INDEX IF NOT EXISTS finished_status ON finished (status, tournament_id)"


def _kept(info: bytes) -> tuple[int, int]:
    """(status, format) of a lobby answer kept in ``finished``: its columns beside the blob."""
    over = pb.TournamentInfo.FromString(info)
    return over.status, over.format


@dataclass(frozen=True, slots=True)
class MoneyOp:
    """One wallet transfer owed, with its idempotency key."""

    key: str
    tournament_id: str
    source: str
    target: str
    amount: int
    kind: int
    reference: str


@dataclass(frozen=True, slots=True)
class StoredEvent:
    tournament_id: str
    seq: int
    type: str
    at: float
    body: str


@dataclass(frozen=True, slots=True)
class RequestRow:
    op: str
    player: str
    state: str
    body: dict[str, Any]


class TournamentStore:
    """SQLite, one connection guarded by a lock (the service's calls are short)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()
        self._migrate_finished()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # ------------------------------------------------------------------ tournaments
    def add_tournament(self, tournament_id: str, request: bytes, seed: int, created: float) -> bool:
        with self._lock:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO tournaments VALUES (?, ?, ?, ?)", (tournament_id, request, seed, created)
            )
            return cur.rowcount == 1

    def tournaments(self) -> list[tuple[str, bytes, int, float]]:
        """The tournaments to rebuild (replay) at a start: every one but the forgotten (``finished``)."""
        with self._lock:
            return list(
                self._db.execute(
                    "SELECT tournament_id, request, seed, created FROM tournaments"
                    " WHERE tournament_id NOT IN (SELECT tournament_id FROM finished) ORDER BY created, tournament_id"
                )
            )

    def request_of(self, tournament_id: str) -> bytes | None:
        """The creation request of ``tournament_id`` as stored (None: no such tournament)."""
        with self._lock:
            row = self._db.execute(
                "SELECT request FROM tournaments WHERE tournament_id = ?", (tournament_id,)
            ).fetchone()
        return None if row is None else bytes(row[0])

    # ------------------------------------------------------------------ tournaments over, forgotten
    def _migrate_finished(self) -> None:
        """An older store's ``finished`` (no ``status`` and ``format``): the columns added and filled from
        each row's ``info``, a batch of rows at a time, then the index by status and id, in one
        transaction. A store that has them is left as it is (done at every open)."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                have = {row[1] for row in db.execute("PRAGMA table_info(finished)")}
                missing = [column for column in FINISHED_COLUMNS if column not in have]
                for column in missing:
                    db.execute(f"ALTER TABLE finished ADD COLUMN {column} INTEGER")
                if missing:
                    self._backfill_finished()
                db.execute(FINISHED_INDEX)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _backfill_finished(self, batch: int = 1000) -> None:
        """Every ``finished`` row's ``status`` and ``format`` from its ``info`` (in the caller's transaction)."""
        last = 0
        while rows := self._db.execute(
            "SELECT rowid, info FROM finished WHERE rowid > ? ORDER BY rowid LIMIT ?", (last, batch)
        ).fetchall():
            self._db.executemany(
                "UPDATE finished SET status = ?, format = ? WHERE rowid = ?",
                [(*_kept(bytes(info)), rowid) for rowid, info in rows],
            )
            last = rows[-1][0]

    def forget(self, tournament_id: str, at: float, info: bytes, detail: dict[str, Any]) -> None:
        """``tournament_id`` leaves the house: its last lobby answer (its status and format beside it) and
        ``detail`` (its entrants' last statuses, its refusals) are kept, its dealer's acknowledgement
        count goes (never replayed again), in one transaction."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT OR REPLACE INTO finished (tournament_id, at, info, detail, status, format)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (tournament_id, at, info, json.dumps(detail, sort_keys=True), *_kept(info)),
                )
                db.execute("DELETE FROM table_commands WHERE tournament_id = ?", (tournament_id,))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def is_forgotten(self, tournament_id: str) -> bool:
        """Whether ``tournament_id`` was forgotten (has a ``finished`` row)."""
        with self._lock:
            row = self._db.execute("SELECT 1 FROM finished WHERE tournament_id = ?", (tournament_id,)).fetchone()
        return row is not None

    def forgotten_info(self, tournament_id: str) -> bytes | None:
        """A forgotten tournament's last lobby answer, serialized (None: not forgotten)."""
        with self._lock:
            row = self._db.execute("SELECT info FROM finished WHERE tournament_id = ?", (tournament_id,)).fetchone()
        return None if row is None else bytes(row[0])

    def forgotten_page(self, status: int, after: str, limit: int) -> list[bytes]:
        """The last lobby answers of the forgotten tournaments with ``status`` (a ``TournamentStatus``
        number) and an id after ``after`` ("": from the first), the first ``limit`` of them by id: read
        through the index by status and id, so only these rows are."""
        with self._lock:
            rows = self._db.execute(
                "SELECT info FROM finished WHERE status = ? AND tournament_id > ? ORDER BY tournament_id LIMIT ?",
                (status, after, limit),
            ).fetchall()
        return [bytes(r[0]) for r in rows]

    def forgotten_count(self) -> int:
        """How many tournaments were forgotten."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM finished").fetchone()[0])

    def forgotten_counts(self) -> list[tuple[int, int, int]]:
        """(format, status, how many): the forgotten tournaments counted by ``TournamentFormat`` and
        ``TournamentStatus`` number, one row a group."""
        with self._lock:
            rows = self._db.execute(
                "SELECT format, status, COUNT(*) FROM finished GROUP BY format, status ORDER BY format, status"
            ).fetchall()
        return [(int(f), int(s), int(n)) for f, s, n in rows]

    def forgotten_detail(self, tournament_id: str) -> dict[str, Any]:
        """A forgotten tournament's ``detail`` as :meth:`forget` kept it (empty: not forgotten)."""
        with self._lock:
            row = self._db.execute("SELECT detail FROM finished WHERE tournament_id = ?", (tournament_id,)).fetchone()
        detail: dict[str, Any] = {} if row is None else json.loads(row[0])
        return detail

    def commands(self, tournament_id: str) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT body FROM commands WHERE tournament_id = ? ORDER BY seq", (tournament_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    # ------------------------------------------------------------------ the dealer's tables
    def tables_acked(self) -> dict[str, int]:
        """tournament id -> how many of its table commands the dealer answered, in order."""
        with self._lock:
            return dict(self._db.execute("SELECT tournament_id, acked FROM table_commands"))

    def set_tables_acked(self, tournament_id: str, acked: int) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO table_commands VALUES (?, ?)"
                " ON CONFLICT (tournament_id) DO UPDATE SET acked = excluded.acked",
                (tournament_id, acked),
            )

    # ------------------------------------------------------------------ one step, one transaction
    def commit_step(
        self,
        tournament_id: str,
        first_seq: int,
        commands: list[dict[str, Any]],
        events: list[StoredEvent],
        money: list[MoneyOp],
        money_seq: int,
        requests: Sequence[tuple[str, RequestRow]] = (),
    ) -> None:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO commands VALUES (?, ?, ?)",
                    [(tournament_id, first_seq + i, json.dumps(c)) for i, c in enumerate(commands)],
                )
                db.executemany(
                    "INSERT OR IGNORE INTO events (tournament_id, seq, type, at, body) VALUES (?,?,?,?,?)",
                    [(e.tournament_id, e.seq, e.type, e.at, e.body) for e in events],
                )
                db.executemany(
                    "INSERT OR IGNORE INTO money (key, tournament_id, seq, source, target, amount, kind, reference) "
                    "VALUES (?,?,?,?,?,?,?,?)",
                    [
                        (m.key, m.tournament_id, money_seq, m.source, m.target, m.amount, m.kind, m.reference)
                        for m in money
                    ],
                )
                for request_id, row in requests:
                    db.execute(
                        "INSERT OR REPLACE INTO requests VALUES (?, ?, ?, ?, ?, ?)",
                        (tournament_id, request_id, row.op, row.player, row.state, json.dumps(row.body)),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ requests
    def request(self, tournament_id: str, request_id: str) -> RequestRow | None:
        with self._lock:
            row = self._db.execute(
                "SELECT op, player, state, body FROM requests WHERE tournament_id = ? AND request_id = ?",
                (tournament_id, request_id),
            ).fetchone()
        return None if row is None else RequestRow(row[0], row[1], row[2], json.loads(row[3]))

    def put_request(self, tournament_id: str, request_id: str, row: RequestRow) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO requests VALUES (?, ?, ?, ?, ?, ?)",
                (tournament_id, request_id, row.op, row.player, row.state, json.dumps(row.body)),
            )

    def drop_request(self, tournament_id: str, request_id: str) -> None:
        with self._lock:
            self._db.execute(
                "DELETE FROM requests WHERE tournament_id = ? AND request_id = ?", (tournament_id, request_id)
            )

    def paying_count(self, tournament_id: str) -> int:
        """Payments of ``tournament_id`` in flight (or left by a crash or an outage)."""
        with self._lock:
            return int(
                self._db.execute(
                    "SELECT COUNT(*) FROM requests WHERE state = 'paying' AND tournament_id = ?", (tournament_id,)
                ).fetchone()[0]
            )

    def paying(self) -> list[tuple[str, str, RequestRow]]:
        """Payments in flight when the service stopped."""
        with self._lock:
            rows = self._db.execute(
                "SELECT tournament_id, request_id, op, player, state, body FROM requests "
                "WHERE state = 'paying' ORDER BY rowid"
            ).fetchall()
        return [(r[0], r[1], RequestRow(r[2], r[3], r[4], json.loads(r[5]))) for r in rows]

    # ------------------------------------------------------------------ money
    def pending_money(self, limit: int = 200) -> list[MoneyOp]:
        with self._lock:
            rows = self._db.execute(
                "SELECT key, tournament_id, source, target, amount, kind, reference FROM money "
                "WHERE done = 0 ORDER BY seq, rowid LIMIT ?",
                (limit,),
            ).fetchall()
        return [MoneyOp(*r) for r in rows]

    def money_done(self, key: str) -> None:
        with self._lock:
            self._db.execute("UPDATE money SET done = 1 WHERE key = ?", (key,))

    def money_pending_count(self, tournament_id: str | None = None) -> int:
        with self._lock:
            if tournament_id is None:
                return int(self._db.execute("SELECT COUNT(*) FROM money WHERE done = 0").fetchone()[0])
            return int(
                self._db.execute(
                    "SELECT COUNT(*) FROM money WHERE done = 0 AND tournament_id = ?", (tournament_id,)
                ).fetchone()[0]
            )

    # ------------------------------------------------------------------ events
    def events(self, tournament_id: str, from_seq: int, limit: int = 500) -> list[StoredEvent]:
        with self._lock:
            rows = self._db.execute(
                "SELECT tournament_id, seq, type, at, body FROM events WHERE tournament_id = ? "
                "AND seq >= ? ORDER BY seq LIMIT ?",
                (tournament_id, from_seq, limit),
            ).fetchall()
        return [StoredEvent(*r) for r in rows]

    def unpublished(self, limit: int = 500) -> list[StoredEvent]:
        with self._lock:
            rows = self._db.execute(
                "SELECT tournament_id, seq, type, at, body FROM events WHERE published = 0 ORDER BY rowid LIMIT ?",
                (limit,),
            ).fetchall()
        return [StoredEvent(*r) for r in rows]

    def mark_published(self, keys: list[tuple[str, int]]) -> None:
        with self._lock:
            self._db.executemany("UPDATE events SET published = 1 WHERE tournament_id = ? AND seq = ?", keys)


__all__ = ["MoneyOp", "RequestRow", "StoredEvent", "TournamentStore"]
