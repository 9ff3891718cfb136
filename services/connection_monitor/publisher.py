"""Publish connection changes to Kafka, keyed by player id, without blocking the event loop."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from cardroom.runtime.events import EventProducer, make_envelope
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import connection_monitor_pb2 as pb
from connection_monitor import metrics
from connection_monitor.tracker import Change, Presence, State

log = logging.getLogger("connection_monitor.events")

EVENT_TYPE = "cardroom.connection_monitor.player_connection.v1"
_STATE = {
    State.CONNECTED: pb.CONNECTION_STATE_CONNECTED,
    State.DISCONNECTED: pb.CONNECTION_STATE_DISCONNECTED,
    State.RECONNECTED: pb.CONNECTION_STATE_RECONNECTED,
}


def to_proto(p: Change | Presence) -> pb.PlayerConnection:
    offline = p.offline_seconds if p.state is State.RECONNECTED else 0.0
    return pb.PlayerConnection(
        player_id=p.player_id,
        state=_STATE[p.state],
        changed_at=timestamp(p.changed_at if isinstance(p, Presence) else p.at),
        last_seen=timestamp(p.last_seen),
        session_id=p.session_id,
        offline_ms=int(offline * 1000),
    )


class ConnectionEvents:
    """Queue each change on an idempotent producer; failures are logged and counted.

    A player's events carry a rising ``sequence``: the wall clock in nanoseconds, or one more than
    his last when the clock has not moved past it (two events in one nanosecond). The last one is
    kept only for the players the tracker still knows (:meth:`forget`): a player forgotten has been
    silent for ``CONNECTION_FORGET_SECONDS`` (a day by default), so the clock is far past his last
    sequence and his next event's is higher without it."""

    def __init__(self, bootstrap: str | None, topic: str) -> None:
        self.topic = topic
        self.producer = EventProducer(bootstrap, "connection_monitor") if bootstrap else None
        self._last_sequence: dict[str, int] = {}

    def _sequence(self, player_id: str) -> int:
        seq = max(time.time_ns(), self._last_sequence.get(player_id, 0) + 1)
        self._last_sequence[player_id] = seq
        return seq

    def forget(self, player_ids: Iterable[str]) -> None:
        """Drop the last sequence of players forgotten by the tracker (see the class docstring)."""
        for player_id in player_ids:
            self._last_sequence.pop(player_id, None)

    def publish(self, change: Change) -> None:
        if self.producer is None:
            return
        envelope = make_envelope(
            type=EVENT_TYPE,
            source="connection_monitor",
            key=change.player_id,
            sequence=self._sequence(change.player_id),
            payload=to_proto(change),
            at=change.at,
        )
        future = self.producer.send(self.topic, envelope)
        future.add_callback(self._published, time.perf_counter())
        future.add_errback(self._failed, change)

    @staticmethod
    def _published(sent: float, _metadata: object) -> None:  # kafka-python: partial(f, *args)(value)
        metrics.EVENTS_PUBLISHED.inc()
        metrics.PUBLISH_SECONDS.observe(time.perf_counter() - sent)

    @staticmethod
    def _failed(change: Change, error: BaseException) -> None:  # partial(f, change)(error), as above
        metrics.EVENTS_FAILED.inc()
        log.error("connection event not published", extra={"player_id": change.player_id, "error": str(error)})

    def close(self) -> None:
        if self.producer is not None:
            self.producer.flush(5)
            self.producer.close()
