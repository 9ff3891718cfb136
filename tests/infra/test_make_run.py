"""``make run`` (issue 2 item 8, issue 6 acceptance, issue 10): the broker and every service come up,
each healthy service prints ``NAME grpc=HOST:PORT metrics=http://HOST:PORT/metrics`` and serves its
own metrics there, a service killed with -9 is restarted while the others keep serving (issue 14
item 8: "Restart a crashed service with back-off and keep the others serving ... and say so on the
console"), Envoy serves the web client in front of the gateway (issue 18: "started by `make run`
(line `web ui=http://127.0.0.1:PORT`)"), the demo Sit & Go is open with its bots registered and a
person can join it (issue 15: "`make run` also opens a demo sit & go that bots fill and a person can
join"; with the tournament tables on the dealer, ``TOURNAMENT_TABLES=dealer``), and Ctrl-C (SIGINT to
the foreground process group) stops everything, leaving no java, python or envoy behind — with exit
status 0 even when more signals arrive during the clean-up."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from kafka import KafkaAdminClient
from kafka.errors import KafkaError
from prometheus_client.parser import text_string_to_metric_families

from cardroom.runtime.trust import TlsFiles, channel_credentials
from cardroom.v1 import gateway_pb2 as g, gateway_pb2_grpc, tournament_pb2 as t, tournament_pb2_grpc
from tests.infra.procfs import service_pid

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(
    r"^(evaluator|wallet|dealer|connection_monitor|gateway|tournament) "
    r"grpc=(127\.0\.0\.1):(\d+) metrics=http://(127\.0\.0\.1):(\d+)/metrics$"
)
# Below the kernel's ephemeral range (32768+), so no client socket can hold them; shifted with the
# test broker's port (CARDROOM_TEST_KAFKA_PORT) so parallel runs of this test do not collide.
_SHIFT = int(os.environ.get("CARDROOM_TEST_KAFKA_PORT", "19092")) - 19092
KAFKA_PORT = 28092 + _SHIFT
PORT_OFFSET = 5000 + _SHIFT  # gRPC 25051..25056 (+ shift)
METRICS_OFFSET = 20000 + _SHIFT  # metrics 29101..29106 (+ shift)


def _group_except(pgid: int, spared: int) -> list[int]:
    """Every process of the process group ``pgid`` except ``spared``."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        if int(fields[2]) == pgid and pid != spared:
            pids.append(pid)
    return pids


def _ctrl_c(pgid: int, spared: int, *signals: signal.Signals) -> None:
    """What Ctrl-C in a terminal does, to everything in the foreground job but ``make`` itself: make
    dies of a SIGINT whatever its recipe returns, so sparing it lets run.py's exit status through."""
    for pid in _group_except(pgid, spared):
        for sig in signals:  # back to back: the second lands while the first is being handled
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


def _envoy_pid(state: Path) -> int:
    """The pid of make run's Envoy (its command line names its config under this test's state)."""
    marker = str(state / "envoy" / "envoy.yaml").encode()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker in cmdline.read_bytes().split(b"\0"):
                return int(cmdline.parent.name)
        except OSError:
            continue
    raise AssertionError(f"no envoy under {state}")


def _sample(body: str, name: str) -> float:
    """The sum of a metric's samples on a /metrics page (0 when absent)."""
    return sum(
        sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if sample.name == name
    )


def _health_checks_counted(body: str) -> float:
    """The service's own count of gRPC health checks it answered (make run asked before printing)."""
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            if (
                sample.name == "grpc_server_started_total"
                and sample.labels.get("grpc_service") == "grpc.health.v1.Health"
                and sample.labels.get("grpc_method") == "Check"
            ):
                return sample.value
    return 0.0


def _demo_sit_and_go(
    state: Path, tournament_port: int, tournament_id: str, entrants: int, status: int = t.TOURNAMENT_STATUS_REGISTRATION
) -> t.TournamentInfo:
    """The demo Sit & Go as the operator sees it, once ``entrants`` are in and it has ``status`` (or
    after a minute)."""
    credentials = channel_credentials(TlsFiles.load(state / "pki" / "operator"))
    with grpc.secure_channel(f"127.0.0.1:{tournament_port}", credentials) as channel:
        stub = tournament_pb2_grpc.TournamentStub(channel)
        deadline = time.monotonic() + 60
        while True:
            info = stub.GetTournament(t.GetTournamentRequest(tournament_id=tournament_id), timeout=10)
            if (info.entrants >= entrants and info.status == status) or time.monotonic() > deadline:
                return info
            time.sleep(0.5)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.kafka
