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

from cardroom.runtime.consumer import read_to_end
from cardroom.runtime.events import decode_envelope
from cardroom.v1 import dealer_pb2

log = logging.getLogger("dealer.restore")


def read_snapshots(bootstrap: str, topic: str, timeout: float = 30.0) -> dict[str, dealer_pb2.TableSnapshot]:
    """The latest snapshot per table id in ``topic`` (blocking; run it in a thread)."""
    latest: dict[str, dealer_pb2.TableSnapshot] = {}
    for record in read_to_end(bootstrap, topic, client_id="cardroom-dealer-restore", timeout=timeout):
        if record.value is None:
            if record.key is not None:
                latest.pop(record.key.decode(), None)
            continue
        snap = dealer_pb2.TableSnapshot()
        if decode_envelope(record.value).payload.Unpack(snap):
            latest[snap.table_id] = snap
    log.info("snapshots read", extra={"tables": len(latest)})
    return latest
