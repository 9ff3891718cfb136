"""This replica's share of the tables: its membership of the dealers' consumer group (docs/sharding.md).

A thread runs a kafka-python consumer in the group ``dealer.tables`` on ``cardroom.table.snapshots``.
It never fetches (every assigned partition is paused): the group only carries membership, heartbeats and
rebalances, so Kafka's coordinator decides which replica deals which partition of the tables. On an
assignment the thread claims each new partition in ``cardroom.dealer.directory`` (the record's offset
+ 1 is the epoch) and hands it to the event loop (``take``: tell the wallet, restore, deal); on a
revocation it hands the partitions back (``give_up``: stop their tables) and waits until that is done,
so a partition is never dealt here after the group moved it."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kafka import ConsumerRebalanceListener, KafkaConsumer
from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor

from cardroom.runtime.claims import CLAIM_TYPE
from cardroom.runtime.events import EventProducer, make_envelope
from cardroom.runtime.kafka_auth import client_settings
from cardroom.v1 import dealer_pb2

log = logging.getLogger("dealer.shards")


@dataclass(frozen=True)
class ShardSettings:
    bootstrap: str
    snapshots_topic: str
    directory_topic: str
    #: host:port the gateway and the tournament service reach this replica's gRPC server at
    address: str
    replica: str
    group: str = "dealer.tables"
    #: a replica silent this long is out of the group and its partitions go to the others
    session_timeout_ms: int = 10_000
    heartbeat_interval_ms: int = 2_000


def claim_envelope(partition: int, partitions: int, settings: ShardSettings, now: float) -> Any:
    claim = dealer_pb2.DealerClaim(
        partition=partition, address=settings.address, replica=settings.replica, partitions=partitions
    )
    claim.claimed_at.FromNanoseconds(int(now * 1e9))
    return make_envelope(type=CLAIM_TYPE, source="dealer", key=str(partition), sequence=0, payload=claim)


class Membership(ConsumerRebalanceListener):  # type: ignore[misc]
    """The group membership thread (see the module docstring)."""

    def __init__(
        self,
        settings: ShardSettings,
        loop: asyncio.AbstractEventLoop,
        *,
        known: Callable[[int], None],
        take: Callable[[int, int], Awaitable[bool]],
        give_up: Callable[[list[int], str], Awaitable[None]],
        clock: Callable[[], float],
    ) -> None:
        self.settings = settings
        self.loop = loop
        self.known = known
        self.take = take
        self.give_up = give_up
        self.clock = clock
        self.partitions = 0
        #: What the group gave this replica (its callbacks; ``consumer.assignment()`` still lists
        #: revoked partitions until the next assignment arrives).
        self.assigned: set[int] = set()
        self.held: set[int] = set()
        self.stale: set[int] = set()
        self._lock = threading.Lock()  # the sets: the thread's, and :meth:`forget` from the event loop
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dealer-shards", daemon=True)
        self._consumer: KafkaConsumer | None = None
        self._producer: EventProducer | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        """Leave the group (the others take the partitions at once) and end the thread."""
        self._stop.set()
        self._thread.join(timeout)

    # ------------------------------------------------------------------ the thread
    def _on_loop(self, coro: Awaitable[None], timeout: float) -> None:
        asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)  # type: ignore[arg-type]

    def _on_loop_result(self, coro: Awaitable[bool], timeout: float) -> bool:
        return bool(asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout))  # type: ignore[arg-type]

    def _run(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            try:
                self._member()
                return
            except Exception as exc:  # noqa: BLE001 - the broker may be down: join again later
                log.warning("dealer group membership failed; joining again", extra={"error": repr(exc)[:300]})
                self._release_all("revoked")
                self._stop.wait(delay)
                delay = min(delay * 2, 10.0)

    def _member(self) -> None:
        s = self.settings
        self._producer = EventProducer(s.bootstrap, "dealer")
        consumer = KafkaConsumer(
            **client_settings(),
            bootstrap_servers=s.bootstrap,
            client_id=f"cardroom-dealer-shards-{s.replica}",
            group_id=s.group,
            enable_auto_commit=False,
            # KIP-429: a rebalance moves only the partitions that change hands; the others keep
            # dealing (the eager protocol revoked every partition at every join: every hand cancelled)
            partition_assignment_strategy=[CooperativeStickyAssignor],
            session_timeout_ms=s.session_timeout_ms,
            heartbeat_interval_ms=s.heartbeat_interval_ms,
            # the assignment callback restores a partition's tables before it returns
            max_poll_interval_ms=300_000,
        )
        self._consumer = consumer
        try:
            partitions = consumer.partitions_for_topic(s.snapshots_topic)
            if not partitions:
                raise RuntimeError(f"topic {s.snapshots_topic} has no partitions (does it exist?)")
            self.partitions = len(partitions)
            self.loop.call_soon_threadsafe(self.known, self.partitions)
            consumer.subscribe([s.snapshots_topic], listener=self)
            while not self._stop.is_set():
                consumer.poll(timeout_ms=500)
                try:
                    self._claim_missing()
                except Exception as exc:  # noqa: BLE001 - the broker or the wallet: next poll tries again
                    log.warning("partition not claimed yet", extra={"error": repr(exc)[:300]})
                    self._stop.wait(1.0)
        finally:
            try:
                consumer.close()  # leaves the group: revocation first (our callback), then the others rebalance
            finally:
                self._release_all("left")
                self._producer.close()

    def _release_all(self, why: str) -> None:
        with self._lock:
            parts = sorted(self.held)
            self.held.clear()
            self.assigned.clear()
        if parts:
            try:
                self._on_loop(self.give_up(parts, why), 60)
            except Exception:
                log.exception("giving partitions up failed", extra={"partitions": parts})

    # ------------------------------------------------------------------ ConsumerRebalanceListener
    def forget(self, partition: int) -> None:
        """The replica gave ``partition`` up on its own (fenced by the wallet): claim it again only if
        the group gives it again."""
        with self._lock:
            self.held.discard(partition)
            self.assigned.discard(partition)

    def on_partitions_revoked(self, revoked: Any) -> None:
        with self._lock:
            self.assigned.difference_update(tp.partition for tp in revoked)
            parts = sorted(tp.partition for tp in revoked if tp.partition in self.held)
            self.held.difference_update(parts)
        if not parts:
            return
        log.info("partitions revoked", extra={"partitions": parts})
        self._on_loop(self.give_up(parts, "revoked"), 60)

    def on_partitions_lost(self, lost: Any) -> None:
        """Booted from the group (session expired): the partitions are someone else's already."""
        self.on_partitions_revoked(lost)

    def on_partitions_assigned(self, assigned: Any) -> None:
        consumer = self._consumer
        assert consumer is not None
        consumer.pause(*assigned)  # membership only: never fetch the snapshots through the group
        with self._lock:
            self.assigned.update(tp.partition for tp in assigned)
            self.stale.clear()  # a new assignment: the group's word is fresh, every partition is tried again

    def _claim_missing(self) -> None:
        """Claim and take every assigned partition not held yet (a failure is tried again at the next
        poll; a stale claim waits for the next assignment: the group will move that partition)."""
        producer = self._producer
        assert producer is not None
        with self._lock:
            todo = sorted(self.assigned - self.held - self.stale)
        for partition in todo:
            if self._stop.is_set():
                return
            envelope = claim_envelope(partition, self.partitions, self.settings, self.clock())
            offset = producer.send(self.settings.directory_topic, envelope).get(timeout=15).offset
            epoch = offset + 1
            log.info("partition claimed", extra={"partition": partition, "epoch": epoch})
            taken = self._on_loop_result(self.take(partition, epoch), 300)
            with self._lock:
                (self.held if taken else self.stale).add(partition)
