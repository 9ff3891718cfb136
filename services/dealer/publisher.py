"""Asynchronous Kafka publishing of enveloped events (or nothing, with Kafka turned off)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from google.protobuf.message import Message

from cardroom.runtime.events import EventProducer, make_envelope

log = logging.getLogger("dealer.publisher")
SOURCE = "dealer"


class Publisher:
    """``publish`` awaits the broker's acknowledgement; ``fire`` does not (best effort)."""

    def __init__(self, bootstrap: str | None) -> None:
        self.producer = EventProducer(bootstrap, SOURCE) if bootstrap else None

    @property
    def enabled(self) -> bool:
        return self.producer is not None

    def _send(self, topic: str, type: str, key: str, sequence: int, payload: Message,
              event_id: str | None) -> Any:
        assert self.producer is not None
        envelope = make_envelope(type=type, source=SOURCE, key=key, sequence=sequence,
                                 payload=payload, event_id=event_id)
        return self.producer.send(topic, envelope)

    async def publish(self, topic: str, *, type: str, key: str, sequence: int, payload: Message,
                      event_id: str | None = None, timeout: float = 15.0) -> None:
        """Send and wait for the acknowledgement (raises on failure or timeout)."""
        if self.producer is None:
            return
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def ok(_: Any) -> None:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(None))

        def fail(exc: BaseException) -> None:
            loop.call_soon_threadsafe(lambda: done.done() or done.set_exception(exc))

        future = self._send(topic, type, key, sequence, payload, event_id)
        future.add_callback(ok)
        future.add_errback(fail)
        await asyncio.wait_for(done, timeout)

    def fire(self, topic: str, *, type: str, key: str, sequence: int, payload: Message) -> None:
        """Queue a send without waiting (public table events)."""
        if self.producer is None:
            return
        try:
            self._send(topic, type, key, sequence, payload, None).add_errback(
                lambda exc: log.warning("table event not published", extra={"error": str(exc)}))
        except Exception as exc:
            log.warning("table event not published", extra={"error": str(exc)})

    def close(self) -> None:
        if self.producer is not None:
            self.producer.flush(5)
            self.producer.close()
