"""Dealer shards on the dealer's side (docs/sharding.md, issue 16: "a dealer that lost a table must not be
able to deal it, move its money or publish its records any more"): the fence every wallet call,
settlement and snapshot of a table carries, a partition given up, and restore keeping the owner's
snapshot over a fenced replica's late one."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from kafka.partitioner.default import DefaultPartitioner, murmur2

from cardroom.core import ids
from cardroom.runtime.events import make_envelope
from cardroom.runtime.partitions import TablePartitioner, placement_key, table_partition
from cardroom.v1 import dealer_pb2
from dealer.config import advertised
from dealer.errors import DealerError, precondition
from dealer.fences import Fences
from dealer.restore import SNAPSHOT_TYPE, latest_snapshots
from dealer.service import Tables
from tests.fast.dealer.fakes import Harness, harness, nl_config
from tests.fast.dealer.test_restore_provenance import Rec


def test_a_cash_table_is_placed_by_its_id_as_kafka_places_its_key() -> None:
    for table in ("t-1", "t-abcdef012345", "x" * 40):
        assert table_partition(table, 6) == (murmur2(table.encode()) & 0x7FFFFFFF) % 6
    with pytest.raises(ValueError):
        table_partition("t-1", 0)


class Cluster:
    """What a partitioner reads of kafka-python's ``ClusterMetadata``: one topic of 6 partitions."""

    def topics(self) -> set[str]:
        return {"t"}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return {5, 0, 3, 1, 4, 2} if topic == "t" else None

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return self.partitions_for_topic(topic) or set()


def test_the_producers_place_a_tables_records_where_its_partition_is_and_other_keys_as_kafka() -> None:
    tables = ["t-1", "t-abcdef012345", ids.tournament_table_id("mtt-1", 3), "x" * 40]
    mine, kafkas = TablePartitioner(), DefaultPartitioner()
    for _ in range(2):  # again: from the cache
        for table in tables:
            assert mine.partition("t", None, table.encode(), None, None, Cluster()) == table_partition(table, 6)
        for key in (b"player-7", b"ann", "\u00e9t\u00e9".encode()):
            assert mine.partition("t", None, key, None, None, Cluster()) == kafkas.partition(
                "t", None, key, None, None, Cluster()
            )
    assert mine.partition("t", None, None, None, None, Cluster()) in range(6)
    with pytest.raises(ValueError):
        mine.partition("other", None, b"t-1", None, None, Cluster())


def test_every_table_of_a_tournament_is_in_one_partition() -> None:
    # the dealer moves players between a tournament's tables itself: one replica must hold them all
    for tournament in ("mtt-1", "sng-42", "a.b" * 16):  # the longest: its head and a digest
        tables = [ids.tournament_table_id(tournament, n) for n in range(1, 40)]
        assert len({table_partition(t, 6) for t in tables}) == 1
        assert len({placement_key(t) for t in tables}) == 1
    assert placement_key("t-1") == "t-1"


def test_unsharded_the_dealer_holds_every_table_and_fences_nothing() -> None:
    fences = Fences()
    assert fences.holds("t-1") and fences.of("t-1") is None
    fences.verify_held("t-1")


def test_sharded_a_table_is_held_only_while_its_partition_is() -> None:
    fences = Fences(sharded=True)
    assert not fences.holds("t-1")  # partitions unknown yet: nothing is held
    fences.partitions = 6
    p = fences.partition("t-1")
    with pytest.raises(DealerError) as refused:
        fences.of("t-1")
    assert refused.value.code == grpc.StatusCode.UNAVAILABLE and "another dealer" in refused.value.message
    fences.hold(p, 17)
    fence = fences.of("t-1")
    assert fence is not None and (fence.partition, fence.epoch) == (p, 17)
    fences.release(p)
    assert not fences.holds("t-1")


def test_a_hold_is_current_only_at_its_own_epoch() -> None:
    fences = Fences(sharded=True, partitions=6)
    p = fences.partition("t-1")
    assert fences.epoch("t-1") == 0 and not fences.current("t-1", 0)  # not held: nothing is current
    fences.hold(p, 4)
    assert fences.epoch("t-1") == 4 and fences.current("t-1", 4)
    fences.release(p)
    fences.hold(p, 7)  # held again: an actor of the hold at 4 is not current, one made now is
    assert not fences.current("t-1", 4) and fences.current("t-1", fences.epoch("t-1"))
    with pytest.raises(DealerError) as refused:
        fences.verify_current("t-1", 4)
    assert refused.value.code == grpc.StatusCode.UNAVAILABLE
    assert Fences().current("t-1", 0)  # unsharded: every table, always


def test_a_fenced_refusal_from_the_wallet_gives_the_partition_up() -> None:
    fences = Fences(sharded=True, partitions=6)
    lost: list[int] = []
    fences.on_fenced = lost.append
    p = fences.partition("t-1")
    fences.hold(p, 3)
    fences.refused(precondition("buy-in: insufficient funds"), "t-1", 3)  # any other refusal: still held
    assert fences.holds("t-1") and lost == []
    # a call made under an earlier hold (the partition held here again since, at 3): this hold stays
    fences.refused(precondition("buy-in: fenced: partition 2 is held at epoch 3, not 1"), "t-1", 1)
    assert fences.holds("t-1") and lost == []
    fences.refused(precondition("buy-in: fenced: partition 2 is held at epoch 9, not 3"), "t-1", 3)
    assert not fences.holds("t-1") and lost == [p]


