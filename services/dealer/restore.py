"""Crash recovery: the latest snapshot of every table, read back from the compacted topic.

Choice: snapshots go to the compacted Kafka topic ``cardroom.table.snapshots`` keyed by table
id (not the database): the dealer needs no database of its own, compaction keeps exactly
the latest state per table, and the same topic is an audit trail until compaction.

On start the dealer reads the topic from the beginning to its end offsets (no consumer
group), keeps the last snapshot per table and rebuilds every open table from it:

* seats, stacks, button and blind debts as at the last hand boundary or seat change;
* a hand that was in progress is cancelled: the snapshot holds the stacks from before the
  deal, so every chip put in the pot is back with its owner (rules/003, cash games); a
  ``HandFinished{cancelled}`` event tells the watchers; the hand number is not reused;
* write-ahead entries are redone, idempotently: the hand record and hand-settled event of a
  settled hand (same event ids), cash-outs and a buy-in (same wallet idempotency keys).

``DEALER_CRASH_POLICY=close`` follows rules/003 to the letter instead: after a crash the
table is closed and every stack goes back to its player's account.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from cardroom.runtime.consumer import Record, read_to_end
from cardroom.runtime.events import decode_envelope
from cardroom.v1 import dealer_pb2
from dealer import metrics

log = logging.getLogger("dealer.restore")


#: What :mod:`dealer.snapshots` writes: the only records restore believes (issue 14: "a snapshot
#: must come from the table's owner"; the broker's ACLs let only the dealer write the topic).
SNAPSHOT_TYPE = "cardroom.dealer.table_snapshot.v1"
SNAPSHOT_SOURCE = "dealer"


def refusal(record: Record) -> str | None:
    """Why a snapshot record is not the table owner's (None: it is)."""
    try:
        envelope = decode_envelope(record.value or b"")
    except Exception:  # noqa: BLE001 - any undecodable body is refused, never restored
        return "not an event envelope"
    key = record.key.decode(errors="replace") if record.key is not None else ""
    snap = dealer_pb2.TableSnapshot()
    if envelope.type != SNAPSHOT_TYPE or not envelope.payload.Unpack(snap):
        return f"not a table snapshot ({envelope.type[:80]!r})"
    if envelope.source != SNAPSHOT_SOURCE:
        return f"written by {envelope.source[:80]!r}, not the dealer"
    if not (key == envelope.key == snap.table_id):
        return "its record key, envelope key and table id disagree"
    return None


def latest_snapshots(records: Iterable[Record]) -> dict[str, dealer_pb2.TableSnapshot]:
    """The latest snapshot per table id (a tombstone removes the table); records that are not the
    dealer's own snapshot of the table they are keyed by are refused, logged and counted."""
    latest: dict[str, dealer_pb2.TableSnapshot] = {}
    where: dict[str, int | None] = {}  # the partition each kept snapshot came from
    for record in records:
        if record.value is None:
            if record.key is not None:
                latest.pop(record.key.decode(errors="replace"), None)
            continue
        problem = refusal(record)
        if problem is not None:
            key = (record.key or b"").decode(errors="replace")[:100]
            log.warning("snapshot record refused", extra={"key": key, "reason": problem})
            metrics.SNAPSHOTS_REFUSED.inc()
            continue
        snap = dealer_pb2.TableSnapshot()
        decode_envelope(record.value).payload.Unpack(snap)
        kept = latest.get(snap.table_id)
        partition = getattr(record, "partition", None)
        if (
            kept is not None
            and snap.fence.epoch == kept.fence.epoch
            and where.get(snap.table_id, partition) != partition
            and snap.written_at.ToNanoseconds() < kept.written_at.ToNanoseconds()
        ):
            # the same table in two partitions (a tournament table written before the placement of
            # cardroom.runtime.partitions): the partitions are read in no set order, the newer one stands
            continue
        if kept is not None and snap.fence.epoch < kept.fence.epoch:
            # a replica that had lost the table wrote it late (docs/sharding.md): the owner's stands
            log.warning(
                "snapshot of a fenced replica ignored",
                extra={"table_id": snap.table_id, "epoch": snap.fence.epoch, "owner_epoch": kept.fence.epoch},
            )
            metrics.SNAPSHOTS_REFUSED.inc()
            continue
        latest[snap.table_id] = snap
        where[snap.table_id] = partition
    return latest


def read_snapshots(
    bootstrap: str, topic: str, timeout: float = 30.0, partitions: Iterable[int] | None = None
) -> dict[str, dealer_pb2.TableSnapshot]:
    """The latest snapshot per table id in ``topic`` (blocking; run it in a thread); ``partitions``:
    only those partitions' tables (a dealer replica's, docs/sharding.md)."""
    records = read_to_end(bootstrap, topic, client_id="cardroom-dealer-restore", timeout=timeout, partitions=partitions)
    latest = latest_snapshots(records)
    log.info("snapshots read", extra={"tables": len(latest), "partitions": sorted(partitions or [])})
    return latest
