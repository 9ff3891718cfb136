"""Fast tier: the dealer directory's fold (cardroom.runtime.claims), records in, owners out — no Kafka.

Per partition of the tables the claim of the highest epoch (offset + 1) is the owner; a tombstone
takes the partition's claim away; anything that is not a dealer's claim of the partition it is
keyed by is refused and counted. The reading from the real broker: tests/services/test_dealer_directory.py."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from cardroom.runtime.claims import Claim, Claims, fold, refusal
from cardroom.runtime.events import make_envelope
from cardroom.runtime.partitions import table_partition
from cardroom.v1 import dealer_pb2
from tests.fast.runtime.claims_records import PARTITIONS, Rec, claim, table_in, tombstone


def refused_total() -> float:
    return REGISTRY.get_sample_value("cardroom_directory_refused_total") or 0.0


def test_each_table_belongs_to_its_partition_s_latest_claim() -> None:
    claims = fold([claim(0, 0, "a:1"), claim(1, 1, "b:1"), claim(2, 2, "a:1")])
    assert claims.owner(table_in(0)) == "a:1"
    assert claims.owner(table_in(1)) == "b:1"
    assert claims.owner(table_in(2)) == "a:1"
    assert claims.owner(table_in(3)) is None  # nobody claimed partition 3 yet
    assert claims.addresses() == ["a:1", "b:1"]
    assert claims.by_partition[1] == Claim(1, "b:1", "replica-b:1", 2, PARTITIONS)  # epoch = offset + 1
    assert [claims.epoch(p) for p in range(4)] == [1, 2, 3, 0]
    assert claims.partition_of(table_in(3)) == table_partition(table_in(3), PARTITIONS) == 3


def test_a_later_claim_moves_the_partition_and_an_earlier_one_read_again_does_not() -> None:
    claims = fold([claim(0, 4, "a:1"), claim(5, 4, "b:1")])
    table = table_in(4)
    assert (claims.owner(table), claims.epoch(4)) == ("b:1", 6)
    assert claims.addresses() == ["b:1"]  # a gave its only partition up
    assert claims.apply(claim(0, 4, "a:1")) is False  # read again after a reconnect: older
    assert (claims.owner(table), claims.epoch(4)) == ("b:1", 6)


def test_a_tombstone_takes_the_claim_away_and_an_older_claim_does_not_come_back() -> None:
    claims = fold([claim(0, 2, "a:1"), tombstone(1, 2)])
    assert claims.owner(table_in(2)) is None and claims.addresses() == []
    assert claims.apply(claim(0, 2, "a:1")) is False
    assert claims.owner(table_in(2)) is None
    assert claims.apply(claim(2, 2, "b:1")) is True
    assert claims.owner(table_in(2)) == "b:1"


def test_the_latest_claim_s_partition_count_decides_and_claims_for_another_count_name_no_owner() -> None:
    claims = fold([claim(0, p, "old:1", partitions=3) for p in range(3)])
    assert claims.partitions == 3 and claims.owner(table_in(2, 3)) == "old:1"
    claims.apply(claim(3, 0, "new:1", partitions=PARTITIONS))  # re-partitioned to 6
    assert claims.partitions == PARTITIONS
    assert claims.owner(table_in(0)) == "new:1"
    assert claims.owner(table_in(1)) is None  # old:1's claim was for 3 partitions
    assert claims.addresses() == ["new:1"]


def _not_an_envelope() -> Rec:
    return Rec(b"0", b"\xff\xff not protobuf", 0)


def _snapshot_envelope() -> Rec:
    envelope = make_envelope(
        type="cardroom.dealer.table_snapshot.v1",
        source="dealer",
        key="0",
        sequence=1,
        payload=dealer_pb2.TableSnapshot(table_id="0"),
    )
    return Rec(b"0", envelope.SerializeToString(), 0)


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (claim(0, 0, "evil:1", source="gateway"), "not the dealer"),
        (claim(0, 0, "evil:1", type="cardroom.dealer.other.v1"), "not a dealer claim"),
        (_snapshot_envelope(), "not a dealer claim"),
        (_not_an_envelope(), "not an event envelope"),
        (claim(0, 0, "evil:1", key="1"), "disagree"),
        (claim(0, 0, "evil:1", envelope_key="1"), "disagree"),
        (claim(0, 0, "evil:1", key="x"), "not a partition number"),
        (claim(0, 0, "evil:1", key="00"), "not a partition number"),
        (claim(0, 6, "evil:1"), "is not one of 6"),
        (claim(0, 0, "evil:1", partitions=0), "is not one of 0"),
        (claim(0, 0, "no-port"), "not host:port"),
        (claim(0, 0, ":20053"), "not host:port"),
    ],
)
def test_records_that_are_not_a_dealer_s_claim_of_their_partition_are_refused(record: Rec, reason: str) -> None:
    problem = refusal(record)
    assert problem is not None and reason in problem
    before = refused_total()
    claims = Claims()
    assert claims.apply(claim(0, 0, "a:1")) is True
    record.offset = 7  # later than the real claim: refused all the same
    assert claims.apply(record) is False
    assert claims.owner(table_in(0)) == "a:1" and claims.refused == 1
    assert refused_total() == before + 1


def test_a_dealer_s_claim_is_accepted() -> None:
    assert refusal(claim(3, 5, "10.0.0.7:20053")) is None
    assert refusal(claim(3, 5, "[::1]:20053")) is None
    assert refusal(tombstone(4, 5)) is None