def _snap(table: str, hands: int, epoch: int) -> Rec:
    payload = dealer_pb2.TableSnapshot(table_id=table, hands_dealt=hands)
    payload.fence.epoch = epoch
    envelope = make_envelope(type=SNAPSHOT_TYPE, source="dealer", key=table, sequence=hands, payload=payload)
    return Rec(table.encode(), envelope.SerializeToString())


def test_restore_keeps_the_owners_snapshot_over_a_fenced_replicas_late_one() -> None:
    # the new owner (epoch 9) wrote hand 12; the paused old owner (epoch 4) woke up and wrote hand 11 late
    latest = latest_snapshots([_snap("t1", 10, 4), _snap("t1", 12, 9), _snap("t1", 11, 4), _snap("t2", 3, 4)])
    assert {t: (s.hands_dealt, s.fence.epoch) for t, s in latest.items()} == {"t1": (12, 9), "t2": (3, 4)}
    # unsharded snapshots (epoch 0) are kept in the topic's order, as before
    assert latest_snapshots([_snap("t3", 1, 0), _snap("t3", 2, 0)])["t3"].hands_dealt == 2


async def _sharded_harness(epoch: int) -> tuple[Harness, Fences]:
    fences = Fences(sharded=True, partitions=6)
    fences.hold(fences.partition("t-shard"), epoch)
    fences.serve(fences.partition("t-shard"))
    h = harness(nl_config(), {"ann": 5000, "bob": 5000}, table_id="t-shard", fences=fences)
    return h, fences


def test_snapshots_and_settlements_carry_the_holders_fence() -> None:
    asyncio.run(asyncio.wait_for(_settlements_carry_the_fence(), 20))


async def _settlements_carry_the_fence() -> None:
    h, fences = await _sharded_harness(epoch=21)
    await h.sit("ann", 1000)
    await h.sit("bob", 1000)
    for _ in range(40):
        await h.advance(1.0)
        if h.settled:
            break
    assert h.settled, "a hand was settled by the timeout rule"
    p = fences.partition("t-shard")
    assert all((s.fence.partition, s.fence.epoch) == (p, 21) for s in h.settled)
    assert h.snapshots and all(s.fence.epoch == 21 for s in h.snapshots)
    await h.stop()


def test_a_partition_given_up_stops_its_tables_and_refuses_their_calls() -> None:
    asyncio.run(asyncio.wait_for(_given_up(), 20))


async def _given_up() -> None:
    h, fences = await _sharded_harness(epoch=5)
    actor = h.actor
    tables = Tables(actor.deps)
    tables.actors[actor.table_id] = actor
    other = "t-other"
    while fences.partition(other) == fences.partition(actor.table_id):
        other += "x"
    await h.sit("ann", 1000)
    written = len(h.snapshots)
    gone = await tables.release(fences.partition(actor.table_id))
    assert gone == [actor.table_id] and actor.table_id not in tables.actors
    with pytest.raises(DealerError) as moved:
        tables.get(actor.table_id)
    assert moved.value.code == grpc.StatusCode.UNAVAILABLE
    with pytest.raises(DealerError) as closed:  # a command that reached the stopped actor
        await actor.submit(actor.write_snapshot)
    assert closed.value.code == grpc.StatusCode.UNAVAILABLE and "moved" in closed.value.message
    # nothing more is written for it, even by a timer that was due
    await h.advance(30.0)
    assert len(h.snapshots) == written
    assert not await actor.write_snapshot()
    await asyncio.sleep(0)


def test_a_table_found_in_two_partitions_is_restored_from_its_newer_snapshot() -> None:
    # a tournament table written before its placement moved it to another partition: the older copy
    # may be read last (partitions are read in no set order)
    def at(hands: int, partition: int, seconds: int) -> Rec:
        payload = dealer_pb2.TableSnapshot(table_id="tt.m.1", hands_dealt=hands)
        payload.written_at.FromSeconds(seconds)
        envelope = make_envelope(type=SNAPSHOT_TYPE, source="dealer", key="tt.m.1", sequence=hands, payload=payload)
        record = Rec(b"tt.m.1", envelope.SerializeToString())
        record.partition = partition  # type: ignore[attr-defined]
        return record

    assert latest_snapshots([at(9, 1, 200), at(4, 3, 100)])["tt.m.1"].hands_dealt == 9
    assert latest_snapshots([at(4, 3, 100), at(9, 1, 200)])["tt.m.1"].hands_dealt == 9


@pytest.mark.parametrize(
    ("given", "dialled"),
    [
        ("10.1.2.3:20053", "10.1.2.3:20053"),
        ("fd00::5:20053", "[fd00::5]:20053"),  # the manifests' $(POD_IP):20053 on an IPv6 cluster
        ("[fd00::5]:20053", "[fd00::5]:20053"),
        ("dealer-0.dealer:20053", "dealer-0.dealer:20053"),
    ],
)
def test_the_advertised_address_is_a_target_others_can_dial(given: str, dialled: str) -> None:
    assert advertised(given) == dialled


@pytest.mark.parametrize("bad", ["10.1.2.3", "10.1.2.3:", ":20053", "host:port", "h:70000"])
def test_an_advertised_address_without_a_port_refuses_to_start(bad: str) -> None:
    with pytest.raises(SystemExit, match="DEALER_ADVERTISE_ADDR"):
        advertised(bad)
