"""Fencing of dealer replicas (docs/sharding.md), the rules with no storage.

A dealer replica that takes a partition of the tables claims it with an **epoch** (its claim's offset
+ 1 in ``cardroom.dealer.directory``; later claims have higher ones) and tells the wallet
(``ClaimTables``). Its money calls (``Transfer``, ``ReconcileEscrow``) carry its
:class:`Fence`; the wallet keeps the highest epoch it has seen per partition and refuses a call with a
lower one, in the transaction of the money movement, so a claim cannot slip between the check and
the movement. A higher epoch on a call raises the stored one (epochs only go up). Hand settlements
(``HandSettled.fence`` on ``cardroom.hand.settled``) are fenced per *table*: the wallet keeps the
highest epoch it applied for each table and ignores a settlement of that table with a lower one.

Epoch 0 is "unsharded" (one dealer): nothing is checked or stored for it.

A replay (an idempotency key, hand id or reconciliation request id already done) answers its first
result whatever its fence: it moves no money, and the first movement was made under a valid fence.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardroom.v1 import common_pb2
from wallet.ledger import INT64_MAX, invalid

#: Kafka partition ids are int32.
PARTITION_MAX = 2**31 - 1


@dataclass(frozen=True)
class Fence:
    """A dealer replica's hold on one partition of the tables: ``epoch`` > 0."""

    partition: int
    epoch: int


def fence_of(message: common_pb2.TableFence, field: str = "fence") -> Fence | None:
    """The request's fence, None for epoch 0 (unsharded: nothing to check); INVALID_ARGUMENT for a
    partition or epoch out of range (an epoch is a Kafka offset + 1, an int64)."""
    if message.epoch > INT64_MAX:
        raise invalid(f"{field}.epoch: {message.epoch} is above the int64 range of epochs")
    if message.partition > PARTITION_MAX:
        raise invalid(f"{field}.partition: {message.partition} is above the int32 range of Kafka partitions")
    if message.epoch == 0:
        return None
    return Fence(message.partition, message.epoch)


def claim_of(message: common_pb2.TableFence, field: str = "fence") -> Fence:
    """The fence a ClaimTables request claims: its epoch is required (INVALID_ARGUMENT for 0)."""
    fence = fence_of(message, field)
    if fence is None:
        raise invalid(f"{field}.epoch: required, above 0 (a claim's epoch is its directory record's offset + 1)")
    return fence


def can_pass(epoch: int, stored: int) -> bool:
    """A call (or claim) with ``epoch`` is allowed over the ``stored`` epoch: not a stale one."""
    return epoch >= stored
