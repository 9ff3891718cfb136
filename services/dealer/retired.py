"""Closed tables retired from memory: a snapshot each, an actor again when a call comes.

A closed table deals no more, but its id stays taken (``CreateTable`` refuses it, ``OpenTournamentTable``
answers a repeat with its state) and late calls get its final answers. Its actor (the rules core's table
and its loop's task, some 10–20 KB) stayed in its dealer for good — one per sit-and-go and per tournament
table, all day — and was built again from the snapshots topic on every restart. Once nothing about it lives
in memory only (:meth:`dealer.actor.TableActor.retirable`: no answer kept for a repeat, no watcher, nothing
left to write, pay or publish), it retires: the snapshot a restart would read (a few hundred bytes) takes
its place (:meth:`dealer.service.Tables.retire_idle`). A call about it brings the actor back from that
snapshot, exactly as a restart would (:meth:`dealer.service.Tables.lookup`); idle again, it retires again.
"""

from __future__ import annotations

from collections.abc import Callable

from cardroom.v1 import dealer_pb2
from dealer.actor import TableActor
from dealer.deps import Deps
from dealer.tablespec import build
from dealer.tournament_table import Finder, TournamentTableActor


def actor_from_snapshot(table_id: str, snap: dealer_pb2.TableSnapshot, deps: Deps, find: Finder) -> TableActor:
    """The actor ``snap`` restores (neither started nor recovered: see :func:`dealer.server.restore_tables`)."""
    if snap.HasField("tournament"):  # a tournament's table: its hand in progress rolled back
        return TournamentTableActor.from_snapshot(table_id, snap, deps, find)
    actor = TableActor(table_id, build(snap.config), deps)
    actor.restore(snap)
    return actor


def settled(snap: dealer_pb2.TableSnapshot) -> bool:
    """A closed table's snapshot with nothing to redo (no write-ahead entry, no escrow reconciliation owed,
    no tournament event or move undelivered): a restart keeps it as it is, no actor built (a closed table
    takes no buy-in, so no crash after its close can lose one's answer)."""
    t = snap.tournament
    return (
        snap.closed
        and not snap.reconcile_owed
        and not snap.pending_cashouts
        and not snap.HasField("pending_buy_in")
        and not snap.HasField("pending_record")
        and not t.outbox
        and not t.moves_out
    )


class Retired:
    """The retired tables' snapshots (serialized), by table id."""

    def __init__(self) -> None:
        self._snapshots: dict[str, bytes] = {}

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._snapshots

    def __len__(self) -> int:
        return len(self._snapshots)

    def keep(self, table_id: str, snap: dealer_pb2.TableSnapshot) -> None:
        self._snapshots[table_id] = snap.SerializeToString()

    def discard(self, table_id: str) -> None:
        self._snapshots.pop(table_id, None)

    def take(self, table_id: str) -> dealer_pb2.TableSnapshot | None:
        """The table's snapshot, no longer kept here (its actor is about to be back); None: not retired."""
        raw = self._snapshots.pop(table_id, None)
        return None if raw is None else dealer_pb2.TableSnapshot.FromString(raw)

    def drop(self, gone: Callable[[str], bool]) -> None:
        """Forget the tables ``gone`` says (a partition given up: its next owner restores them)."""
        self._snapshots = {t: raw for t, raw in self._snapshots.items() if not gone(t)}
