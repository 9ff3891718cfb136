"""Issue 16, fencing: "a dealer that lost a table (paused, partitioned, slow) must not be able to ...
publish its records any more — use Kafka transactions (a transactional id per owned partition: zombie
fencing comes with them) ...; hand records and hand-settled events are then published exactly once".

On the real broker, through the dealer's own writers (cardroom.runtime.transactions): a replica whose
transaction is still open when another replica takes its partition (the case the chaos test found: a
record buffered through a broker outage, delivered after the partition moved) has that transaction
aborted and its commit refused, and a reader of the card room (read_committed) sees only the new
holder's records — a read_uncommitted reader would see the old one's, so the reader's setting is
checked too."""

from __future__ import annotations

import threading
import uuid

import pytest
from kafka import KafkaProducer

from cardroom.runtime.transactions import Outgoing, TransactionalWriter, TransactionFenced, kafka_producer
from cardroom.v1 import dealer_pb2
from tests.kafka_broker import KafkaBroker
from tests.kafka_read import records_so_far

pytestmark = pytest.mark.slow

RECORDS = "cardroom.hand.records"


def record(table: str, hand: str) -> Outgoing:
    return Outgoing(RECORDS, "cardroom.dealer.hand_record.v1", table, 1, dealer_pb2.HandRecordPublished(hand_id=hand))


class HeldCommit:
    """kafka-python's producer whose first commit waits until released: a replica paused (or cut
    off from the broker) between sending its records and committing them."""

    def __init__(self, producer: KafkaProducer) -> None:
        self._producer = producer
        self.sent = threading.Event()
        self.release = threading.Event()

    def __getattr__(self, name: str):
        return getattr(self._producer, name)

    def commit_within(self, seconds: float) -> bool:
        self._producer.flush()
        self.sent.set()
        self.release.wait(30)
        return self._producer.commit_within(seconds)


def hand_ids(kafka: KafkaBroker, table: str, **settings) -> list[str]:
    out = []
    for r in records_so_far(kafka.bootstrap, RECORDS, **settings):
        if r.key == table.encode():
            out.append(r.value)
    return [dealer_pb2.HandRecordPublished.FromString(_payload(v)).hand_id for v in out]


def _payload(value: bytes) -> bytes:
    from cardroom.runtime.events import decode_envelope

    return decode_envelope(value).payload.value


def test_a_replica_that_lost_its_partition_mid_transaction_publishes_nothing_and_is_refused(kafka: KafkaBroker) -> None:
    table = f"table-{uuid.uuid4().hex[:8]}"
    tid = f"test.tables.{uuid.uuid4().hex[:8]}"
    held = HeldCommit(kafka_producer(kafka.bootstrap, tid, "dealer"))  # type: ignore[arg-type]
    old = TransactionalWriter(tid, "dealer", lambda: held)  # type: ignore[arg-type,return-value]
    old.open()
    late = old.submit("hand-of-the-old-owner", [record(table, "cancelled-by-the-new-owner")])
    assert held.sent.wait(30), "the old owner's records were not sent"

    new = TransactionalWriter(tid, "dealer", lambda: kafka_producer(kafka.bootstrap, tid, "dealer"))
    new.open()  # the partition taken: the old owner's open transaction is aborted
    new.submit("hand-of-the-new-owner", [record(table, "dealt-by-the-new-owner")]).result(30)

    held.release.set()
    with pytest.raises(TransactionFenced):
        late.result(30)
    assert old.fenced
    with pytest.raises(TransactionFenced):  # and nothing after either
        old.submit("another", [record(table, "later")]).result(30)

    assert hand_ids(kafka, table) == ["dealt-by-the-new-owner"]
    # the aborted record is in the log: only a read_committed reader (every reader of the card room) skips it
    assert hand_ids(kafka, table, isolation_level="read_uncommitted") == [
        "cancelled-by-the-new-owner",
        "dealt-by-the-new-owner",
    ]
    new.close()
