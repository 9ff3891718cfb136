"""The connection monitor as a real process with real Kafka: heartbeats (a player's stream, or a
gateway's beat listing its players) make players connected, silence disconnects them, the next
heartbeat reconnects them (events on Kafka keyed by player);
the all-in allowance is idempotent, rolls, resets, survives a restart; bad input is rejected."""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Iterator

import grpc
import pytest
from kafka import KafkaConsumer

from cardroom.runtime.events import decode_envelope, unpack
from cardroom.v1 import connection_monitor_pb2 as pb, connection_monitor_pb2_grpc as pb_grpc
from tests.services.procs import ServiceProcess, create_topic, metric_value


@pytest.fixture(scope="module")
def monitor(kafka) -> Iterator[tuple[ServiceProcess, pb_grpc.ConnectionMonitorStub, str]]:
    topic = f"test.connection.events.{uuid.uuid4().hex[:8]}"
    create_topic(kafka.bootstrap, topic)
    proc = ServiceProcess(
        "connection_monitor",
        {
            "KAFKA_BOOTSTRAP": kafka.bootstrap,
            "CONNECTION_EVENTS_TOPIC": topic,
            "CONNECTION_SILENCE_SECONDS": "0.6",
            "CONNECTION_SWEEP_SECONDS": "0.1",
            # long enough for a restart on a loaded machine (the durability check below), short
            # enough to watch the allowance roll back
            "ALL_IN_WINDOW_SECONDS": "15",
        },
    ).start()
    with grpc.insecure_channel(proc.address) as channel:
        yield proc, pb_grpc.ConnectionMonitorStub(channel), topic
    assert proc.stop() == 0


class Beats:
    """A heartbeat stream fed from a queue (None ends it)."""

    def __init__(self, stub: pb_grpc.ConnectionMonitorStub) -> None:
        self.queue: queue.Queue[pb.Heartbeat | None] = queue.Queue()
        self.result: list = []
        self.thread = threading.Thread(
            target=lambda: self.result.append(stub.Heartbeats(iter(self.queue.get, None), timeout=30))
        )
        self.thread.start()

    def send(self, player: str, session: str = "s") -> None:
        self.queue.put(pb.Heartbeat(player_id=player, session_id=session))

    def close(self) -> pb.HeartbeatsSummary:
        self.queue.put(None)
        self.thread.join(30)
        return self.result[0]


def _events(
    bootstrap: str, topic: str, player: str, count: int, timeout: float = 20
) -> list[tuple[str, pb.PlayerConnection]]:
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=500, group_id=None
    )
    found: list[tuple[str, pb.PlayerConnection]] = []
    deadline = time.monotonic() + timeout
    try:
        while len(found) < count and time.monotonic() < deadline:
            for record in consumer:
                if record.key.decode() != player:
                    continue
                envelope = decode_envelope(record.value)
                found.append((envelope.type, unpack(envelope, pb.PlayerConnection)))
    finally:
        consumer.close()
    return found


def _wait_state(stub, player: str, state: int, timeout: float = 5) -> pb.PlayerConnection:
    deadline = time.monotonic() + timeout
    while True:
        conn = stub.GetConnection(pb.GetConnectionRequest(player_id=player), timeout=5)
        if conn.state == state or time.monotonic() > deadline:
            return conn
        time.sleep(0.05)


def test_heartbeats_silence_and_reconnect_publish_events(monitor, kafka) -> None:
    proc, stub, topic = monitor
    player = f"p-{uuid.uuid4().hex[:6]}"
    beats = Beats(stub)
    for _ in range(3):
        beats.send(player, "sess-1")
        time.sleep(0.1)
    assert _wait_state(stub, player, pb.CONNECTION_STATE_CONNECTED).state == pb.CONNECTION_STATE_CONNECTED
    listed = stub.ListConnections(pb.ListConnectionsRequest(), timeout=5)
    assert player in {c.player_id for c in listed.connections} and listed.connected >= 1
    assert beats.close().received == 3  # closing the stream is not a disconnect...
    gone = _wait_state(stub, player, pb.CONNECTION_STATE_DISCONNECTED)
    assert gone.state == pb.CONNECTION_STATE_DISCONNECTED  # ...silence is
    time.sleep(0.3)
    beats = Beats(stub)
    beats.send(player, "sess-2")
    back = _wait_state(stub, player, pb.CONNECTION_STATE_RECONNECTED)
    assert back.state == pb.CONNECTION_STATE_RECONNECTED and back.session_id == "sess-2"
    assert back.offline_ms >= 250
    beats.close()

    events = _events(kafka.bootstrap, topic, player, 3)
    assert [e.state for _, e in events][:3] == [
        pb.CONNECTION_STATE_CONNECTED,
        pb.CONNECTION_STATE_DISCONNECTED,
        pb.CONNECTION_STATE_RECONNECTED,
    ]
    assert {t for t, _ in events} == {"cardroom.connection_monitor.player_connection.v1"}
    assert events[2][1].offline_ms == back.offline_ms
    text = proc.metrics()
    assert metric_value(text, "connection_monitor_disconnects_total") >= 1
    assert metric_value(text, "connection_monitor_reconnect_seconds_count") >= 1
    assert metric_value(text, "connection_monitor_heartbeats_total") >= 4


