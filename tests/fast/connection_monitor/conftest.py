"""The connection monitor's servicer in process: the real tracker, allowance book (SQLite in tmp) and
servicer on an in-process gRPC server, a manual clock, and the connection events it would publish
recorded instead of sent to Kafka."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardroom.runtime.clock import ManualClock
from cardroom.v1 import connection_monitor_pb2 as pb, connection_monitor_pb2_grpc as pb_grpc
from connection_monitor.allowance import AllowanceBook
from connection_monitor.service import ConnectionMonitorService
from connection_monitor.tracker import ConnectionTracker, State
from tests.fast.connection_monitor.fakes import RecordedEvents
from tests.fast.inproc import serving

#: The silence that disconnects, in the fixture's monitor.
SILENCE = 10.0


@dataclass
class Monitor:
    service: ConnectionMonitorService
    clock: ManualClock
    events: RecordedEvents

    def run(self, scenario: Callable[[pb_grpc.ConnectionMonitorStub], Coroutine[Any, Any, None]]) -> None:
        """``scenario`` with a client of the monitor served in process."""

        async def main() -> None:
            add = pb_grpc.add_ConnectionMonitorServicer_to_server
            async with serving(add, self.service) as address, grpc.aio.insecure_channel(address) as channel:
                await asyncio.wait_for(scenario(pb_grpc.ConnectionMonitorStub(channel)), 20)

        asyncio.run(main())

    def seen(self, player: str) -> float | None:
        """The player's last-seen time (None: never seen)."""
        presence = self.service.tracker.players.get(player)
        return None if presence is None else presence.last_seen

    def state(self, player: str) -> State | None:
        presence = self.service.tracker.players.get(player)
        return None if presence is None else presence.state

    def silent_for(self, seconds: float) -> list[tuple[str, State]]:
        """Let ``seconds`` pass and sweep: the changes the sweep published."""
        before = len(self.events.changes)
        self.clock.advance(seconds)
        self.service.sweep()
        return [(c.player_id, c.state) for c in self.events.changes[before:]]


def beat(*players: str, session: str = "gw/1") -> pb.PresenceBeat:
    return pb.PresenceBeat(alive=[pb.Heartbeat(player_id=p, session_id=f"{session}-{p}") for p in players])


class GatewayStream:
    """One GatewayHeartbeats stream fed beat by beat: :meth:`send` returns once the monitor took the beat."""

    def __init__(self, monitor: Monitor, stub: pb_grpc.ConnectionMonitorStub) -> None:
        self.monitor = monitor
        self.queue: asyncio.Queue[pb.PresenceBeat | None] = asyncio.Queue()
        self.call = stub.GatewayHeartbeats(self._messages())

    async def _messages(self) -> AsyncIterator[pb.PresenceBeat]:
        while (message := await self.queue.get()) is not None:
            yield message

    async def send(self, message: pb.PresenceBeat) -> None:
        """Send ``message`` and wait until each player it lists was seen now (the clock must have moved)."""
        self.queue.put_nowait(message)
        now = self.monitor.clock.now()
        while not all(self.monitor.seen(entry.player_id) == now for entry in message.alive):
            if self.call.done():  # the monitor ended the stream: its status, at once
                await self.call
                raise AssertionError("the monitor ended the stream without taking the beat")
            await asyncio.sleep(0.005)

    async def close(self) -> pb.HeartbeatsSummary:
        self.queue.put_nowait(None)
        return await asyncio.wait_for(self.call, 5)


@pytest.fixture
def monitor(tmp_path: Path) -> Iterator[Monitor]:
    clock = ManualClock()
    book = AllowanceBook(tmp_path / "allowance.sqlite3", per_window=2, window_seconds=24 * 3600)
    events = RecordedEvents()
    yield Monitor(ConnectionMonitorService(ConnectionTracker(SILENCE), book, events, clock=clock.now), clock, events)
    book.close()
