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

from cardroom.runtime.events import EventProducer, make_envelope
from cardroom.runtime.kafka_auth import client_settings
from cardroom.v1 import dealer_pb2

log = logging.getLogger("dealer.shards")

CLAIM_TYPE = "cardroom.dealer.claim.v1"


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
        self.held: set[int] = set()
        self.stale: set[int] = set()
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
        if self.held:
            parts = sorted(self.held)
            self.held.clear()
            try:
                self._on_loop(self.give_up(parts, why), 60)
            except Exception:
                log.exception("giving partitions up failed", extra={"partitions": parts})

    # ------------------------------------------------------------------ ConsumerRebalanceListener
    def on_partitions_revoked(self, revoked: Any) -> None:
        parts = sorted(tp.partition for tp in revoked if tp.partition in self.held)
        if not parts:
            return
        self.held.difference_update(parts)
        log.info("partitions revoked", extra={"partitions": parts})
        self._on_loop(self.give_up(parts, "revoked"), 60)

    def on_partitions_assigned(self, assigned: Any) -> None:
        consumer = self._consumer
        assert consumer is not None
        consumer.pause(*assigned)  # membership only: never fetch the snapshots through the group
        self.stale.clear()  # a new assignment: the group's word is fresh, every partition is tried again

    def _claim_missing(self) -> None:
        """Claim and take every assigned partition not held yet (a failure is tried again at the next
        poll; a stale claim waits for the next assignment: the group will move that partition)."""
        consumer, producer = self._consumer, self._producer
        assert consumer is not None and producer is not None
        for tp in sorted(consumer.assignment(), key=lambda t: t.partition):
            if tp.partition in self.held or tp.partition in self.stale or self._stop.is_set():
                continue
            envelope = claim_envelope(tp.partition, self.partitions, self.settings, self.clock())
            offset = producer.send(self.settings.directory_topic, envelope).get(timeout=15).offset
            epoch = offset + 1
            log.info("partition claimed", extra={"partition": tp.partition, "epoch": epoch})
            if self._on_loop_result(self.take(tp.partition, epoch), 300):
                self.held.add(tp.partition)
            else:
                self.stale.add(tp.partition)
