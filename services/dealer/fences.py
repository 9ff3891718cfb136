"""Which partitions of the tables this dealer replica holds, and at which epoch (docs/sharding.md).

Unsharded (``DEALER_SHARDS=off``) the dealer holds every table and its fence is
``None``: the wallet checks nothing. Sharded, a table is held only while its partition is, and every
wallet call, settlement and snapshot of it carries ``TableFence{partition, epoch}``; a table of a
partition not held is refused UNAVAILABLE (the caller looks its owner up again)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import grpc

from cardroom.runtime.partitions import table_partition
from cardroom.v1 import common_pb2
from dealer.errors import DealerError, unavailable

log = logging.getLogger("dealer.fences")

#: How the wallet words a refusal of a lower epoch (FAILED_PRECONDITION): ``fenced: ...``.
FENCED_PREFIX = "fenced:"


class Fences:
    """The partitions held, each with the epoch of this replica's claim."""

    def __init__(self, sharded: bool = False, partitions: int = 0) -> None:
        self.sharded = sharded
        #: How many partitions the tables have (known once the replica met the broker; 0 before).
        self.partitions = partitions
        self.epochs: dict[int, int] = {}
        #: Held partitions whose tables are restored: only these answer calls (a partition being
        #: restored is held — its recovery's wallet calls carry the fence — but answers UNAVAILABLE).
        self.serving: set[int] = set()
        #: Called with a partition when the wallet said a later claim exists (set by the shards).
        self.on_fenced: Callable[[int], None] = lambda partition: None

    def partition(self, table_id: str) -> int:
        return table_partition(table_id, self.partitions) if self.sharded and self.partitions else 0

    def holds(self, table_id: str) -> bool:
        if not self.sharded:
            return True
        return bool(self.partitions) and self.partition(table_id) in self.epochs

    def epoch(self, table_id: str) -> int:
        """The epoch at which ``table_id``'s partition is held now (0: unsharded, or not held)."""
        if not self.holds(table_id):
            return 0
        return self.epochs.get(self.partition(table_id), 0)

    def current(self, table_id: str, epoch: int) -> bool:
        """Whether ``table_id`` is held at ``epoch`` now: a table actor made under one hold of its partition
        writes nothing, and moves no money, under a later one (a release that did not end it, the partition
        back here since: docs/sharding.md)."""
        if not self.sharded:
            return True
        return bool(self.partitions) and self.epochs.get(self.partition(table_id)) == epoch

    def serves(self, table_id: str) -> bool:
        return not self.sharded or (self.holds(table_id) and self.partition(table_id) in self.serving)

    def _elsewhere(self, table_id: str) -> DealerError:
        return unavailable(
            f"table {table_id!r} is dealt by another dealer (partition {self.partition(table_id)}); "
            "look its owner up again and retry"
        )

    def verify_held(self, table_id: str) -> None:
        """Raise UNAVAILABLE unless this replica deals ``table_id`` now (held and restored)."""
        if not self.serves(table_id):
            raise self._elsewhere(table_id)

    def verify_current(self, table_id: str, epoch: int) -> None:
        """Raise UNAVAILABLE unless :meth:`current` (before a wallet call or a settlement of a table actor)."""
        if not self.current(table_id, epoch):
            raise self._elsewhere(table_id)

    def of(self, table_id: str) -> common_pb2.TableFence | None:
        """The fence a call about ``table_id`` carries (None unsharded); UNAVAILABLE when not held."""
        if not self.sharded:
            return None
        if not self.holds(table_id):
            raise self._elsewhere(table_id)
        partition = self.partition(table_id)
        return common_pb2.TableFence(partition=partition, epoch=self.epochs[partition])

    def hold(self, partition: int, epoch: int) -> None:
        self.epochs[partition] = epoch

    def serve(self, partition: int) -> None:
        """``partition``'s tables are restored: its calls are answered from now on."""
        if partition in self.epochs:
            self.serving.add(partition)

    def release(self, partition: int) -> None:
        self.epochs.pop(partition, None)
        self.serving.discard(partition)

    def refused(self, error: DealerError, table_id: str, epoch: int) -> None:
        """A wallet refusal of a call made at ``epoch``: if it says a later claim of the table's partition
        exists, this replica lost the partition — stop dealing it at once (``on_fenced``); unless the
        partition is held at another epoch by now (the call was older than the hold)."""
        if self.sharded and error.code == grpc.StatusCode.FAILED_PRECONDITION and FENCED_PREFIX in error.message:
            partition = self.partition(table_id)
            log.warning("fenced by the wallet", extra={"table_id": table_id, "partition": partition, "epoch": epoch})
            if self.epochs.get(partition) == epoch:
                self.release(partition)
                self.on_fenced(partition)
