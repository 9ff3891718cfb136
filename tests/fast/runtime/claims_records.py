"""Records of the dealer directory for the fast tests (cardroom.runtime.claims / directory / routing):
a dealer's claim as the replicas write it, and the forgeries the directory refuses."""

from __future__ import annotations

from dataclasses import dataclass

from cardroom.runtime.claims import CLAIM_SOURCE, CLAIM_TYPE
from cardroom.runtime.events import make_envelope
from cardroom.runtime.partitions import table_partition
from cardroom.v1 import dealer_pb2

PARTITIONS = 6


@dataclass
class Rec:
    key: bytes | None
    value: bytes | None
    offset: int


def claim(
    offset: int,
    partition: int,
    address: str,
    *,
    partitions: int = PARTITIONS,
    source: str = CLAIM_SOURCE,
    type: str = CLAIM_TYPE,
    key: str | None = None,
    envelope_key: str | None = None,
) -> Rec:
    """The record a replica at ``address`` writes when it takes ``partition`` (at ``offset``)."""
    message = dealer_pb2.DealerClaim(
        partition=partition, address=address, replica=f"replica-{address}", partitions=partitions
    )
    envelope = make_envelope(
        type=type,
        source=source,
        key=str(partition) if envelope_key is None else envelope_key,
        sequence=offset,
        payload=message,
    )
    record_key = str(partition) if key is None else key
    return Rec(record_key.encode(), envelope.SerializeToString(), offset)


def tombstone(offset: int, partition: int) -> Rec:
    return Rec(str(partition).encode(), None, offset)


def table_in(partition: int, partitions: int = PARTITIONS, prefix: str = "t") -> str:
    """A table id whose partition is ``partition``."""
    for n in range(10_000):
        table_id = f"{prefix}{n}"
        if table_partition(table_id, partitions) == partition:
            return table_id
    raise AssertionError(f"no table id in partition {partition}")
