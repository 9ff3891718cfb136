"""Which partition of the tables a table belongs to (docs/sharding.md).

A table's records go to the partition of its **placement key** in every table-keyed topic: murmur2 of
the UTF-8 key, positive, modulo the partition count, as Kafka's default partitioner does (kafka-python
and the Java client alike). The placement key is the table id, except for a tournament's tables
(``tt.<tournament>.<n>``), whose key leaves the table number out (:func:`placement_key`): every table
of a tournament lands in one partition, so one dealer replica holds them all and moves players
between them itself.
The replica that the dealers' consumer group gives a partition of ``cardroom.table.snapshots`` deals
that partition's tables; the producers place records with :class:`TablePartitioner`."""

from __future__ import annotations

import functools
import re
from typing import Any

from kafka.partitioner.default import DefaultPartitioner, murmur2

from cardroom.core import ids

_DIGEST = re.compile(r"-([0-9a-f]{10})$")


def placement_key(key: str) -> str:
    """The key whose hash places ``key``'s records: a tournament table's id without its number — and of
    a long tournament id (``ids.tournament_table_id`` shortens its head by the number's length) only the
    digest of the whole, the same for every table."""
    if ids.is_tournament_table_id(key):
        head, _, number = key.rpartition(".")
        if head and number.isdigit():
            digest = _DIGEST.search(head)
            return f"{ids.TOURNAMENT_TABLE_PREFIX}{digest.group(1)}" if digest else head
    return key


@functools.lru_cache(maxsize=1 << 16)
def _placement_hash(key: bytes) -> int:
    """murmur2 of the placement key of ``key`` (UTF-8), positive. Cached: every record of a table
    hashes the same id, and kafka-python's murmur2 is pure Python (a few per cent of a dealer's
    event loop at 300 tables, docs/capacity.md)."""
    text = key.decode(errors="replace")
    placed = placement_key(text)
    return murmur2(placed.encode() if placed != text else key) & 0x7FFFFFFF


def table_partition(table_id: str, partitions: int) -> int:
    """The partition of every table-keyed topic with ``partitions`` partitions that ``table_id`` goes to."""
    if partitions < 1:
        raise ValueError(f"partitions must be at least 1, not {partitions}")
    return _placement_hash(table_id.encode()) % partitions


class TablePartitioner(DefaultPartitioner):
    """Kafka's default partitioner over :func:`placement_key` (any other key: unchanged; no key: a
    partition at random, as Kafka's)."""

    def partition(
        self, topic: str, key: Any, serialized_key: bytes | None, value: Any, serialized_value: Any, cluster: Any
    ) -> int:
        if serialized_key is None:
            return int(super().partition(topic, key, serialized_key, value, serialized_value, cluster))
        partitions = cluster.partitions_for_topic(topic)
        if not partitions:
            raise ValueError(f"Topic {topic} not found in ClusterMetadata")
        ordered = sorted(partitions)
        return int(ordered[_placement_hash(serialized_key) % len(ordered)])
