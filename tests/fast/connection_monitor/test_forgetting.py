"""Fast tier: the connection monitor keeps in memory only what a rule still needs. A player
disconnected for longer than ``forget_after`` leaves memory (the sweep, ListConnections and the
event sequences) for the archive on disk, and every later answer about him — GetConnection, his
next heartbeat's RECONNECTED with his real time offline, his events' rising sequence — is the one a
monitor that never forgets gives; a player never seen is still NOT_FOUND. The all-in allowance keeps
a player's uses while one counts in the window (rules/002), and an idempotency key answers
``replayed`` however old."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardroom.runtime import errors
from cardroom.runtime.clock import ManualClock
from cardroom.v1 import connection_monitor_pb2 as pb, connection_monitor_pb2_grpc as pb_grpc
from connection_monitor.allowance import AllowanceBook
from connection_monitor.archive import PresenceArchive
from connection_monitor.service import ConnectionMonitorService
from connection_monitor.tracker import ConnectionTracker, State
from tests.fast.connection_monitor.conftest import SILENCE, GatewayStream, Monitor, beat
from tests.fast.connection_monitor.fakes import RecordedEvents

#: How long a disconnected player stays in memory, in the forgetting monitor.
FORGET = 3600.0
DAY = 24 * 3600.0


@pytest.fixture
def forgetting(tmp_path: Path) -> Iterator[Monitor]:
    """The conftest's monitor, with an archive and players forgotten after :data:`FORGET`."""
    clock = ManualClock()
    book = AllowanceBook(tmp_path / "allowance.sqlite3", per_window=2, window_seconds=int(DAY))
    archive = PresenceArchive(tmp_path / "allowance.sqlite3")
    tracker = ConnectionTracker(SILENCE, forget_after=FORGET)
    events = RecordedEvents()
    yield Monitor(ConnectionMonitorService(tracker, book, events, clock=clock.now, archive=archive), clock, events)
    archive.close()
    book.close()


async def answer(stub: pb_grpc.ConnectionMonitorStub, player: str) -> Any:
    """GetConnection's answer: the connection, or the error's code, reason and details."""
    try:
        return await stub.GetConnection(pb.GetConnectionRequest(player_id=player))
    except grpc.aio.AioRpcError as err:
        return (err.code(), errors.reason_of(err), err.details())


def test_a_player_disconnected_longer_than_forget_after_leaves_memory(forgetting: Monitor) -> None:
    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        stream = GatewayStream(forgetting, stub)
        await stream.send(beat("ann", "bob"))
        assert sorted(forgetting.silent_for(SILENCE + 1)) == [("ann", State.DISCONNECTED), ("bob", State.DISCONNECTED)]
        forgetting.clock.advance(FORGET - 1)
        await stream.send(beat("bob"))  # bob is back; ann has been disconnected for FORGET - 1
        assert forgetting.silent_for(1) == [] and "ann" in forgetting.service.tracker.players  # FORGET: not more
        forgetting.clock.advance(59)
        await stream.send(beat("bob"))
        assert forgetting.silent_for(1) == []  # the next pass: ann is forgotten, bob (online) is not
        assert list(forgetting.service.tracker.players) == ["bob"]
        listed = await stub.ListConnections(pb.ListConnectionsRequest())
        assert ([c.player_id for c in listed.connections], listed.connected) == (["bob"], 1)
        assert "ann" not in forgetting.events._last_sequence and "bob" in forgetting.events._last_sequence
        await stream.close()

    forgetting.run(scenario)


def test_a_forgotten_player_is_answered_as_if_never_forgotten(forgetting: Monitor, monitor: Monitor) -> None:
    """The same story on a monitor that forgets and on one that never does: the same answers."""

    def story(m: Monitor) -> list[Any]:
        seen: list[Any] = []

        async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
            start = m.clock.now()
            stream = GatewayStream(m, stub)
            await stream.send(beat("ann"))
            seen.append(m.silent_for(SILENCE + 1))
            seen.append(m.silent_for(FORGET + 100))
            seen.append("ann" in m.service.tracker.players)
            seen.append(await answer(stub, "ann"))  # DISCONNECTED since start + 11, last seen at start
            seen.append(await answer(stub, "nobody"))  # never seen: NOT_FOUND
            m.clock.advance(5)
            await stream.send(beat("ann", session="gw/2"))  # back: RECONNECTED after all his time offline
            back = m.events.changes[-1]
            seen.append((back.state, back.at - start, back.offline_seconds, back.last_seen - start, back.session_id))
            seen.append(await answer(stub, "ann"))
            seen.append(m.silent_for(SILENCE + 1))  # and silence disconnects him again
            seen.append(await answer(stub, "nobody"))  # asking recorded nobody
            await stream.close()

        m.run(scenario)
        return seen

    forgot, kept = story(forgetting), story(monitor)
    assert (forgot[2], kept[2]) == (False, True)  # forgotten in one monitor only...
    del forgot[2], kept[2]
    assert forgot == kept  # ...and nothing else tells them apart
    assert kept[4][:2] == (State.RECONNECTED, SILENCE + 1 + FORGET + 100 + 5)
    assert kept[4][2] == FORGET + 100 + 5 and kept[4][4] == "gw/2-ann"
    assert kept[3][:2] == (grpc.StatusCode.NOT_FOUND, "NEVER_SEEN")
    # his event sequence still rises across the gap, though the forgetting monitor dropped his last one
    ann = [seq for player, seq in forgetting.events.sequences if player == "ann"]
    assert len(ann) == 4 and ann == sorted(set(ann))


