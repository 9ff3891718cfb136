"""A consumer group that joins before its topic's partitions are in its metadata must still get
them: kafka-python assigns nothing then and only notices the partitions at its next metadata
refresh (``metadata_max_age_ms``, 5 minutes by default). The suite met it as the wallet's "rake
never posted" when the wallet started right after its topic was created; a deployment meets it
whenever a service starts before the topic Job has run. The race itself depends on timing (it
did not come back in a dozen tries on a quiet machine); this test keeps the late-topic case
covered, and ``ConsumerSettings.metadata_max_age_ms`` bounds the stale view to seconds.

The second test is CI's failure of 2026-12-01 (the wallet posted no rake in 90 s; the smoke test's
group "never joined"). A member that joins before its partitions are in its metadata is given
nothing, and the next refresh starts a second join. kafka-python 3.0.12 drops that second join
when a poll's timeout ends while it is in flight, and the member never takes up its assignment. A
1 ms poll timeout makes that nearly certain (7 of 10 starts without the fix, 0 with it). The fix
is ``ConsumerLoop.await_partitions``: the member first waits until its partitions are known."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from kafka import KafkaProducer

from cardroom.runtime.consumer import ConsumerLoop, ConsumerSettings
from tests.services.procs import create_topic

pytestmark = pytest.mark.kafka


def test_a_group_that_joined_before_its_topic_existed_reads_it_within_seconds(kafka) -> None:
    topic, group = f"test.late.{uuid.uuid4().hex[:8]}", f"late-{uuid.uuid4().hex[:8]}"
    seen: list[bytes] = []
    got = threading.Event()

    def handle(record) -> None:
        seen.append(record.value or b"")
        got.set()

    settings = ConsumerSettings(
        kafka.bootstrap, (topic,), client_id="late", group_id=group, auto_offset_reset="earliest"
    )
    loop = ConsumerLoop(settings, handle, name="late")
    loop.start()
    try:
        time.sleep(6)  # the group is formed with no partitions to assign
        create_topic(kafka.bootstrap, topic)
        producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")
        producer.send(topic, key=b"k", value=b"first").get(10)
        producer.close()
        assert got.wait(60), "the group never read the topic created after it joined"
        assert seen == [b"first"]
    finally:
        loop.stop()


def test_a_group_started_right_after_its_topic_was_created_gets_its_partitions_even_with_short_polls(kafka) -> None:
    for attempt in range(4):
        topic, group = f"test.fresh.{uuid.uuid4().hex[:8]}", f"fresh-{uuid.uuid4().hex[:8]}"
        create_topic(kafka.bootstrap, topic)
        producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")
        producer.send(topic, key=b"k", value=b"hello").get(10)
        producer.close()
        got = threading.Event()
        settings = ConsumerSettings(
            kafka.bootstrap,
            (topic,),
            client_id="fresh",
            group_id=group,
            auto_offset_reset="earliest",
            poll_timeout_ms=1,
        )
        loop = ConsumerLoop(settings, lambda record, got=got: got.set(), name="fresh")
        loop.start()
        try:
            assert got.wait(30), f"start {attempt + 1}: the group never read its topic"
        finally:
            loop.stop()
