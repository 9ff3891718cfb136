"""Services under test as real processes (``python -m NAME``), with free ports and logs.

``ServiceProcess(..., tls=True)`` starts the service with mutual TLS: its ``TLS_DIR`` is its identity's
directory in the session's PKI (:func:`harness_pki`, a CA made once per test process in a temp dir).
Tests then dial it with :func:`secure_channel` / :func:`aio_channel` and an identity of the trust
table (``operator`` for the harness's own checks). A service started without ``tls`` is plaintext:
that is the explicit opt-out of tests that talk to one service as a raw client."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from cardroom.runtime.healthcheck import check
from cardroom.runtime.pki import make_pki
from cardroom.runtime.trust import TlsFiles, channel_credentials
from tests import tempdirs
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
_PKI: list[Path] = []
#: Services whose port stays plain with TLS on (only public gRPC services: cardroom.runtime.trust).
PLAIN_PORTS = frozenset({"gateway"})


def harness_pki() -> Path:
    """The test session's CA and every identity's certificate (made on first use, in a temp dir)."""
    if not _PKI:
        _PKI.append(make_pki(tempdirs.make("cardroom-pki-")))
    return _PKI[0]


def tls_env(identity: str) -> dict[str, str]:
    """The environment that gives a service process ``identity``'s certificate."""
    return {"TLS_DIR": str(harness_pki() / identity)}


def tls_files(identity: str) -> TlsFiles:
    return TlsFiles.load(harness_pki() / identity)


def secure_channel(address: str, identity: str = "operator") -> grpc.Channel:
    """A blocking mutual-TLS channel presenting ``identity``'s certificate."""
    return grpc.secure_channel(address, channel_credentials(tls_files(identity)))


def aio_channel(address: str, identity: str = "operator") -> grpc.aio.Channel:
    """An asyncio mutual-TLS channel presenting ``identity``'s certificate."""
    return grpc.aio.secure_channel(address, channel_credentials(tls_files(identity)))


@dataclass
class ServiceProcess:
    """One service process; ``start`` waits for health SERVING, ``stop`` sends SIGTERM."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    grpc_port: int = field(default_factory=free_port)
    metrics_port: int = field(default_factory=free_port)
    data_dir: Path = field(default_factory=lambda: tempdirs.make("cardroom-svc-"))
    proc: subprocess.Popen[bytes] | None = None
    #: Mutual TLS with this service's identity (its name) from :func:`harness_pki`.
    tls: bool = False

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    @property
    def log_path(self) -> Path:
        return self.data_dir / f"{self.name}.log"

    def start(self, timeout: float = 60.0, health: str = "") -> ServiceProcess:
        """Start and wait until health ``health`` is SERVING ("": ready; ``liveness``: serving)."""
        env = {
            **os.environ,
            "GRPC_PORT": str(self.grpc_port),
            "METRICS_PORT": str(self.metrics_port),
            "HOST": "127.0.0.1",
            "DATA_DIR": str(self.data_dir),
            "LOG_LEVEL": "INFO",
            "SHUTDOWN_DELAY": "1.0",
            # The dealer's SIGTERM drain (hands in progress finish) kept short in tests; the drain
            # test sets its own.
            "DEALER_DRAIN_SECONDS": "2",
            **(tls_env(self.name) if self.tls else {}),
            **self.env,
        }
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", self.name], env=env, cwd=ROOT, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + timeout
        # With TLS an internal service answers only its own kind of probe; the gateway's port stays plain.
        probe = tls_files(self.name) if self.tls and self.name not in PLAIN_PORTS else None
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.logs()[-3000:]}")
            if check(self.address, health, timeout=1, tls=probe):
                return self
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"{self.name} not SERVING after {timeout}s:\n{self.logs()[-3000:]}")
            time.sleep(0.1)

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL (kill -9) and reap."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_records(self) -> list[dict]:
        return [json.loads(line) for line in self.logs().splitlines() if line.startswith("{")]

    def metrics(self) -> str:
        with urllib.request.urlopen(self.metrics_url, timeout=5) as response:
            return response.read().decode()


def metric_value(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text format (0.0 when absent)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        sample, _, value = line.rpartition(" ")
        base, _, rest = sample.partition("{")
        if base != name:
            continue
        found = dict(part.split("=", 1) for part in rest.rstrip("}").split(",") if part) if rest else {}
        found = {k: v.strip('"') for k, v in found.items()}
        if all(found.get(k) == v for k, v in labels.items()):
            return float(value)
    return 0.0


def create_topic(bootstrap: str, name: str, partitions: int = 3) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)], timeout_ms=30_000)
    finally:
        admin.close()
    wait_for_topics(bootstrap, {name: partitions})


def wait_for_topics(bootstrap: str, partitions: dict[str, int], timeout: float = 30.0) -> None:
    """Until every topic is in the broker's metadata with all its partitions. A consumer group that
    joins before (a service started right after the topic was created) can be assigned nothing and
    then waits for kafka-python's next metadata refresh, minutes later — the tests' flaky "rake never
    posted"."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        deadline = time.monotonic() + timeout
        while True:
            known = consumer.topics()  # a fresh metadata request
            if all(
                name in known and len(consumer.partitions_for_topic(name) or ()) >= count
                for name, count in partitions.items()
            ):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"topics not in the broker's metadata after {timeout:.0f} s: {sorted(partitions)}")
            time.sleep(0.1)
    finally:
        consumer.close()


def tournament_service(
    bootstrap: str,
    wallet_address: str,
    run: str,
    *,
    tick_seconds: float,
    tls: bool = False,
    extra_env: dict[str, str] | None = None,
) -> tuple[ServiceProcess, str]:
    """A started tournament service on its own events topic (``test.tournament.events.RUN``, made
    here), paying through the wallet at ``wallet_address``: the process and its topic. ``extra_env``
    adds settings (its tables on the dealer: ``TOURNAMENT_TABLES``, ``DEALER_ADDR``, ...)."""
    topic = f"test.tournament.events.{run}"
    create_topic(bootstrap, topic)
    settings = {
        "KAFKA_BOOTSTRAP": bootstrap,
        "WALLET_ADDR": wallet_address,
        "TOURNAMENT_EVENTS_TOPIC": topic,
        "TOURNAMENT_TICK_SECONDS": str(tick_seconds),
        "TOURNAMENT_RELAY_INTERVAL": "0.1",
        **(extra_env or {}),
    }
    return ServiceProcess("tournament", settings, tls=tls).start(), topic
