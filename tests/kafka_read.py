"""Reading a topic in a test: everything on it when asked, or a loud failure — never a short list.

Reading "until nothing came for a few seconds" returned an empty list when a loaded broker took longer
than that to answer the first metadata request, and a test then failed on a count far from the cause.
"""

from __future__ import annotations

import time

from kafka import KafkaConsumer, TopicPartition
from kafka.consumer.fetcher import ConsumerRecord


def records_so_far(
    bootstrap: str, topic: str, *, linger: float = 0.0, timeout: float = 60.0, **settings
) -> list[ConsumerRecord]:
    """Every record of ``topic`` up to each partition's end offset at the time of the call, and then
    whatever else arrives until ``linger`` seconds pass without a record (events still in flight from a
    service), partition by partition in offset order (so each key's records in the order written).

    Raises AssertionError, naming how far it got, when the records cannot all be read in ``timeout``
    seconds. ``settings`` go to the KafkaConsumer (security settings for an authenticated broker;
    ``isolation_level`` read_committed unless given).
    """
    deadline = time.monotonic() + timeout
    settings.setdefault("isolation_level", "read_committed")  # what every reader of the card room sees
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False, **settings)
    try:
        partitions = consumer.partitions_for_topic(topic)
        while not partitions:
            assert time.monotonic() < deadline, f"no partition metadata for {topic} in {timeout:.0f} s"
            time.sleep(0.2)
            partitions = consumer.partitions_for_topic(topic)
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        read: dict[TopicPartition, list[ConsumerRecord]] = {tp: [] for tp in tps}
        while behind := {tp: ends[tp] - consumer.position(tp) for tp in tps if consumer.position(tp) < ends[tp]}:
            assert time.monotonic() < deadline, (
                f"{topic}: read {sum(map(len, read.values()))} records in {timeout:.0f} s, "
                f"still behind by {sum(behind.values())} (end offsets {ends})"
            )
            for tp, batch in consumer.poll(timeout_ms=500).items():
                read[tp].extend(batch)
        quiet_since = time.monotonic()
        while time.monotonic() - quiet_since < linger:
            for tp, batch in consumer.poll(timeout_ms=100).items():
                read[tp].extend(batch)
                quiet_since = time.monotonic()
        return [record for tp in tps for record in read[tp]]
    finally:
        consumer.close()
