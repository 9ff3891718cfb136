"""Fast tier: the runtime's consumer loop on an in-memory consumer (no Kafka).

At least once: offsets are committed only after the whole batch was handled; a failure
(the broker, or the handler) closes the consumer, and the batch is read again."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from cardroom.runtime.consumer import ConsumerLoop, ConsumerSettings, await_partitions


@dataclass
class Rec:
    key: bytes | None
    value: bytes | None


@dataclass
class Log:
    """A one-partition topic with a committed offset, shared by the consumers the loop opens."""

    values: list[bytes]
    committed: int = 0
    opened: int = 0
    closed: list[bool] = field(default_factory=list)  # autocommit flag of each close


class FakeConsumer:
    def __init__(self, log: Log, batch: int = 2, known_after: int = 0) -> None:
        self.log, self.batch = log, batch
        self.position = log.committed  # a new member starts at the committed offset
        self.known_after = known_after  # metadata lookups before the topic's partitions are known
        self.lookups = 0
        self.polled_before_known = False

    def partitions_for_topic(self, topic: str) -> set[int]:
        self.lookups += 1
        return {0} if self.lookups > self.known_after else set()

    def poll(self, timeout_ms: int = 0, max_records: int | None = None) -> dict[str, list[Rec]]:
        if self.lookups <= self.known_after:
            self.polled_before_known = True
        chunk = self.log.values[self.position : self.position + self.batch]
        if not chunk:
            time.sleep(timeout_ms / 1000 / 10)
            return {}
        self.position += len(chunk)
        return {"tp0": [Rec(None, v) for v in chunk]}

    def commit(self) -> None:
        self.log.committed = self.position

    def close(self, autocommit: bool = True) -> None:
        self.log.closed.append(autocommit)


def settings(group: str | None) -> ConsumerSettings:
    return ConsumerSettings(
        "unused:9092", ("t",), client_id="test", group_id=group, poll_timeout_ms=50, retry_seconds=0.01
    )


def wait(predicate, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_a_group_consumer_commits_after_each_handled_batch() -> None:
    log = Log([b"a", b"b", b"c"])
    seen: list[bytes] = []

    def factory(_: ConsumerSettings) -> FakeConsumer:
        log.opened += 1
        return FakeConsumer(log)

    loop = ConsumerLoop(settings("g"), lambda r: seen.append(r.value), factory=factory)
    loop.start()
    wait(lambda: log.committed == 3)
    loop.stop()
    assert seen == [b"a", b"b", b"c"] and log.opened == 1 and log.closed == [False]


def test_a_failing_handler_rereads_the_uncommitted_batch_on_a_new_consumer() -> None:
    log = Log([b"a", b"b", b"c", b"d"])
    seen: list[bytes] = []
    failed = threading.Event()

    def handle(record: Rec) -> None:
        if record.value == b"c" and not failed.is_set():
            failed.set()
            raise RuntimeError("database unavailable")
        seen.append(record.value or b"")

    def factory(_: ConsumerSettings) -> FakeConsumer:
        log.opened += 1
        return FakeConsumer(log)

    loop = ConsumerLoop(settings("g"), handle, factory=factory)
    loop.start()
    wait(lambda: log.committed == 4)
    loop.stop()
    assert seen == [b"a", b"b", b"c", b"d"]  # c, d read again once; a, b not
    assert log.opened == 2 and log.closed == [False, False]


def test_without_a_group_nothing_is_committed_and_a_broken_connection_reconnects() -> None:
    log = Log([b"x"])
    opened: list[int] = []

    def factory(_: ConsumerSettings) -> FakeConsumer:
        opened.append(1)
        if len(opened) == 1:
            raise ConnectionError("broker unreachable")
        return FakeConsumer(log)

    seen: list[bytes] = []
    loop = ConsumerLoop(settings(None), lambda r: seen.append(r.value), factory=factory)
    loop.start()
    wait(lambda: seen == [b"x"])
    loop.stop()
    assert log.committed == 0 and len(opened) == 2


def test_a_group_member_polls_only_once_its_topics_partitions_are_known() -> None:
    """cardroom.runtime.consumer.await_partitions: a first join without the partitions loses the
    group its assignment in kafka-python 3.0.12 (tests/services/test_consumer_metadata.py)."""
    log = Log([b"a"])
    consumers: list[FakeConsumer] = []

    def factory(_: ConsumerSettings) -> FakeConsumer:
        consumers.append(FakeConsumer(log, known_after=3))
        return consumers[-1]

    seen: list[bytes] = []
    loop = ConsumerLoop(settings("g"), lambda r: seen.append(r.value), factory=factory)
    loop.start()
    wait(lambda: seen == [b"a"])
    loop.stop()
    assert consumers[0].lookups >= 4 and not consumers[0].polled_before_known


def test_a_member_waiting_for_its_topics_stops_when_asked() -> None:
    log = Log([b"a"])
    consumer = FakeConsumer(log, known_after=10**9)
    loop = ConsumerLoop(settings("g"), lambda r: None, factory=lambda _: consumer)
    loop.start()
    wait(lambda: consumer.lookups >= 2)
    loop.stop()
    assert not loop._thread.is_alive() and log.closed == [False] and not consumer.polled_before_known


def test_waiting_for_partitions_has_a_deadline() -> None:
    consumer = FakeConsumer(Log([]), known_after=10**9)
    try:
        await_partitions(consumer, ("t",), retry_seconds=0.01, timeout=0.05)
    except TimeoutError as exc:
        assert "['t']" in str(exc)
    else:
        raise AssertionError("no TimeoutError")


def test_a_batch_is_committed_only_once_before_commit_lets_it() -> None:
    """``before_commit``: what the batch brought must be durable elsewhere first (the tournament
    service's store); a refusal skips the commit and the batch is read again."""
    log = Log([b"a", b"b"])
    durable = threading.Event()
    refusals: list[int] = []

    def before_commit() -> None:
        if not durable.is_set():
            refusals.append(1)
            raise TimeoutError("not stored yet")

    def factory(_: ConsumerSettings) -> FakeConsumer:
        log.opened += 1
        return FakeConsumer(log)

    seen: list[bytes] = []
    loop = ConsumerLoop(settings("g"), lambda r: seen.append(r.value), factory=factory, before_commit=before_commit)
    loop.start()
    wait(lambda: len(refusals) >= 2)
    assert log.committed == 0  # handled, never committed: a restart would read them again
    durable.set()
    wait(lambda: log.committed == 2)
    loop.stop()
    assert seen[:2] == [b"a", b"b"] and log.opened >= 2
