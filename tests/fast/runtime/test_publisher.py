"""The publisher's fired records (best effort): a record that cannot be made is logged and never raised to
the table that fired it; records fired before the producer is connected are counted as pending while they
linger and logged when they cannot be handed over. An awaited record goes at once, after those fired
before it, or, when the caller may wait, with the fired ones in their request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Iterator

import pytest
from kafka.errors import KafkaTimeoutError
from kafka.future import Future

from cardroom.runtime.publisher import AsyncPublisher
from cardroom.v1 import common_pb2, events_pb2

SETTLED = events_pb2.HandSettled(hand_id="h", table_id="t1", currency=common_pb2.CURRENCY_CASH)


def test_a_record_that_cannot_be_made_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    publisher = AsyncPublisher("127.0.0.1:1", "dealer", connect=False, linger_ms=50)
    with caplog.at_level(logging.WARNING, logger="cardroom.runtime.publisher"):
        publisher.fire("topic", type="x.v1", key="t1", sequence=1, payload=object())  # type: ignore[arg-type]
    assert publisher.pending == 0
    assert any(r.getMessage() == "event not published" for r in caplog.records)


def test_records_fired_before_the_producer_linger_then_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    publisher = AsyncPublisher("127.0.0.1:1", "dealer", connect=False, linger_ms=50)

    async def run() -> None:
        for sequence in (1, 2):
            publisher.fire("topic", type="x.v1", key="t1", sequence=sequence, payload=SETTLED)
        assert publisher.pending == 2  # lingering on the loop
        await asyncio.sleep(0.2)  # past the linger: handed over, but there is no producer yet

    with caplog.at_level(logging.WARNING, logger="cardroom.runtime.publisher"):
        asyncio.run(run())
    assert publisher.pending == 0
    assert any(r.getMessage() == "events not published" for r in caplog.records)


class Producer:
    """What the publisher uses of :class:`cardroom.runtime.events.EventProducer`: each send's future
    (kafka-python's), in the order sent, and the sender's wakes."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int, Future]] = []  # (how, sequence, its future)
        self.wakes = 0

    @contextlib.contextmanager
    def one_wakeup(self, topics: Iterable[str]) -> Iterator[None]:
        list(topics)
        yield
        self.wakes += 1

    def send(self, topic: str, envelope: events_pb2.EventEnvelope) -> Future:
        self.sent.append(("send", envelope.sequence, Future()))
        return self.sent[-1][2]

    def send_now(self, topic: str, envelope: events_pb2.EventEnvelope) -> Future:
        self.sent.append(("send_now", envelope.sequence, Future()))
        self.wakes += 1
        return self.sent[-1][2]


def connected(linger_ms: int = 50) -> tuple[AsyncPublisher, Producer]:
    publisher = AsyncPublisher("127.0.0.1:1", "dealer", connect=False, linger_ms=linger_ms)
    producer = Producer()
    publisher.producer = producer  # type: ignore[assignment]
    return publisher, producer


def test_an_awaited_record_that_may_linger_goes_with_the_fired_ones_in_one_wake() -> None:
    publisher, producer = connected()

    async def run() -> None:
        publisher.fire("events", type="x.v1", key="t1", sequence=1, payload=SETTLED)
        awaited = asyncio.create_task(
            publisher.publish("snapshots", type="x.v1", key="t1", sequence=2, payload=SETTLED, linger=True)
        )
        await asyncio.sleep(0.01)
        publisher.fire("events", type="x.v1", key="t1", sequence=3, payload=SETTLED)
        assert producer.sent == []  # nothing handed over within the linger
        assert publisher.pending == 3
        await asyncio.sleep(0.1)
        assert [(how, seq) for how, seq, _ in producer.sent] == [("send", 1), ("send", 2), ("send", 3)]
        assert producer.wakes == 1
        assert not awaited.done()  # until the broker answers its own record
        producer.sent[2][2].success(None)
        await asyncio.sleep(0.01)
        assert not awaited.done()
        producer.sent[1][2].success(None)
        await asyncio.wait_for(awaited, 1)
        assert publisher.pending == 1  # the third record is still unanswered

    asyncio.run(run())


def test_an_awaited_record_that_lingered_raises_the_brokers_refusal() -> None:
    publisher, producer = connected()

    async def run() -> None:
        awaited = asyncio.create_task(
            publisher.publish("snapshots", type="x.v1", key="t1", sequence=1, payload=SETTLED, linger=True)
        )
        await asyncio.sleep(0.1)
        producer.sent[0][2].failure(KafkaTimeoutError("no answer"))
        with pytest.raises(KafkaTimeoutError):
            await asyncio.wait_for(awaited, 1)

    asyncio.run(run())


def test_an_awaited_record_that_lingered_before_the_producer_raises() -> None:
    publisher = AsyncPublisher("127.0.0.1:1", "dealer", connect=False, linger_ms=50)

    async def run() -> None:
        with pytest.raises(ConnectionError):
            await publisher.publish("snapshots", type="x.v1", key="t1", sequence=1, payload=SETTLED, linger=True)

    asyncio.run(run())


def test_an_awaited_record_goes_at_once_after_those_fired_before_it() -> None:
    publisher, producer = connected()

    async def run() -> None:
        publisher.fire("events", type="x.v1", key="t1", sequence=1, payload=SETTLED)
        awaited = asyncio.create_task(
            publisher.publish("snapshots", type="x.v1", key="t1", sequence=2, payload=SETTLED)
        )
        await asyncio.sleep(0)
        assert [(how, seq) for how, seq, _ in producer.sent] == [("send", 1), ("send_now", 2)]
        producer.sent[1][2].success(None)
        await asyncio.wait_for(awaited, 1)

    asyncio.run(run())


def test_a_publish_cancelled_just_as_its_answer_comes_is_cancelled() -> None:
    """Python 3.11's ``asyncio.wait_for`` returned the answer and dropped a cancellation that came in the same
    turn of the loop (python/cpython#86296): a table actor stopped while its snapshot's acknowledgement arrived
    ran on (docs/sharding.md, the chaos run of 2026-12-05). The publish must end cancelled."""
    publisher, producer = connected()

    async def run() -> None:
        task = asyncio.create_task(publisher.publish("snapshots", type="x.v1", key="t1", sequence=1, payload=SETTLED))
        await asyncio.sleep(0)
        producer.sent[0][2].success(None)  # the broker's answer: resolved on the loop's next turn
        await asyncio.sleep(0)  # that turn: the answer is in, the publish not woken yet
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()

    asyncio.run(run())