@pytest.mark.timeout(420)
def test_make_run_prints_each_service_and_ctrl_c_leaves_nothing_running(tmp_path):
    state = tmp_path / "state"
    proc = subprocess.Popen(
        [
            "make",
            "--no-print-directory",
            "run",
            f"RUN_ARGS=--kafka-port {KAFKA_PORT} --port-offset={PORT_OFFSET} "
            f"--metrics-offset={METRICS_OFFSET} --state-dir {state} --demo-sng-wait 600",
        ],
        # the demo Sit & Go needs its tables on the dealer (a person plays only there); its last seat
        # waits 10 minutes for a person here, so it is still open when this test takes it
        env={**os.environ, "TOURNAMENT_TABLES": "dealer"},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
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
        assert {"NT", "PO/8", "F7S"} <= set(re.findall(r"^bots game=(\S+) pid=\d+", output, re.MULTILINE)), output
        assert re.search(r"^play: \S*cardroom play --player YOURNAME --gateway 127\.0\.0\.1:\d+$", output, re.MULTILINE)
    if {"gateway", "tournament", "dealer"} <= set(services):  # issue 15: the demo Sit & Go
        join = re.search(
            r"^sng: \S*cardroom play --player YOURNAME --gateway 127\.0\.0\.1:(\d+) --tournament (demo-sng-\S+)",
            output,
            re.MULTILINE,
        )
        assert join and re.search(r"^demo-sng pid=\d+ log=\S+demo-sng\.log$", output, re.MULTILINE), output
        sng = join.group(2)
        info = _demo_sit_and_go(state, services["tournament"][0], sng, entrants=5)
        # free, 6 seats, every seat but one taken by a bot at once; the last one waits for a person
        assert (info.format, info.buy_in, info.fee, info.max_entrants) == (t.TOURNAMENT_FORMAT_SNG, 0, 0, 6)
        assert info.status == t.TOURNAMENT_STATUS_REGISTRATION and info.entrants == 5, info
        # a person takes it through the gateway (as `cardroom play --tournament ID` does): it starts
        with grpc.insecure_channel(f"127.0.0.1:{join.group(1)}") as channel:
            gateway = gateway_pb2_grpc.GatewayStub(channel)
            token = gateway.Login(g.LoginRequest(player_id="makerunperson"), timeout=10).token
            entry = gateway.RegisterTournament(
                g.MyTournamentEntryRequest(tournament_id=sng, request_id="join-demo"),
                timeout=20,
                metadata=[("authorization", f"Bearer {token}")],
            )
        assert entry.paid == 0
        info = _demo_sit_and_go(state, services["tournament"][0], sng, 6, t.TOURNAMENT_STATUS_RUNNING)
        assert info.entrants == 6 and info.status == t.TOURNAMENT_STATUS_RUNNING, info
    for name, (grpc_port, metrics_port) in services.items():
        assert _listening(grpc_port), name
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as reply:
            body = reply.read().decode()
        assert _health_checks_counted(body) >= 1, f"{name}: its metrics port does not serve its own metrics"
        assert f"# TYPE {name}_" in body, f"{name}: no {name}_* metric family"

    # kill -9 one service: it is restarted and prints its line again; nobody else is restarted.
    others = {name: service_pid(state, name) for name in services if name != "evaluator"}
    os.kill(service_pid(state, "evaluator"), signal.SIGKILL)
    supervised: list[str] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        supervised.append(line.rstrip("\n"))
        if (match := LINE.match(supervised[-1])) and match.group(1) == "evaluator":
            break
    said = "\n".join(supervised)
    assert re.search(r"^evaluator exited with status -9; restarting in 1 s", said, re.MULTILINE), said
    assert "evaluator restarted (restart 1)" in said, said
    assert LINE.match(supervised[-1]) and LINE.match(supervised[-1]).group(1) == "evaluator", said
    assert _listening(services["evaluator"][0])
    assert {name: service_pid(state, name) for name in others} == others, "another service was restarted"
    assert not [line for line in supervised if " exited with status " in line and not line.startswith("evaluator")]

    # Kafka authenticates by default (issue 14 item 1): the dealer writes its snapshots through the
    # ACLs, and a client without credentials gets nowhere.
    assert "sasl.enabled.mechanisms=SCRAM-SHA-512" in (state / "kafka" / "server.properties").read_text()
    if "dealer" in services and "gateway" in services:
        deadline = time.monotonic() + 60
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{services['dealer'][1]}/metrics", timeout=5) as reply:
                body = reply.read().decode()
            if _sample(body, "dealer_snapshots_total") > 0 or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert _sample(body, "dealer_snapshots_total") > 0, "the demo bots' tables wrote no snapshot"
        assert _sample(body, "dealer_snapshot_failures_total") == 0
        assert _sample(body, "dealer_kafka_publish_failures_total") == 0
    with pytest.raises(KafkaError):
        KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{KAFKA_PORT}", request_timeout_ms=3000).list_topics()

    prometheus_port = 9090 + METRICS_OFFSET
    if shutil.which("prometheus"):  # issue 17: started with the rules loaded, its UI printed
        assert f"prometheus ui=http://127.0.0.1:{prometheus_port}" in lines, output
        with urllib.request.urlopen(f"http://127.0.0.1:{prometheus_port}/api/v1/rules", timeout=5) as reply:
            assert b"CardroomEscrowImbalance" in reply.read()
    else:
        assert "prometheus: not installed, not started" in output, output

    # Issue 18: Envoy in front of the gateway serves the web client (built by make run when missing)
    # and passes its gRPC-Web calls on: a Lobby call without a token is the gateway's UNAUTHENTICATED.
    web_port = 8080 + METRICS_OFFSET
    assert f"web ui=http://127.0.0.1:{web_port}" in lines, output
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/", timeout=5) as reply:
        assert reply.headers["content-type"].startswith("text/html")
        assert b"<title>Cardroom</title>" in reply.read()
    call = urllib.request.Request(
        f"http://127.0.0.1:{web_port}/cardroom.v1.Gateway/Lobby",
        data=b"\x00\x00\x00\x00\x00",  # one empty gRPC-Web frame: LobbyRequest{}
        headers={"content-type": "application/grpc-web+proto", "x-grpc-web": "1"},
    )
    with urllib.request.urlopen(call, timeout=10) as reply:
        assert reply.headers["grpc-status"] == "16", dict(reply.headers)  # UNAUTHENTICATED, from the gateway
    # Envoy is supervised like the services: killed, it is restarted and its line printed again.
    os.kill(_envoy_pid(state), signal.SIGKILL)
    again: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        again.append(line.rstrip("\n"))
        if again[-1] == f"web ui=http://127.0.0.1:{web_port}":
            break
    said = "\n".join(again)
    assert re.search(r"^web exited with status -9; restarting in 1 s", said, re.MULTILINE), said
    assert "web restarted (restart 1)" in said and again[-1].startswith("web ui="), said
    with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/healthz", timeout=5) as reply:
        assert reply.status == 200

    # Ctrl-C, and a second signal right behind it (an impatient second Ctrl-C, a supervisor's TERM):
    # the clean-up must neither be cut short nor end in a traceback.
    _ctrl_c(proc.pid, proc.pid, signal.SIGINT, signal.SIGTERM)
    stopping = proc.stdout.readline()
    _ctrl_c(proc.pid, proc.pid, signal.SIGINT)  # and one more while the bots stand up
    status = proc.wait(timeout=120)
    rest = stopping + proc.stdout.read()
    assert "stopped." in rest, rest
    assert "Traceback" not in rest, rest
    assert status == 0, f"make run exited {status} after a clean stop:\n{rest}"

    ports = [KAFKA_PORT, KAFKA_PORT + 1, prometheus_port, web_port] + [p for pair in services.values() for p in pair]
    assert not [p for p in ports if _listening(p)], "something still listens after Ctrl-C"
    leftovers = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True).stdout.split()
    assert not leftovers, f"processes left behind: {leftovers}"


def test_metrics_check_needs_the_services_own_health_check_count():
    """The check above cannot pass on any HTTP 200 (issue 10): a page without the service's count of
    answered health checks reads 0."""
    other = "# HELP foo_total x\n# TYPE foo_total counter\nfoo_total 3.0\n"
    assert _health_checks_counted(other) == 0
    own = (
        "# HELP grpc_server_started_total x\n# TYPE grpc_server_started_total counter\n"
        'grpc_server_started_total{grpc_method="Check",grpc_service="grpc.health.v1.Health",'
        'grpc_type="unary"} 2.0\n'
    )
    assert _health_checks_counted(own) == 2