def test_a_forgotten_player_is_known_after_a_restart(tmp_path: Path, forgetting: Monitor) -> None:
    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        stream = GatewayStream(forgetting, stub)
        await stream.send(beat("ann"))
        await stream.close()
        forgetting.silent_for(SILENCE + 1)
        forgetting.silent_for(FORGET + 1)
        assert "ann" not in forgetting.service.tracker.players

    forgetting.run(scenario)
    archive = PresenceArchive(tmp_path / "allowance.sqlite3")  # a new process on the same file
    try:
        found = archive.find("ann")
        assert found is not None and found.state is State.DISCONNECTED and found.session_id == "gw/1-ann"
        assert archive.find("nobody") is None
    finally:
        archive.close()


def test_a_player_back_in_memory_leaves_the_archive(forgetting: Monitor) -> None:
    """Memory has the truth once he is back: the archive no longer holds his old disconnect."""
    archive = forgetting.service.archive
    assert archive is not None

    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        stream = GatewayStream(forgetting, stub)
        await stream.send(beat("ann"))
        forgetting.silent_for(SILENCE + 1)
        forgetting.silent_for(FORGET + 1)
        assert archive.find("ann") is not None
        forgetting.clock.advance(1)
        await stream.send(beat("ann"))
        assert (forgetting.state("ann"), archive.find("ann")) == (State.RECONNECTED, None)
        await stream.close()

    forgetting.run(scenario)


def test_the_sweep_drops_spent_allowances_and_keeps_those_that_count(monitor: Monitor) -> None:
    book = monitor.service.book

    async def scenario(stub: pb_grpc.ConnectionMonitorStub) -> None:
        start = monitor.clock.now()
        await stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id="ann", key="h1:1"))
        monitor.clock.advance(100)
        await stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id="bob", key="h2:1"))
        monitor.silent_for(DAY - 101)  # ann's use still counts, for one more second
        assert sorted(book.rules.uses) == ["ann", "bob"]
        monitor.silent_for(60)  # the next pass: ann's use has left the window, bob's has not
        assert list(book.rules.uses) == ["bob"]
        ann = await stub.GetAllInAllowance(pb.GetAllInAllowanceRequest(player_id="ann"))
        assert (ann.left, ann.HasField("next_restore_at")) == (2, False)  # as a player who never used one
        bob = await stub.GetAllInAllowance(pb.GetAllInAllowanceRequest(player_id="bob"))
        assert (bob.left, bob.next_restore_at.seconds) == (1, int(start + 100 + DAY))
        # a key answers replayed however old, and counts nothing again
        again = await stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id="ann", key="h1:1"))
        assert (again.replayed, again.allowance.left) == (True, 2)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id="bob", key="h1:1"))
        assert errors.reason_of(caught.value) == "KEY_REUSED"
        # and no key is held in memory for it
        assert not any(isinstance(v, dict) and "h1:1" in v for v in vars(book).values())

    monitor.run(scenario)


def test_a_start_loads_only_the_uses_still_in_the_window_and_old_keys_still_replay(tmp_path: Path) -> None:
    """Every use stays on disk (its key answers ``replayed`` however old); a start read all of them into
    memory, to be dropped by the first sweep. Now it reads those that count (rules/002: 24 hours)."""
    path = tmp_path / "allowance.sqlite3"
    book = AllowanceBook(path, per_window=2, window_seconds=100, now=0.0)
    book.consume("ann", "h1:ann", 10.0)
    book.consume("ann", "h2:ann", 50.0)
    book.consume("bob", "h1:bob", 20.0)
    book.close()

    book = AllowanceBook(path, per_window=2, window_seconds=100, now=120.0)
    assert book.rules.uses == {"ann": [50.0]}  # ann's use at 10 and bob's at 20 left the window
    assert book.status("ann", 120.0).left == 1 and book.status("bob", 120.0).left == 2
    status, replayed = book.consume("bob", "h1:bob", 121.0)  # his old key: the same answer, nothing used
    assert replayed and status.left == 2
    with pytest.raises(ValueError):
        book.consume("ann", "h1:bob", 121.0)  # and still his
    book.close()
