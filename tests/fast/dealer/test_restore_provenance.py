"""Restore believes only the dealer's own snapshot of the table a record is keyed by (issue 14
item 1: "consumers verify what they apply … a snapshot must come from the table's owner"). A record
forged onto the snapshot topic would otherwise seat an attacker with chips, or replace a live
table's stacks, at the next dealer start."""

from __future__ import annotations

from dataclasses import dataclass

from cardroom.runtime.events import make_envelope
from cardroom.v1 import dealer_pb2, events_pb2
from dealer import metrics
from dealer.restore import SNAPSHOT_TYPE, latest_snapshots


@dataclass
class Rec:
    key: bytes | None
    value: bytes | None


def snap(table: str, hands: int, *, source: str = "dealer", key: str | None = None, type: str = SNAPSHOT_TYPE) -> Rec:
    payload = dealer_pb2.TableSnapshot(table_id=table, hands_dealt=hands)
    envelope = make_envelope(type=type, source=source, key=key or table, sequence=hands, payload=payload)
    return Rec(table.encode(), envelope.SerializeToString())


def test_the_latest_own_snapshot_per_table_is_restored_and_a_tombstone_removes_the_table() -> None:
    latest = latest_snapshots([snap("t1", 1), snap("t2", 1), snap("t1", 5), Rec(b"t2", None)])
    assert {t: s.hands_dealt for t, s in latest.items()} == {"t1": 5}


def test_forged_and_mismatched_snapshot_records_are_refused_and_counted() -> None:
    before = metrics.SNAPSHOTS_REFUSED._value.get()
    other_table = snap("t9", 99)
    other_table.key = b"t1"  # another table's snapshot under this table's key
    hand = make_envelope(  # the snapshot type around another message
        type=SNAPSHOT_TYPE,
        source="dealer",
        key="t1",
        sequence=1,
        payload=events_pb2.HandSettled(hand_id="t1-1", table_id="t1"),
    )
    records = [
        snap("t1", 3),
        snap("t1", 50, source="gateway"),  # not written by the dealer
        snap("t1", 51, key="t7"),  # envelope key disagrees
        other_table,
        snap("t1", 52, type="cardroom.dealer.table_event.v1"),  # not a snapshot type
        Rec(b"t1", hand.SerializeToString()),
        Rec(b"t1", b"\xff\x00garbage"),
    ]
    latest = latest_snapshots(records)
    assert {t: s.hands_dealt for t, s in latest.items()} == {"t1": 3}
    assert metrics.SNAPSHOTS_REFUSED._value.get() - before == 6
