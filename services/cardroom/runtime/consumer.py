"""Consuming Kafka: one polling loop for every long-running consumer, and a read-to-the-end.

* :class:`ConsumerLoop` — a daemon thread that polls, hands each record to ``handle`` and,
  in a consumer group, commits the offsets after the whole batch was handled (at least
  once: a batch that failed is read again). Any failure — the broker, or ``handle`` raising
  (e.g. a database error: retry) — closes the consumer without committing, waits
  ``retry_seconds`` and reconnects. ``handle`` runs on the loop's thread; an asyncio service
  passes it on with ``loop.call_soon_threadsafe``. A group member polls only once every topic's
  partitions are in its metadata (:func:`await_partitions`).
* :func:`read_to_end` — every record of a topic from the beginning up to the end offsets
  seen at the start (no group; e.g. a compacted snapshots topic read back on start).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from cardroom.runtime.kafka_auth import client_settings

log = logging.getLogger("cardroom.runtime.consumer")


@dataclass(frozen=True)
class ConsumerSettings:
    """How to consume: ``group_id`` None reads without a group (and commits nothing)."""

    bootstrap: str
    topics: tuple[str, ...]
    client_id: str
    group_id: str | None = None
    auto_offset_reset: str = "latest"
    group_instance_id: str | None = None
    session_timeout_ms: int = 10_000
    max_poll_records: int = 500
    poll_timeout_ms: int = 300
    #: How long the broker may hold a fetch for ``fetch_min_bytes`` to gather (kafka-python's defaults, 500 ms
    #: and 1 byte: a fetch is answered as soon as one record is there, so a steady trickle costs a fetch, and
    #: in a group an offset commit, per record).
    fetch_max_wait_ms: int = 500
    fetch_min_bytes: int = 1
    retry_seconds: float = 1.0
    #: How stale the consumer's view of topics may get (kafka-python's default is 5 minutes): how soon
    #: a group sees partitions added to a topic it already reads, and rebalances to read them.
    metadata_max_age_ms: int = 5_000


class Record(Protocol):
    """What the loop reads of a Kafka record."""

    key: bytes | None
    value: bytes | None


class Consumer(Protocol):
    """The part of kafka-python's ``KafkaConsumer`` the loop uses."""

    def poll(self, timeout_ms: int = ..., max_records: int | None = ...) -> dict[Any, list[Any]]: ...

    def commit(self) -> Any: ...

    def close(self, autocommit: bool = ...) -> None: ...

    def partitions_for_topic(self, topic: str) -> set[int]: ...


def open_consumer(settings: ConsumerSettings) -> Consumer:
    """A ``KafkaConsumer`` subscribed to the settings' topics (auto-commit off)."""
    from kafka import KafkaConsumer

    consumer: Consumer = KafkaConsumer(
        *settings.topics,
        **client_settings(),
        bootstrap_servers=settings.bootstrap,
        group_id=settings.group_id,
        client_id=settings.client_id,
        enable_auto_commit=False,
        # records of an aborted transaction (a dealer that lost its table) are never read
        isolation_level="read_committed",
        auto_offset_reset=settings.auto_offset_reset,
        max_poll_records=settings.max_poll_records,
        fetch_max_wait_ms=settings.fetch_max_wait_ms,
        fetch_min_bytes=settings.fetch_min_bytes,
        group_instance_id=settings.group_instance_id,
        session_timeout_ms=settings.session_timeout_ms,
        metadata_max_age_ms=settings.metadata_max_age_ms,
    )
    return consumer


