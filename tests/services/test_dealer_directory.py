"""The dealer directory on the real broker (cardroom.runtime.directory): claims written to a
compacted one-partition topic as the dealer replicas write them (the runtime's EventProducer,
``cardroom.dealer.claim.v1`` from ``dealer``, keyed by partition) are read back from the beginning
by a group-less reader, followed as new ones arrive, with a forged record refused; a reader started
later sees the same owners and the same epochs (offset + 1). The fold's cases: tests/fast/runtime/test_claims.py."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from cardroom.runtime.claims import CLAIM_SOURCE, CLAIM_TYPE
from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.events import EventProducer
from cardroom.v1 import dealer_pb2
from tests.fast.runtime.claims_records import table_in
from tests.services.procs import wait_for_topics

pytestmark = pytest.mark.kafka
PARTITIONS = 6


@pytest.fixture
def topic(kafka) -> str:
    name = f"test.dealer.directory.{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        admin.create_topics(
            [NewTopic(name, 1, 1, topic_configs={"cleanup.policy": "compact", "retention.ms": "-1"})], timeout_ms=30_000
        )
    finally:
        admin.close()
    wait_for_topics(kafka.bootstrap, {name: 1})
    return name


@pytest.fixture
def producer(kafka) -> Iterator[EventProducer]:
    producer = EventProducer(kafka.bootstrap, CLAIM_SOURCE)
    try:
        yield producer
    finally:
        producer.close()


def write_claim(producer: EventProducer, topic: str, partition: int, address: str) -> int:
    """Claim ``partition`` for the replica at ``address`` as a dealer does; its epoch (offset + 1)."""
    claim = dealer_pb2.DealerClaim(partition=partition, address=address, replica=address, partitions=PARTITIONS)
    claim.claimed_at.GetCurrentTime()
    envelope = producer.publish(topic, type=CLAIM_TYPE, key=str(partition), sequence=0, payload=claim)
    assert envelope.key == str(partition)
    metadata = producer.send(topic, envelope).get(timeout=10)  # the same claim once more: a later epoch
    return int(metadata.offset) + 1


def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} not within {timeout:.0f} s"
        time.sleep(0.05)


def test_claims_are_read_from_the_beginning_followed_and_forgeries_refused(kafka, topic, producer) -> None:
    epochs = {
        p: write_claim(producer, topic, p, "10.0.0.1:20053" if p % 2 == 0 else "10.0.0.2:20053") for p in range(6)
    }
    forger = EventProducer(kafka.bootstrap, "gateway")
    try:
        forger.publish(
            topic,
            type=CLAIM_TYPE,
            key="0",
            sequence=0,
            payload=dealer_pb2.DealerClaim(partition=0, address="evil:1", partitions=PARTITIONS),
        )
    finally:
        forger.close()

    directory = DealerDirectory(kafka.bootstrap, topic, retry_seconds=0.2)
    directory.start()
    try:
        until(lambda: directory.refused == 1 and len(directory.claims()) == 6, "the six claims and the forgery")
        assert directory.owner(table_in(0)) == "10.0.0.1:20053"  # the forged claim of partition 0 changed nothing
        assert directory.owner(table_in(3)) == "10.0.0.2:20053"
        assert directory.addresses() == ["10.0.0.1:20053", "10.0.0.2:20053"]
        assert {p: directory.epoch(p) for p in range(6)} == epochs

        async def moved() -> tuple[str | None, int]:
            waiting = asyncio.create_task(directory.changed(table_in(3), "10.0.0.2:20053", epochs[3], timeout=30))
            await asyncio.sleep(0.2)
            epoch = await asyncio.to_thread(write_claim, producer, topic, 3, "10.0.0.3:20053")
            return await waiting, epoch

        owner, epoch = asyncio.run(moved())
        assert owner == "10.0.0.3:20053"  # followed: the new claim woke the waiter
        assert directory.addresses() == ["10.0.0.1:20053", "10.0.0.2:20053", "10.0.0.3:20053"]
        # The first of write_claim's two records woke the waiter; the view is final once the second
        # is read too (taking it before then made a later reader look wrong: a flaky 90 s wait).
        until(lambda: directory.epoch(3) == epoch, "the second record of the move")
        final = {p: directory.epoch(p) for p in range(6)}
        assert final == {**epochs, 3: epoch}
    finally:
        directory.stop()

    later = DealerDirectory(kafka.bootstrap, topic, retry_seconds=0.2)
    later.start()
    try:
        until(lambda: later.epoch(3) == final[3], "a later reader's view", timeout=90)  # a loaded CI machine
        assert {p: later.epoch(p) for p in range(6)} == final
        assert later.owner(table_in(3)) == "10.0.0.3:20053"
    finally:
        later.stop()
