"""Issue 10: the gateway runs without the connection monitor. A second gateway with
CONNECTION_MONITOR_ADDR empty (heartbeats off, as documented) in front of the real dealer and
wallet: bots log in through it and play hands; it sends no heartbeats and logs no failures."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cardroom.v1 import connection_monitor_pb2 as cm, connection_monitor_pb2_grpc as cm_grpc
from tests.e2e.stack import OPERATOR_TOKEN, Stack
from tests.services.procs import ServiceProcess

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def lone_gateway(cardroom: Stack) -> Iterator[ServiceProcess]:
    proc = ServiceProcess(
        "gateway",
        {
            "GATEWAY_SECRET": "lone",
            "GATEWAY_DEV_LOGIN": "1",
            "GATEWAY_OPERATOR_TOKEN": OPERATOR_TOKEN,
            "GATEWAY_PLAY_MONEY_GRANT": "10000",
            "DEALER_ADDR": cardroom.address("dealer"),
            "WALLET_ADDR": cardroom.address("wallet"),
            "CONNECTION_MONITOR_ADDR": "",
            "GATEWAY_HEARTBEAT_SECONDS": "0.2",
            **cardroom.tls_env("gateway"),
        },
    ).start()
    try:
        yield proc
    finally:
        assert proc.stop() == 0


@pytest.mark.slow
def test_gateway_plays_with_heartbeats_off(cardroom: Stack, lone_gateway: ServiceProcess) -> None:
    prefix = f"nomon{cardroom.run}"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "cardroom.cli.main",
            "bots",
            "--tables",
            "1",
            "--players-per-table",
            "2",
            "--game",
            "NT",
            "--hands",
            "3",
            "--think-ms",
            "300",
            "--prefix",
            prefix,
            "--hand-pause",
            "0.1",
            "--timeout",
            "90",
            "--gateway",
            lone_gateway.address,
            "--operator-token",
            OPERATOR_TOKEN,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 bots at 1 NT tables" in run.stdout and "hands/s" in run.stdout
    records = lone_gateway.log_records()
    backends = [r for r in records if r.get("message") == "backends"]
    assert backends and backends[0]["connection_monitor"] == "off", backends
    assert not [r for r in records if r.get("message") == "heartbeat stream failed"]
    assert [r for r in records if r.get("message") == "play stream opened"]
    with cardroom.channel("connection_monitor") as channel:
        monitor = cm_grpc.ConnectionMonitorStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            monitor.GetConnection(cm.GetConnectionRequest(player_id=f"{prefix}nt1p1"), timeout=5)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND  # no heartbeat ever reached a monitor