class ConsumerLoop:
    """See the module docstring."""

    def __init__(
        self,
        settings: ConsumerSettings,
        handle: Callable[[Record], object],
        *,
        name: str = "consumer",
        factory: Callable[[ConsumerSettings], Consumer] = open_consumer,
        after_poll: Callable[[Consumer], object] | None = None,
        before_commit: Callable[[], object] | None = None,
    ) -> None:
        self.settings = settings
        self.handle = handle
        #: called after a batch was handled, before its offsets are committed (in a group): it may
        #: wait until what ``handle`` took in is durable elsewhere; raising skips the commit and the
        #: loop reconnects (the batch is read again)
        self.before_commit = before_commit
        #: called with the consumer after every poll (e.g. to read its lag into a metric)
        self.after_poll = after_poll
        self.name = name
        self.factory = factory
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Ask the loop to end and wait for it (``timeout`` seconds at most)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def poll_once(self, consumer: Consumer) -> int:
        """One poll: handle every record, then commit (in a group). Returns the records handled."""
        batches = consumer.poll(timeout_ms=self.settings.poll_timeout_ms)
        count = 0
        for records in batches.values():
            for record in records:
                self.handle(record)
                count += 1
        if batches and self.settings.group_id is not None:
            if self.before_commit is not None:
                self.before_commit()
            consumer.commit()
        if self.after_poll is not None:
            self.after_poll(consumer)
        return count

    def await_partitions(self, consumer: Consumer) -> bool:
        """Wait until the consumer knows every topic's partitions (a group member only); False if stopped."""
        if self.settings.group_id is None:
            return True
        return await_partitions(
            consumer, self.settings.topics, stop=self._stop, retry_seconds=self.settings.retry_seconds, name=self.name
        )

    def _run(self) -> None:
        consumer: Consumer | None = None
        while not self._stop.is_set():
            try:
                if consumer is None:
                    consumer = self.factory(self.settings)
                    if not self.await_partitions(consumer):
                        break
                self.poll_once(consumer)
            except Exception:
                log.warning("%s failed; reconnecting", self.name, exc_info=True)
                if consumer is not None:
                    _close(consumer)
                    consumer = None
                self._stop.wait(self.settings.retry_seconds)
        if consumer is not None:
            _close(consumer)


def await_partitions(
    consumer: Consumer,
    topics: tuple[str, ...],
    *,
    stop: threading.Event | None = None,
    retry_seconds: float = 1.0,
    timeout: float | None = None,
    name: str = "consumer",
) -> bool:
    """Wait until every topic has its partitions in the consumer's metadata, before its first poll.

    A group member's first join must already see its topics' partitions. Otherwise the leader
    assigns nothing, and the next metadata refresh starts a second join. kafka-python 3.0.12 loses
    that second join when a poll's timeout ends while it is in flight. The JoinGroup and SyncGroup
    succeed, but the member never takes up the assignment, and holds no partition until the group
    rebalances for another reason. Under a loaded CPU that was 9 starts in 40 (the wallet posting no
    rake; a group that "never joined"), and 0 in 40 once the member first waited for its partitions
    (tests/services/test_consumer_metadata.py).

    Returns False when ``stop`` is set first; raises ``TimeoutError`` after ``timeout`` seconds.
    """
    stop = stop or threading.Event()
    deadline = None if timeout is None else time.monotonic() + timeout
    waiting: list[str] = []
    while not stop.is_set():
        missing = [t for t in topics if not consumer.partitions_for_topic(t)]
        if not missing:
            if waiting:
                log.info("%s: topics ready", name, extra={"topics": waiting})
            return True
        if not waiting:
            log.info("%s: waiting for topics", name, extra={"topics": missing})
            waiting = missing
        if deadline is not None and time.monotonic() >= deadline:
            raise TimeoutError(f"{name}: topics {missing} have no partitions after {timeout} s")
        stop.wait(retry_seconds)
    return False


def _close(consumer: Consumer) -> None:
    try:
        consumer.close(autocommit=False)
    except Exception:
        log.debug("closing a consumer failed", exc_info=True)


def read_to_end(
    bootstrap: str, topic: str, *, client_id: str, timeout: float = 30.0, partitions: Iterable[int] | None = None
) -> Iterator[Record]:
    """Every record of ``topic`` (of its ``partitions`` only, when given) from the beginning to the
    end offsets at the start (blocking; run it in a thread). Raises ``TimeoutError`` when the reading
    stalls ``timeout`` seconds."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        client_id=client_id,
        enable_auto_commit=False,
        group_id=None,
        isolation_level="read_committed",  # to the last stable offset: never an aborted transaction's record
        **client_settings(),
    )
    try:
        existing = consumer.partitions_for_topic(topic) or set()
        wanted = existing if partitions is None else existing & set(partitions)
        tps = [TopicPartition(topic, p) for p in sorted(wanted)]
        if not tps:
            return
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        remaining = {tp for tp in tps if ends[tp] > consumer.position(tp)}
        while remaining:
            batches = consumer.poll(timeout_ms=int(timeout * 1000), max_records=1000)
            if not batches:
                raise TimeoutError(f"reading {topic} stalled with {len(remaining)} partitions left")
            for tp, records in batches.items():
                yield from records
                if consumer.position(tp) >= ends[tp]:
                    remaining.discard(tp)
    finally:
        consumer.close()
