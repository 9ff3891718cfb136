"""Fast tier: the connection monitor's GatewayHeartbeats (one stream per gateway process, a message
per period listing every player whose stream is open there) on the real servicer and tracker with a
manual clock — each listed player refreshed and no other, bad input refused with nothing changed,
closing the stream disconnecting nobody and silence longer than the limit still disconnecting."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from cardroom.runtime import errors
from cardroom.v1 import connection_monitor_pb2 as pb, connection_monitor_pb2_grpc as pb_grpc
from connection_monitor import service as monitor_service
from connection_monitor.tracker import State
from tests.fast.connection_monitor.conftest import SILENCE, GatewayStream, Monitor, beat

CONNECTED, DISCONNECTED, RECONNECTED = State.CONNECTED, State.DISCONNECTED, State.RECONNECTED


def heartbeats_counted() -> float:
    return REGISTRY.get_sample_value("connection_monitor_heartbeats_total") or 0.0


async def failure(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value


def test_a_beat_refreshes_every_player_it_lists_and_no_other(monitor: Monitor) -> None:
    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        start, counted = monitor.clock.now(), heartbeats_counted()
        stream = GatewayStream(monitor, stub)
        await stream.send(beat("ann", "bob"))
        assert [(c.player_id, c.state) for c in monitor.events.changes] == [("ann", CONNECTED), ("bob", CONNECTED)]
        monitor.clock.advance(6)
        await stream.send(beat("ann", "cy", session="gw/2"))
        assert (monitor.seen("ann"), monitor.seen("bob"), monitor.seen("cy")) == (start + 6, start, start + 6)
        assert monitor.service.tracker.players["ann"].session_id == "gw/2-ann"  # the latest entry's session
        summary = await stream.close()
        assert (summary.received, summary.players) == (2, 4)
        assert heartbeats_counted() - counted == 4  # one per listed player, as a Heartbeats message counts
        # bob, left off the second beat, is the one silent for longer than the limit
        assert monitor.silent_for(SILENCE - 6 + 0.5) == [("bob", DISCONNECTED)]
        assert (monitor.state("ann"), monitor.state("cy")) == (CONNECTED, CONNECTED)

    monitor.run(scenario)


def test_closing_the_stream_disconnects_nobody_and_silence_still_does(monitor: Monitor) -> None:
    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        stream = GatewayStream(monitor, stub)
        await stream.send(beat("ann"))
        assert (await stream.close()).received == 1
        assert monitor.silent_for(SILENCE) == []  # closed, and silent for exactly the limit: still connected
        assert monitor.silent_for(0.5) == [("ann", DISCONNECTED)]
        assert monitor.silent_for(60) == []  # disconnected once
        again = GatewayStream(monitor, stub)
        await again.send(beat("ann"))
        back = monitor.events.changes[-1]
        assert (back.player_id, back.state, back.offline_seconds) == ("ann", RECONNECTED, 60)
        await again.close()

    monitor.run(scenario)


@pytest.mark.parametrize(
    ("players", "field"),
    [
        (("dan", ""), "alive[1].player_id"),
        (("x" * 33, "dan"), "alive[0].player_id"),
        (("dan", "ann", "bob smith"), "alive[2].player_id"),
    ],
)
def test_a_bad_player_id_refuses_the_whole_beat(monitor: Monitor, players: tuple[str, ...], field: str) -> None:
    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        stream = GatewayStream(monitor, stub)
        await stream.send(beat("ann"))
        seen = monitor.seen("ann")
        monitor.clock.advance(5)
        stream.queue.put_nowait(beat(*players))
        err = await failure(stream.close())
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.INVALID_ARGUMENT, errors.INVALID_ID)
        assert [v.field for v in errors.violations_of(err)] == [field]
        assert err.details().startswith(f"{field}: ") and "is not a player id" in err.details()
        # nothing changed: the valid entries of the refused beat were not applied either
        assert (monitor.seen("ann"), monitor.seen("dan")) == (seen, None)
        assert [c.player_id for c in monitor.events.changes] == ["ann"]

    monitor.run(scenario)


def test_a_beat_over_the_entry_cap_is_refused_whole(monitor: Monitor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(monitor_service, "PRESENCE_BEAT_MAX", 3)

    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        stream = GatewayStream(monitor, stub)
        await stream.send(beat("a1", "a2", "a3"))  # the cap itself is fine
        monitor.clock.advance(1)
        stream.queue.put_nowait(beat("a1", "b1", "b2", "b3"))
        err = await failure(stream.close())
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.INVALID_ARGUMENT, "TOO_MANY_ENTRIES")
        assert err.details().startswith("alive: at most 3 entries per message, got 4")
        assert [v.field for v in errors.violations_of(err)] == ["alive"]
        assert monitor.seen("a1") == monitor.clock.now() - 1 and monitor.seen("b1") is None

    monitor.run(scenario)


def test_an_empty_beat_is_accepted_and_refreshes_nobody(monitor: Monitor) -> None:
    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        stream = GatewayStream(monitor, stub)
        await stream.send(beat("ann"))
        seen = monitor.seen("ann")
        monitor.clock.advance(1)
        stream.queue.put_nowait(pb.PresenceBeat())  # a gateway with no open stream still beats
        summary = await stream.close()
        assert (summary.received, summary.players, monitor.seen("ann")) == (2, 1, seen)

    monitor.run(scenario)
