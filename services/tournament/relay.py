"""The events outbox to Kafka: every stored tournament event to ``cardroom.tournament.events``,
keyed by tournament id, in order, at least once (the envelope's ``event_id`` is
``<tournament>:<sequence>``, so a consumer drops duplicates)."""

from __future__ import annotations

import asyncio
import logging
import re

from cardroom.runtime.publisher import AsyncPublisher
from cardroom.v1 import tournament_pb2 as pb
from tournament import metrics
from tournament.store import StoredEvent, TournamentStore

log = logging.getLogger("tournament.relay")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def event_type(name: str) -> str:
    """``"PrizePoolFinal"`` -> ``"cardroom.tournament.prize_pool_final.v1"``."""
    return f"cardroom.tournament.{_CAMEL.sub('_', name).lower()}.v1"


def message(event: StoredEvent) -> pb.TournamentEventMessage:
    return pb.TournamentEventMessage(
        tournament_id=event.tournament_id, sequence=event.seq, type=event.type, at=event.at, json=event.body
    )


class EventRelay:
    def __init__(self, store: TournamentStore, publisher: AsyncPublisher, topic: str, interval: float) -> None:
        self.store = store
        self.publisher = publisher
        self.topic = topic
        self.interval = interval

    async def run(self) -> None:
        while True:
            try:
                sent = await self.relay_once()
            except Exception as exc:  # noqa: BLE001 - the broker may be away; retried
                metrics.EVENTS_FAILED.inc()
                log.warning("tournament events not published", extra={"error": str(exc)})
                sent = 0
            if not sent:
                await asyncio.sleep(self.interval)

    async def relay_once(self) -> int:
        if not self.publisher.enabled:
            return 0
        batch = self.store.unpublished()
        for event in batch:
            await self.publisher.publish(
                self.topic,
                type=event_type(event.type),
                key=event.tournament_id,
                sequence=event.seq,
                payload=message(event),
                event_id=f"{event.tournament_id}:{event.seq}",
            )
            self.store.mark_published([(event.tournament_id, event.seq)])
            metrics.EVENTS_PUBLISHED.inc()
        return len(batch)


__all__ = ["EventRelay", "event_type", "message"]
