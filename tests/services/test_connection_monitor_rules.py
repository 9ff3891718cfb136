"""Connection tracking and the durable all-in allowance with time as an input (no process)."""

from __future__ import annotations

from pathlib import Path

import pytest

from connection_monitor.allowance import AllowanceBook, NoneLeft
from connection_monitor.tracker import ConnectionTracker, State


def test_connected_then_silent_then_reconnected() -> None:
    tracker = ConnectionTracker(silence=5)
    first = tracker.heartbeat("alice", 100.0, "s1")
    assert first is not None and first.state is State.CONNECTED
    assert tracker.heartbeat("alice", 104.0) is None
    assert tracker.sweep(109.0) == []  # 5 s of silence is not more than 5
    [gone] = tracker.sweep(109.5)
    assert gone.state is State.DISCONNECTED and gone.at == 109.5 and gone.last_seen == 104.0
    assert tracker.sweep(200.0) == []  # disconnected once
    assert tracker.connected_count() == 0
    back = tracker.heartbeat("alice", 130.0, "s2")
    assert back is not None and back.state is State.RECONNECTED
    assert back.offline_seconds == pytest.approx(20.5) and back.session_id == "s2"
    assert tracker.connected_count() == 1


def test_players_are_independent() -> None:
    tracker = ConnectionTracker(silence=1)
    tracker.heartbeat("a", 0.0)
    tracker.heartbeat("b", 0.0)
    tracker.heartbeat("b", 1.0)
    assert [c.player_id for c in tracker.sweep(1.5)] == ["a"]
    assert tracker.connected_count() == 1


def test_allowance_rolls_resets_and_survives_restart(tmp_path: Path) -> None:
    path = tmp_path / "a.sqlite3"
    book = AllowanceBook(path, per_window=2, window_seconds=100)
    assert book.status("p", 0).left == 2
    status, replayed = book.consume("p", "h1:1", 10)
    assert (status.left, replayed, status.next_restore_at) == (1, False, 110)
    assert book.consume("p", "h1:1", 11)[1] is True  # same key: counted once
    book.consume("p", "h2:1", 20)
    with pytest.raises(NoneLeft):
        book.consume("p", "h3:1", 30)
    with pytest.raises(ValueError):
        book.consume("q", "h1:1", 30)  # key belongs to p
    book.close()

    book = AllowanceBook(path, per_window=2, window_seconds=100)
    assert book.status("p", 50).left == 0  # durable
    assert book.status("p", 110).left == 1  # the use at 10 left the window
    assert book.status("p", 120).left == 2
    book.consume("p", "h4:1", 200)
    assert book.reset("p", 201).left == 2
    book.close()
    book = AllowanceBook(path, per_window=2, window_seconds=100)
    assert book.status("p", 202).left == 2  # the reset is durable too
    book.close()
