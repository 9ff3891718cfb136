"""``make run`` (issue 2 item 8, issue 6 acceptance): the broker and every service come up, each
healthy service prints ``NAME grpc=HOST:PORT metrics=http://HOST:PORT/metrics``, and Ctrl-C
(SIGINT to the foreground process group) stops everything, leaving no java or python behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"^(evaluator|wallet|dealer|connection_monitor|gateway|tournament) "
    r"grpc=(127\.0\.0\.1):(\d+) metrics=http://(127\.0\.0\.1):(\d+)/metrics$"
)
# Below the kernel's ephemeral range (32768+), so no client socket can hold them.
KAFKA_PORT = 28092
PORT_OFFSET = -25000  # gRPC 25051..25056
METRICS_OFFSET = 20000  # metrics 29101..29106


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.kafka
@pytest.mark.timeout(300)
def test_make_run_prints_each_service_and_ctrl_c_leaves_nothing_running(tmp_path):
    state = tmp_path / "state"
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "run",
         f"RUN_ARGS=--kafka-port {KAFKA_PORT} --port-offset={PORT_OFFSET} "
         f"--metrics-offset={METRICS_OFFSET} --state-dir {state}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # its own process group, like a terminal's foreground job
    )
    lines: list[str] = []
    services: dict[str, tuple[int, int]] = {}
    deadline = time.monotonic() + 240
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        match = LINE.match(lines[-1])
        if match:
            services[match.group(1)] = (int(match.group(3)), int(match.group(5)))
        if lines[-1].startswith("logs:"):
            break
    output = "\n".join(lines)
    assert f"kafka bootstrap=127.0.0.1:{KAFKA_PORT}" in output, output
    runnable = {p.parent.name for p in (ROOT / "services").glob("*/__main__.py")}
    assert set(services) == runnable, output
    if "gateway" in services:  # issue 7: bot tables of different games, and how to join them
        assert {"NT", "PO/8", "F7S"} <= set(re.findall(r"^bots game=(\S+) pid=\d+", output, re.M)), output
        assert re.search(r"^play: \S*cardroom play --player YOURNAME --gateway 127\.0\.0\.1:\d+$", output, re.M)
    for name, (grpc_port, metrics_port) in services.items():
        assert _listening(grpc_port), name
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as reply:
            assert b"grpc_server_started_total" in reply.read() or reply.status == 200

    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
    proc.wait(timeout=120)
    rest = proc.stdout.read()
    assert "stopped." in rest, rest

    ports = [KAFKA_PORT, KAFKA_PORT + 1] + [p for pair in services.values() for p in pair]
    assert not [p for p in ports if _listening(p)], "something still listens after Ctrl-C"
    leftovers = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.split()
    assert not leftovers, f"processes left behind: {leftovers}"
