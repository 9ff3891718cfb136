"""Fast tier: the gateway's presence (issue 16) — one heartbeat stream per gateway process to the
connection monitor (GatewayHeartbeats, here an in-memory fake), one message per period listing every
player with an open session: a closed session's player no longer listed, a player with two sessions
listed while either is open, a newly listed player sent at once, the stream opened again with a
growing pause after the monitor restarts, and each period's players split to fit the monitor's cap."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from cardroom.runtime import deadlines
from cardroom.v1.connection_monitor_pb2_grpc import ConnectionMonitorStub, add_ConnectionMonitorServicer_to_server
from connection_monitor.allowance import AllowanceBook
from connection_monitor.service import PRESENCE_BEAT_MAX, ConnectionMonitorService
from connection_monitor.tracker import ConnectionTracker
from gateway import presence as presence_module
from gateway.presence import Presence
from tests.fast.connection_monitor.fakes import RecordedEvents
from tests.fast.gateway.fakes import FakeMonitor, rpc_error

PERIOD = 0.05


@dataclass
class Beating:
    """A started presence beating to a fake monitor."""

    monitor: FakeMonitor
    presence: Presence

    def run(self, scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
        async def main() -> None:
            self.presence.start()
            try:
                await asyncio.wait_for(scenario(), 20)
            finally:
                await self.presence.stop()
            streams = self.monitor.streams
            await asyncio.sleep(3 * PERIOD)
            assert self.monitor.streams == streams  # stopped: never opened again

        asyncio.run(main())

    async def until(self, done: Callable[[], bool]) -> None:
        await until(done)

    async def periods(self, count: int = 3) -> list[set[str]]:
        """The players of each beat sent in the next ``count`` periods (at least ``count - 1`` beats)."""
        since = len(self.monitor.batches)
        await asyncio.sleep(count * self.presence.period)
        await self.until(lambda: len(self.monitor.batches) - since >= count - 1)
        return self.monitor.listed(since)


async def until(done: Callable[[], bool]) -> None:
    while not done():
        await asyncio.sleep(0.005)


def gauge(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


@pytest.fixture
def beating() -> Iterator[Beating]:
    monitor = FakeMonitor()
    yield Beating(monitor, Presence(monitor, PERIOD))  # type: ignore[arg-type]


def test_the_players_of_open_sessions_are_listed_every_period_and_a_closed_one_no_more(beating: Beating) -> None:
    async def scenario() -> None:
        presence, monitor = beating.presence, beating.monitor
        presence.enter("ann", "peer/1")
        presence.enter("bob", "peer/2")
        assert gauge("gateway_present_players") == 2
        await beating.until(lambda: {"ann", "bob"} in monitor.listed())
        assert {(b.player_id, b.session_id) for b in monitor.beats} == {("ann", "peer/1"), ("bob", "peer/2")}
        assert all(beat == {"ann", "bob"} for beat in await beating.periods())  # every period, both
        presence.leave("bob", "peer/2")
        assert gauge("gateway_present_players") == 1
        assert all(beat == {"ann"} for beat in await beating.periods())
        presence.leave("ann", "peer/1")
        assert all(beat == set() for beat in await beating.periods())  # nobody left: empty beats, one stream
        assert monitor.streams == 1

    beating.run(scenario)


def test_a_player_with_two_sessions_is_listed_while_either_is_open(beating: Beating) -> None:
    async def scenario() -> None:
        presence, monitor = beating.presence, beating.monitor
        presence.enter("ann", "peer/1")
        presence.enter("ann", "peer/2")  # e.g. the session taking over, before the first one has closed
        await beating.until(lambda: len(monitor.batches) > 2)
        listed = [len(beat.alive) for beat in monitor.batches if beat.alive]
        assert listed and set(listed) == {1}  # listed once per beat
        assert monitor.beats[-1].session_id == "peer/2"  # with the latest session
        presence.leave("ann", "peer/1")
        assert all(beat == {"ann"} for beat in await beating.periods())
        presence.enter("ann", "peer/3")
        presence.leave("ann", "peer/3")  # the newer one closed first: the older one still lists him
        since = len(monitor.batches)
        await beating.periods()
        assert {b.session_id for beat in monitor.batches[since:] for b in beat.alive} == {"peer/2"}
        presence.leave("ann", "peer/2")
        presence.leave("ann", "peer/2")  # twice: no harm
        assert all(beat == set() for beat in await beating.periods())

    beating.run(scenario)


def test_a_newly_listed_player_is_sent_at_once_not_at_the_next_period() -> None:
    monitor = FakeMonitor()
    beating = Beating(monitor, Presence(monitor, 30.0))  # type: ignore[arg-type]

    async def scenario() -> None:
        await beating.until(lambda: monitor.listed() == [set()])  # the stream's first beat: nobody yet
        beating.presence.enter("ann", "peer/1")
        beating.presence.enter("ann", "peer/2")
        await asyncio.wait_for(beating.until(lambda: len(monitor.batches) == 2), 2)
        assert monitor.listed() == [set(), {"ann"}]
        beating.presence.enter("bob", "peer/3")
        beating.presence.leave("bob", "peer/3")  # gone before it was sent: not sent
        beating.presence.enter("cy", "peer/4")
        await asyncio.wait_for(beating.until(lambda: len(monitor.batches) == 3), 2)
        assert monitor.listed(2) == [{"cy"}]

    beating.run(scenario)


def test_the_stream_is_opened_again_with_a_growing_pause_after_the_monitor_restarts(beating: Beating) -> None:
    beating.presence.period = 0.4

    async def scenario() -> None:
        presence, monitor = beating.presence, beating.monitor
        failures = gauge("gateway_heartbeat_failures_total")
        presence.enter("ann", "peer/1")
        await beating.until(lambda: {"ann"} in monitor.listed())
        monitor.down = True  # the monitor restarts: the open stream fails at its next beat
        await asyncio.sleep(1.0)
        attempts = monitor.streams
        # paused 0.1, 0.2, 0.4, 0.4 s ...: a few attempts, not one per event-loop turn
        assert 2 <= attempts <= 5, attempts
        assert gauge("gateway_heartbeat_failures_total") - failures == attempts
        presence.enter("bob", "peer/2")  # while it is down
        since = len(monitor.batches)
        monitor.down = False
        await asyncio.wait_for(beating.until(lambda: len(monitor.batches) > since), 2)
        assert monitor.listed(since)[0] == {"ann", "bob"}  # the new stream's first beat lists everyone
        assert monitor.streams == attempts + 1

    beating.run(scenario)


def test_an_unexpected_error_does_not_end_the_beating(beating: Beating) -> None:
    beating.monitor.fail_with = [RuntimeError("a bug"), rpc_error(grpc.StatusCode.UNAVAILABLE, "down")]

    async def scenario() -> None:
        beating.presence.enter("ann", "peer/1")
        await beating.until(lambda: {"ann"} in beating.monitor.listed())
        assert beating.monitor.streams == 3

    beating.run(scenario)


def test_a_period_s_players_are_split_to_fit_the_monitor_s_cap(
    beating: Beating, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert presence_module.BEAT_PLAYERS <= PRESENCE_BEAT_MAX
    monkeypatch.setattr(presence_module, "BEAT_PLAYERS", 2)

    async def scenario() -> None:
        players = [f"p{i}" for i in range(5)]
        for p in players:
            beating.presence.enter(p, f"peer/{p}")
        await beating.until(lambda: len(beating.monitor.batches) >= 6)
        batches = beating.monitor.listed()
        assert all(len(beat) <= 2 for beat in batches)
        # the last full period: three messages, every player once
        last = next(i for i in range(len(batches) - 1, -1, -1) if len(batches[i]) == 1)
        period = batches[last - 2 : last + 1]
        assert sorted(p for beat in period for p in beat) == players

    beating.run(scenario)


def test_with_the_real_monitor_the_players_are_back_after_it_restarts(tmp_path: Path) -> None:
    """The real servicer on a real in-process server, stopped and started again on the same port
    (its state lost, as after a crash): the gateway's channel and stream find it again."""

    books: list[AllowanceBook] = []

    async def serve(port: int) -> tuple[grpc.aio.Server, ConnectionTracker, int]:
        tracker = ConnectionTracker(silence=10.0)
        book = AllowanceBook(tmp_path / f"allowance-{len(books)}.sqlite3", per_window=2, window_seconds=3600)
        books.append(book)
        server = grpc.aio.server()
        add_ConnectionMonitorServicer_to_server(ConnectionMonitorService(tracker, book, RecordedEvents()), server)
        port = server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        return server, tracker, port

    async def scenario() -> None:
        server, tracker, port = await serve(0)
        channel = deadlines.channel(f"127.0.0.1:{port}", tls=None)
        presence = Presence(ConnectionMonitorStub(channel), 0.1)
        presence.start()
        try:
            presence.enter("ann", "peer/1")
            await until(lambda: "ann" in tracker.players)
            await server.stop(0)
            await asyncio.sleep(0.5)  # down: the stream failed, each new one fails
            server, tracker, _ = await serve(port)
            presence.enter("bob", "peer/2")
            await asyncio.wait_for(until(lambda: {"ann", "bob"} <= set(tracker.players)), 10)
            assert tracker.players["ann"].session_id == "peer/1"
        finally:
            await presence.stop()
            await server.stop(0)
            await channel.close()
            for book in books:
                book.close()

    asyncio.run(asyncio.wait_for(scenario(), 20))


