"""The dealer replicas' claims of the partitions of the tables, folded from the records of
``cardroom.dealer.directory`` (docs/sharding.md, "Routing: the directory"): pure, no Kafka.

A claim record is keyed by ``str(partition)``; its value is an event envelope of type
``cardroom.dealer.claim.v1`` from the source ``dealer`` carrying a :class:`DealerClaim`. The record's
offset + 1 is the claim's **epoch**: per partition the claim of the highest epoch is the current one.
A tombstone (no value) removes its partition's claim. Any other record is refused (counted, logged):
the directory believes only the dealer's own claims, as restore believes only its snapshots.

A table's partition is :func:`cardroom.runtime.partitions.table_partition` of its id over the
partition count the latest claim names (``DealerClaim.partitions``); a claim made for another count
(before a re-partitioning) names no owner.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client import Counter

from cardroom.runtime.events import decode_envelope
from cardroom.runtime.partitions import table_partition
from cardroom.v1 import dealer_pb2

log = logging.getLogger("cardroom.runtime.claims")

#: What a dealer replica writes when it takes a partition: the only records the directory believes.
CLAIM_TYPE = "cardroom.dealer.claim.v1"
CLAIM_SOURCE = "dealer"

REFUSED = Counter(
    "cardroom_directory_refused_total",
    "Records of the dealer directory refused: not a dealer's claim of the partition they are keyed by.",
)


class DirectoryRecord(Protocol):
    """What the fold reads of a Kafka record of the directory topic."""

    key: bytes | None
    value: bytes | None
    offset: int


@dataclass(frozen=True)
class Claim:
    """The current holder of one partition of the tables."""

    partition: int
    address: str
    """host:port of the replica's gRPC server."""
    replica: str
    epoch: int
    """The claim record's offset + 1."""
    partitions: int
    """How many partitions the tables had when it was claimed."""


def _partition_key(record: DirectoryRecord) -> int | None:
    text = (record.key or b"").decode(errors="replace")
    return int(text) if text.isdigit() and str(int(text)) == text else None


def refusal(record: DirectoryRecord) -> str | None:
    """Why a directory record is not a dealer's claim of the partition it is keyed by (None: it is;
    a tombstone of a partition key is one too)."""
    key = _partition_key(record)
    if key is None:
        return "its key is not a partition number"
    if record.value is None:
        return None
    try:
        envelope = decode_envelope(record.value)
    except Exception:  # noqa: BLE001 - any undecodable body is refused
        return "not an event envelope"
    claim = dealer_pb2.DealerClaim()
    if envelope.type != CLAIM_TYPE or not envelope.payload.Unpack(claim):
        return f"not a dealer claim ({envelope.type[:80]!r})"
    if envelope.source != CLAIM_SOURCE:
        return f"written by {envelope.source[:80]!r}, not the dealer"
    if not (envelope.key == str(key) and claim.partition == key):
        return "its record key, envelope key and partition disagree"
    if claim.partitions < 1 or claim.partition >= claim.partitions:
        return f"partition {claim.partition} is not one of {claim.partitions}"
    host, _, port = claim.address.rpartition(":")
    if not host or not port.isdigit():
        return f"address {claim.address[:80]!r} is not host:port"
    return None


def claim_of(record: DirectoryRecord) -> Claim:
    """The claim a record carries (one :func:`refusal` accepted, with a value)."""
    assert record.value is not None
    message = dealer_pb2.DealerClaim()
    decode_envelope(record.value).payload.Unpack(message)
    return Claim(message.partition, message.address, message.replica, record.offset + 1, message.partitions)


@dataclass
class Claims:
    """The latest claim per partition (module docstring); :meth:`apply` folds records in."""

    by_partition: dict[int, Claim] = field(default_factory=dict)
    removed: dict[int, int] = field(default_factory=dict)
    """partition -> epoch of the tombstone that removed its claim (an older claim read again stays out)."""
    refused: int = 0

    def apply(self, record: DirectoryRecord) -> bool:
        """Fold one record in; True when it changed the current claims. A record older than what a
        partition already has (read again after a reconnect) changes nothing."""
        problem = refusal(record)
        if problem is not None:
            self.refused += 1
            REFUSED.inc()
            log.warning(
                "directory record refused",
                extra={"key": (record.key or b"").decode(errors="replace")[:100], "reason": problem},
            )
            return False
        partition, epoch = _partition_key(record), record.offset + 1
        assert partition is not None
        current = self.by_partition.get(partition)
        if epoch <= max(current.epoch if current is not None else 0, self.removed.get(partition, 0)):
            return False
        if record.value is None:
            self.removed[partition] = epoch
            return self.by_partition.pop(partition, None) is not None
        self.by_partition[partition] = claim_of(record)
        self.removed.pop(partition, None)
        return True

    @property
    def partitions(self) -> int:
        """The partition count of the latest claim (0: no claim)."""
        latest = max(self.by_partition.values(), key=lambda c: c.epoch, default=None)
        return latest.partitions if latest is not None else 0

    def current(self) -> list[Claim]:
        """The claims made for the current partition count."""
        count = self.partitions
        return [c for c in self.by_partition.values() if c.partitions == count]

    def partition_of(self, table_id: str) -> int | None:
        """The table's partition (None: no claim yet, so no partition count)."""
        count = self.partitions
        return table_partition(table_id, count) if count else None

    def claim_for(self, table_id: str) -> Claim | None:
        """The current claim of the table's partition (None: unknown)."""
        partition = self.partition_of(table_id)
        claim = self.by_partition.get(partition) if partition is not None else None
        return claim if claim is not None and claim.partitions == self.partitions else None

    def owner(self, table_id: str) -> str | None:
        claim = self.claim_for(table_id)
        return claim.address if claim is not None else None

    def addresses(self) -> list[str]:
        """The distinct addresses of the current claims, sorted."""
        return sorted({c.address for c in self.current()})

    def epoch(self, partition: int) -> int:
        """The epoch of the partition's current claim (0: none)."""
        claim = self.by_partition.get(partition)
        return claim.epoch if claim is not None else 0


def fold(records: Iterable[DirectoryRecord], claims: Claims | None = None) -> Claims:
    """``records`` folded into ``claims`` (a new table by default)."""
    claims = claims if claims is not None else Claims()
    for record in records:
        claims.apply(record)
    return claims
