"""Kafka events with an envelope (id, type, source, time, key, sequence) and CloudEvents headers."""

from __future__ import annotations

import contextlib
import logging
import threading
import time as clock
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from google.protobuf.message import Message
from kafka import KafkaProducer

from cardroom.runtime.kafka_auth import KafkaCredentials, client_settings
from cardroom.runtime.partitions import TablePartitioner
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import events_pb2

log = logging.getLogger("cardroom.runtime.events")

#: Event type names: "cardroom.<source>.<what>.v1".
TYPE_PREFIX = "cardroom."


def make_envelope(
    *,
    type: str,
    source: str,
    key: str,
    sequence: int,
    payload: Message,
    event_id: str | None = None,
    at: float | None = None,
) -> events_pb2.EventEnvelope:
    """Wrap ``payload`` in an :class:`EventEnvelope` (new uuid4 id; its time ``at`` seconds since the
    epoch, the current time by default)."""
    envelope = events_pb2.EventEnvelope(
        event_id=event_id or str(uuid.uuid4()), type=type, source=source, key=key, sequence=sequence
    )
    envelope.time.CopyFrom(timestamp(clock.time() if at is None else at))
    envelope.payload.Pack(payload)
    return envelope


def headers_for(envelope: events_pb2.EventEnvelope) -> list[tuple[str, bytes]]:
    """CloudEvents (binary mode) style Kafka headers mirroring the envelope."""
    return [
        ("ce_specversion", b"1.0"),
        ("ce_id", envelope.event_id.encode()),
        ("ce_type", envelope.type.encode()),
        ("ce_source", envelope.source.encode()),
        ("ce_time", envelope.time.ToJsonString().encode()),
        ("ce_subject", envelope.key.encode()),
        ("cardroom_sequence", str(envelope.sequence).encode()),
        ("content-type", b"application/protobuf"),
    ]


def decode_envelope(value: bytes) -> events_pb2.EventEnvelope:
    envelope = events_pb2.EventEnvelope()
    envelope.ParseFromString(value)
    return envelope


def unpack(envelope: events_pb2.EventEnvelope, message_type: type[Message]) -> Message | None:
    """The payload as ``message_type``, or None when the envelope carries something else."""
    message = message_type()
    return message if envelope.payload.Unpack(message) else None


class WakeGate:
    """Stands in for the sender thread's ``wakeup``: while :meth:`held`, a wake asked for is noted and
    made once at the end (kafka-python wakes its sender at every record that opens a batch)."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self._lock = threading.Lock()
        self._held = False
        self._missed = False
        #: wakes made (a count, for tests and diagnostics)
        self.made = 0

    def __call__(self) -> None:
        with self._lock:
            if self._held:
                self._missed = True
                return
        self._made()

    def _made(self) -> None:
        self.made += 1
        self._wake()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        with self._lock:
            self._held = True
        try:
            yield
        finally:
            with self._lock:
                self._held = False
                missed, self._missed = self._missed, False
            if missed:
                self._made()


@dataclass
class EventProducer:
    """An idempotent (acks=all) Kafka producer of enveloped events, keyed by entity."""

    bootstrap: str
    source: str
    request_timeout_ms: int = 10_000
    #: how long a record waits for others to share its batch (kafka-python's ``linger_ms``)
    linger_ms: int = 5
    #: None: ``KAFKA_USERNAME`` / ``KAFKA_PASSWORD`` from the environment (or plaintext without them).
    credentials: KafkaCredentials | None = None

    def __post_init__(self) -> None:
        self._producer = KafkaProducer(
            **client_settings(self.credentials),
            bootstrap_servers=self.bootstrap,
            client_id=f"cardroom-{self.source}",
            acks="all",
            enable_idempotence=True,
            linger_ms=self.linger_ms,
            # a tournament's tables together (cardroom.runtime.partitions): one dealer replica holds them
            partitioner=TablePartitioner(),
            request_timeout_ms=self.request_timeout_ms,
            max_block_ms=self.request_timeout_ms,
        )
        sender = self._producer._sender  # kafka-python 3.0's, pinned in requirements.lock
        self._wakes = WakeGate(sender.wakeup)
        sender.wakeup = self._wakes

    @property
    def wakes(self) -> int:
        """How often the sender thread has been woken from outside it."""
        return self._wakes.made

    def one_wakeup(self, topics: Iterable[str]) -> contextlib.AbstractContextManager[None]:
        """Sends made inside wake the sender thread once, at the end: for records handed over together.
        Not while a topic's partitions are unknown: ``send`` then waits for the sender to fetch them."""
        metadata = self._producer._metadata
        if all(metadata.partitions_for_topic(topic) is not None for topic in set(topics)):
            return self._wakes.held()
        return contextlib.nullcontext()

    def send(self, topic: str, envelope: events_pb2.EventEnvelope):  # -> kafka FutureRecordMetadata
        """Queue one envelope; the key is the envelope key. Returns the send future."""
        return self._producer.send(
            topic, key=envelope.key.encode(), value=envelope.SerializeToString(), headers=headers_for(envelope)
        )

    def send_now(self, topic: str, envelope: events_pb2.EventEnvelope):  # -> kafka FutureRecordMetadata
        """Queue one envelope and send it without lingering: for a record someone waits for (a
        snapshot before a sit-down's buy-in). Until it is answered every batch counts as
        ready, as in ``KafkaProducer.flush`` but without blocking; the queued records of the same
        broker go in the same request. (kafka-python 3.0's accumulator, pinned in requirements.lock.)"""
        future = self.send(topic, envelope)
        accumulator = self._producer._accumulator
        accumulator.begin_flush()
        future.add_both(lambda _: accumulator._flushes_in_progress.decrement())
        self._producer._sender.wakeup()
        return future

    def publish(self, topic: str, *, type: str, key: str, sequence: int, payload: Message) -> events_pb2.EventEnvelope:
        """Wrap, send now and wait for the broker's acknowledgement."""
        envelope = make_envelope(type=type, source=self.source, key=key, sequence=sequence, payload=payload)
        self.send_now(topic, envelope).get(timeout=self.request_timeout_ms / 1000)
        return envelope

    def partitions_for(self, topic: str) -> set[int]:
        """The partitions of ``topic`` (blocking: the broker's metadata)."""
        return set(self._producer.partitions_for(topic) or ())

    def flush(self, timeout: float | None = None) -> None:
        self._producer.flush(timeout)

    def close(self, timeout: float = 5.0) -> None:
        self._producer.close(timeout=timeout)
