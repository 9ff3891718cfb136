"""Fakes around the connection monitor's servicer for the fast tier."""

from __future__ import annotations

from connection_monitor.publisher import ConnectionEvents
from connection_monitor.tracker import Change


class RecordedEvents(ConnectionEvents):
    """The connection events, kept in order instead of published, each with the sequence its
    envelope would carry (``sequences``: player id and sequence, in order)."""

    def __init__(self) -> None:
        super().__init__(None, "test.connection.events")
        self.changes: list[Change] = []
        self.sequences: list[tuple[str, int]] = []

    def publish(self, change: Change) -> None:
        self.changes.append(change)
        self.sequences.append((change.player_id, self._sequence(change.player_id)))