def test_heartbeat_stream_rejects_bad_and_mixed_players(monitor) -> None:
    _, stub, _ = monitor
    with pytest.raises(grpc.RpcError) as err:
        stub.Heartbeats(iter([pb.Heartbeat(player_id="")]), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        stub.Heartbeats(iter([pb.Heartbeat(player_id="x1"), pb.Heartbeat(player_id="x2")]), timeout=5)
    assert (
        err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "one stream carries one player" in err.value.details()
    )
    with pytest.raises(grpc.RpcError) as err:
        stub.GetConnection(pb.GetConnectionRequest(player_id="never-seen"), timeout=5)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_a_gateway_beat_connects_each_player_it_lists_and_a_bad_one_changes_nothing(monitor) -> None:
    _, stub, _ = monitor
    ann, bob = (f"g-{uuid.uuid4().hex[:6]}-{n}" for n in ("a", "b"))
    beat = pb.PresenceBeat(alive=[pb.Heartbeat(player_id=ann, session_id="gw-1"), pb.Heartbeat(player_id=bob)])
    summary = stub.GatewayHeartbeats(iter([beat]), timeout=5)
    assert (summary.received, summary.players) == (1, 2)
    for player, session in ((ann, "gw-1"), (bob, "")):  # both known now, each with his entry's session
        seen = stub.GetConnection(pb.GetConnectionRequest(player_id=player), timeout=5)
        assert seen.last_seen.seconds > 0 and seen.session_id == session
    for player in (ann, bob):  # silence disconnects them
        assert _wait_state(stub, player, pb.CONNECTION_STATE_DISCONNECTED).state == pb.CONNECTION_STATE_DISCONNECTED
    bad = pb.PresenceBeat(alive=[pb.Heartbeat(player_id=ann), pb.Heartbeat(player_id="")])
    with pytest.raises(grpc.RpcError) as err:
        stub.GatewayHeartbeats(iter([bad]), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and err.value.details().startswith(
        "alive[1].player_id:"
    )
    gone = stub.GetConnection(pb.GetConnectionRequest(player_id=ann), timeout=5)
    assert gone.state == pb.CONNECTION_STATE_DISCONNECTED  # the refused beat did not bring ann back


def test_all_in_allowance_is_idempotent_rolls_and_resets(monitor) -> None:
    proc, stub, _ = monitor
    player = f"a-{uuid.uuid4().hex[:6]}"
    assert stub.GetAllInAllowance(pb.GetAllInAllowanceRequest(player_id=player), timeout=5).left == 2
    first = stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id=player, key="t1:1:3"), timeout=5)
    assert (first.allowance.left, first.replayed) == (1, False)
    again = stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id=player, key="t1:1:3"), timeout=5)
    assert (again.allowance.left, again.replayed) == (1, True)
    stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id=player, key="t1:2:3"), timeout=5)
    with pytest.raises(grpc.RpcError) as err:
        stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id=player, key="t1:3:3"), timeout=5)
    assert (
        err.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "no artificial all-in left" in err.value.details()
    )
    with pytest.raises(grpc.RpcError) as err:
        stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id=player), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    before = stub.GetAllInAllowance(pb.GetAllInAllowanceRequest(player_id=player), timeout=5)
    assert before.left == 0 and before.HasField("next_restore_at")

    # Durable across a restart (the window is 15 s in this process).
    proc.stop()
    proc.start()
    status = stub.GetAllInAllowance(pb.GetAllInAllowanceRequest(player_id=player), timeout=5)
    assert status.left == 0 and status.next_restore_at == before.next_restore_at
    time.sleep(max(0.0, status.next_restore_at.ToNanoseconds() / 1e9 - time.time()) + 0.2)
    assert stub.GetAllInAllowance(pb.GetAllInAllowanceRequest(player_id=player), timeout=5).left >= 1

    stub.ConsumeAllIn(pb.ConsumeAllInRequest(player_id=player, key="t1:4:3"), timeout=5)
    reset = stub.ResetAllInAllowance(
        pb.ResetAllInAllowanceRequest(player_id=player, reason="support ticket"), timeout=5
    )
    assert reset.left == 2 and not reset.HasField("next_restore_at")
    assert (
        metric_value(proc.metrics(), "connection_monitor_all_ins_total", outcome="none_left") == 0
    )  # counters restarted
