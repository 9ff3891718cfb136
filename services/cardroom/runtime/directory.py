"""Which dealer replica deals which table: ``cardroom.dealer.directory`` read in a background thread
(docs/sharding.md, "Routing: the directory"; the fold itself is :mod:`cardroom.runtime.claims`).

:class:`DealerDirectory` reads the topic's one partition from the beginning without a consumer group
and follows it (kafka-python on a :class:`~cardroom.runtime.consumer.ConsumerLoop` thread, the
service's own Kafka user: :mod:`cardroom.runtime.kafka_auth`); after a broken connection it reads on
from the next offset. Its lookups are thread-safe and cheap (asyncio code calls them inline), and
:meth:`DealerDirectory.changed` lets a coroutine wait until a table has another owner or a newer
claim — what a call that found its table gone waits for before it is retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Iterable
from typing import Any

from cardroom.runtime.claims import Claim, Claims, DirectoryRecord
from cardroom.runtime.consumer import Consumer, ConsumerLoop, ConsumerSettings, Record
from cardroom.runtime.kafka_auth import KafkaCredentials, client_settings

log = logging.getLogger("cardroom.runtime.directory")

#: The compacted one-partition topic the dealer replicas write their claims to (deploy/kafka/topics.yaml).
TOPIC = "cardroom.dealer.directory"


class DealerDirectory:
    """The latest claim per partition of the tables (module docstring)."""

    def __init__(
        self,
        bootstrap: str,
        topic: str = TOPIC,
        *,
        client_id: str = "cardroom-directory",
        credentials: KafkaCredentials | None = None,
        retry_seconds: float = 1.0,
    ) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.credentials = credentials
        self._claims = Claims()
        self._lock = threading.Lock()
        self._next_offset = 0
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        settings = ConsumerSettings(
            bootstrap, (topic,), client_id=client_id, auto_offset_reset="earliest", retry_seconds=retry_seconds
        )
        self._loop = ConsumerLoop(settings, self._handle, name="dealer-directory", factory=self._open)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        self._loop.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._loop.stop(timeout)

    # ------------------------------------------------------------------ lookups (any thread)
    def owner(self, table_id: str) -> str | None:
        """The address of the table's partition's latest claim (None: unknown)."""
        with self._lock:
            return self._claims.owner(table_id)

    def route(self, table_id: str) -> tuple[str | None, int]:
        """(owner address or None, epoch of its claim or 0), read together."""
        with self._lock:
            claim = self._claims.claim_for(table_id)
        return (claim.address, claim.epoch) if claim is not None else (None, 0)

    def addresses(self) -> list[str]:
        """The distinct addresses of the current claims (sorted; empty before the first claim)."""
        with self._lock:
            return self._claims.addresses()

    def epoch(self, partition: int) -> int:
        """The epoch of the partition's latest claim (0: none)."""
        with self._lock:
            return self._claims.epoch(partition)

    def claims(self) -> list[Claim]:
        """The current claims, by partition."""
        with self._lock:
            return sorted(self._claims.current(), key=lambda c: c.partition)

    @property
    def refused(self) -> int:
        with self._lock:
            return self._claims.refused

    async def changed(self, table_id: str, address: str | None, epoch: int, timeout: float) -> str | None:
        """Wait until the table's owner is known and is not ``address``, or its claim is newer than
        ``epoch``: that owner's address. None when ``timeout`` seconds passed first."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        event = asyncio.Event()
        waiter = (loop, event)
        with self._lock:
            self._waiters.add(waiter)
        try:
            while True:
                event.clear()
                now, then = self.route(table_id)
                if now is not None and (now != address or then > epoch):
                    return now
                left = deadline - loop.time()
                if left <= 0:
                    return None
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await event.wait()
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    # ------------------------------------------------------------------ the records
    def take(self, records: Iterable[DirectoryRecord]) -> int:
        """Fold ``records`` in (the reading thread; tests); wake the waiters when a claim changed.
        Returns how many changed the claims."""
        changed = 0
        with self._lock:
            for record in records:
                changed += self._claims.apply(record)
                self._next_offset = max(self._next_offset, record.offset + 1)
            waiters = list(self._waiters) if changed else []
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile
                loop.call_soon_threadsafe(event.set)
        if changed:
            log.info("dealer directory changed", extra={"claims": changed, "addresses": self.addresses()})
        return changed

    def _handle(self, record: Record) -> None:
        self.take([record])  # type: ignore[list-item]  # kafka-python's records have their offset

    def _open(self, settings: ConsumerSettings) -> Consumer:
        """A group-less consumer of the topic's partition 0, from the next offset not read yet."""
        from kafka import KafkaConsumer, TopicPartition

        consumer: Any = KafkaConsumer(
            **client_settings(self.credentials),
            bootstrap_servers=settings.bootstrap,
            client_id=settings.client_id,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset=settings.auto_offset_reset,
            metadata_max_age_ms=settings.metadata_max_age_ms,
        )
        partition = TopicPartition(self.topic, 0)
        consumer.assign([partition])
        with self._lock:
            start = self._next_offset
        if start:
            consumer.seek(partition, start)
        else:
            consumer.seek_to_beginning(partition)
        typed: Consumer = consumer
        return typed
