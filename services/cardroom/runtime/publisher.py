"""Asynchronous Kafka publishing of enveloped events (or nothing, with Kafka turned off).

``publish`` awaits the broker's acknowledgement without blocking the event loop (the
producer's callbacks resolve an asyncio future) and sends at once: a record someone waits for
does not linger, unless the caller can wait (``linger=True``: it goes with the fired records).
``fire`` queues a send and returns (best effort, failures logged); its records
wait up to ``linger_ms`` to share a request. With ``bootstrap`` None the publisher is disabled and both are no-ops.

The linger is kept here, on the event loop, not in kafka-python's accumulator: the fired records of
``linger_ms`` are handed to the producer together and wake its sender thread once. kafka-python
wakes that thread at every record that opens a batch (a socket write from the loop and a run of the
thread's Python loop each), and a card room's fired records go to many partitions a few at a time,
so nearly every one did (docs/capacity.md, "The dealer's linger on its event loop"). The producer
itself sends at once (its own linger 0); an awaited ``publish`` first hands over what was fired
before it, so the records of one publisher go out in the order they were given.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from google.protobuf.message import Message

from cardroom.runtime.events import EventProducer, make_envelope
from cardroom.v1 import events_pb2

log = logging.getLogger("cardroom.runtime.publisher")

#: an awaiting ``publish``'s callbacks: (on the acknowledgement, on a failure)
_Waiter = tuple[Callable[[Any], None], Callable[[BaseException], None]]
#: a record lingering on the loop: (topic, envelope, fired at (perf_counter), its waiter or None)
_Lingering = tuple[str, events_pb2.EventEnvelope, float, _Waiter | None]


class AsyncPublisher:
    """Events from ``source`` (the envelope's source), keyed by entity."""

    def __init__(
        self,
        bootstrap: str | None,
        source: str,
        request_timeout_ms: int = 10_000,
        observe: Callable[[str, float, bool], object] | None = None,
        *,
        connect: bool = True,
        linger_ms: int = 5,
    ) -> None:
        self.source = source
        self.bootstrap = bootstrap or None
        self.request_timeout_ms = request_timeout_ms
        self.linger_ms = linger_ms
        self.producer: EventProducer | None = None
        #: called (on the producer's thread) with (topic, seconds from send to answer, accepted)
        self.observe = observe
        self._pending = 0
        self._pending_lock = threading.Lock()
        #: records lingering on the loop, in the order given
        self._fired: list[_Lingering] = []
        self._flush_at: asyncio.TimerHandle | None = None
        if connect:
            self.connect()

    def connect(self) -> None:
        """Make the producer (blocking: kafka-python bootstraps from the broker and raises while it
        is unreachable). ``connect=False`` defers it: the dealer retries it while it starts."""
        if self.bootstrap is not None and self.producer is None:
            self.producer = EventProducer(self.bootstrap, self.source, self.request_timeout_ms, linger_ms=0)

    @property
    def pending(self) -> int:
        """Records sent and not answered yet: the publish backlog (lingering, in flight, or waiting for
        a broker that is away)."""
        return self._pending + len(self._fired)

    def _count(self, step: int) -> None:
        with self._pending_lock:
            self._pending += step

    def _observed(self, topic: str, future: Any, start: float | None = None) -> Any:
        """Count the record until it is answered; observe the time from ``start`` (when it was
        fired; default now) to the answer."""
        self._count(1)
        future.add_both(lambda _: self._count(-1))  # on the producer's thread
        if self.observe is not None:
            start = time.perf_counter() if start is None else start
            observe = self.observe
            future.add_callback(lambda _: observe(topic, time.perf_counter() - start, True))
            future.add_errback(lambda _: observe(topic, time.perf_counter() - start, False))
        return future

    @property
    def enabled(self) -> bool:
        """Kafka is configured (connected or not yet)."""
        return self.bootstrap is not None

    def _producer(self) -> EventProducer:
        if self.producer is None:
            raise ConnectionError("not connected to Kafka yet")
        return self.producer

    def _send_now(self, topic: str, type: str, key: str, sequence: int, payload: Message, event_id: str | None) -> Any:
        envelope = make_envelope(
            type=type, source=self.source, key=key, sequence=sequence, payload=payload, event_id=event_id
        )
        return self._observed(topic, self._producer().send_now(topic, envelope))

    async def publish(
        self,
        topic: str,
        *,
        type: str,
        key: str,
        sequence: int,
        payload: Message,
        event_id: str | None = None,
        timeout: float = 15.0,
        linger: bool = False,
    ) -> None:
        """Send and wait for the acknowledgement (raises on failure or timeout, or before
        :meth:`connect`). ``linger``: the record waits with the fired ones (up to ``linger_ms``) and
        shares their request, for a caller to whom a few more milliseconds cost nothing."""
        if not self.enabled:
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def resolve(exc: BaseException | None) -> None:  # on the loop
            if done.done():
                return
            if exc is None:
                done.set_result(None)
            else:
                done.set_exception(exc)

        def ok(_: Any) -> None:  # on the producer's thread
            loop.call_soon_threadsafe(resolve, None)

        def fail(exc: BaseException) -> None:
            loop.call_soon_threadsafe(resolve, exc)

        if linger and self.linger_ms > 0:
            envelope = make_envelope(
                type=type, source=self.source, key=key, sequence=sequence, payload=payload, event_id=event_id
            )
            self._linger(loop, (topic, envelope, time.perf_counter(), (ok, fail)))
        else:
            self.flush_fired()  # what was fired before goes first
            future = self._send_now(topic, type, key, sequence, payload, event_id)  # awaited: no linger
            future.add_callback(ok)
            future.add_errback(fail)
        async with asyncio.timeout(timeout):  # not wait_for (pyproject.toml, banned-api)
            await done

    def fire(
        self, topic: str, *, type: str, key: str, sequence: int, payload: Message, event_id: str | None = None
    ) -> None:
        """Queue a send without waiting: it goes to the producer within ``linger_ms`` (at once outside
        an event loop, or with no linger), with every record fired meanwhile."""
        if not self.enabled:
            return
        try:
            envelope = make_envelope(
                type=type, source=self.source, key=key, sequence=sequence, payload=payload, event_id=event_id
            )
        except Exception as exc:  # best effort: a record that cannot be made is logged, never raised
            log.warning("event not published", extra={"topic": topic, "error": str(exc)})
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a thread, a table being built): at once
            loop = None
        self._linger(loop, (topic, envelope, time.perf_counter(), None))

    def _linger(self, loop: asyncio.AbstractEventLoop | None, record: _Lingering) -> None:
        self._fired.append(record)
        if loop is None or self.linger_ms <= 0:
            self.flush_fired()
        elif self._flush_at is None:
            self._flush_at = loop.call_later(self.linger_ms / 1000, self.flush_fired)

    def flush_fired(self) -> None:
        """Hand every fired record to the producer now, in the order fired, waking its sender once."""
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        fired, self._fired = self._fired, []
        if not fired:
            return
        try:
            producer = self._producer()
        except ConnectionError as exc:
            log.warning("events not published", extra={"records": len(fired), "error": str(exc)})
            for *_, waiter in fired:
                if waiter is not None:
                    waiter[1](exc)
            return
        with producer.one_wakeup(topic for topic, *_ in fired):
            for topic, envelope, fired_at, waiter in fired:
                try:
                    future = self._observed(topic, producer.send(topic, envelope), fired_at)
                except Exception as exc:
                    if waiter is not None:
                        waiter[1](exc)
                    else:
                        log.warning("event not published", extra={"topic": topic, "error": str(exc)})
                    continue
                if waiter is not None:
                    future.add_callback(waiter[0])
                    future.add_errback(waiter[1])
                else:
                    future.add_errback(
                        lambda exc, topic=topic: log.warning(
                            "event not published", extra={"topic": topic, "error": str(exc)}
                        )
                    )

    async def aclose(self) -> None:
        """:meth:`close` from the event loop: the fired records are handed over on the loop (their timer
        is the loop's), the blocking flush and close run in a thread."""
        self.flush_fired()
        await asyncio.get_running_loop().run_in_executor(None, self.close)

    def close(self) -> None:
        """Flush what is queued (5 s at most) and close the producer (blocking; from the event loop's
        thread use :meth:`aclose`)."""
        self.flush_fired()
        if self.producer is not None:
            self.producer.flush(5)
            self.producer.close()
