"""Which partition of the tables a table belongs to (docs/sharding.md): the partition Kafka's default
partitioner gives its id as a record key in ``cardroom.table.snapshots`` (murmur2 of the UTF-8 key,
positive, modulo the partition count), the same in kafka-python and the Java client. The dealer
replica the consumer group gives that partition owns the table."""

from __future__ import annotations

from kafka.partitioner.default import murmur2


def table_partition(table_id: str, partitions: int) -> int:
    """The partition of ``cardroom.table.snapshots`` that ``table_id``'s records go to."""
    if partitions < 1:
        raise ValueError(f"partitions must be at least 1, not {partitions}")
    return (murmur2(table_id.encode()) & 0x7FFFFFFF) % partitions