def test_without_a_monitor_nothing_is_started_and_the_sessions_are_still_counted() -> None:
    async def scenario() -> None:
        presence = Presence(None, PERIOD)
        presence.start()
        assert presence._task is None
        presence.enter("ann", "peer/1")
        assert [b.player_id for b in presence.alive()] == ["ann"]
        await presence.stop()

    asyncio.run(scenario())


def test_the_period_s_messages_are_made_once_until_a_session_opens_or_ends() -> None:
    """At 6,000 players the full beat was made anew every period (docs/capacity.md): it is kept while
    nobody comes or goes, and made again with the latest session of each player when one does."""
    presence = Presence(None, PERIOD)
    presence.enter("ann", "peer/1")
    presence.enter("bob", "peer/2")
    first = presence.period_beats()
    assert presence.period_beats() is first
    assert [(b.player_id, b.session_id) for beat in first for b in beat.alive] == [("ann", "peer/1"), ("bob", "peer/2")]
    presence.enter("ann", "peer/3")  # a second session: his entry carries the latest
    second = presence.period_beats()
    assert second is not first
    assert [(b.player_id, b.session_id) for beat in second for b in beat.alive] == [
        ("ann", "peer/3"),
        ("bob", "peer/2"),
    ]
    presence.leave("bob", "peer/2")
    assert [b.player_id for beat in presence.period_beats() for b in beat.alive] == ["ann"]
    presence.leave("ann", "peer/3")
    presence.leave("ann", "peer/1")
    assert [len(beat.alive) for beat in presence.period_beats()] == [0]  # nobody: one empty message still beats
