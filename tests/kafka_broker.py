"""The real Kafka broker for tests, driven through deploy/kafka/kafka.sh (never mocked).

The test broker listens on ``CARDROOM_TEST_KAFKA_PORT`` (default 19092, so it can run beside
``make run``'s broker on 9092) and keeps its state in ``var/kafka-test-PORT``, wiped at session
start; two test sessions on one machine need only different ports. Under pytest-xdist (``make test``
runs ``pytest -n``) every worker is a session of its own with its own broker — tests restart the
broker, so workers cannot share one — on ``CARDROOM_TEST_KAFKA_PORT + 2 * N`` for worker ``gwN``
(the controller takes the port after each broker's).

``KafkaBroker(port, auth=True)`` is a second, authenticating broker (KAFKA_AUTH=scram: SASL/SCRAM users
per service and the ACLs of deploy/kafka/acls.yaml) in ``var/kafka-test-auth-PORT``, for the security
tests; :func:`auth_broker_port` keeps it clear of the session brokers (base + 1000 + 2 per worker).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "deploy" / "kafka" / "kafka.sh"


def session_broker_port() -> int:
    """This session's broker port: the base port, plus 2 per xdist worker number."""
    base = int(os.environ.get("CARDROOM_TEST_KAFKA_PORT", "19092"))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return base + 2 * int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else base


def auth_broker_port() -> int:
    """This session's authenticating broker's port (clear of every xdist worker's plain broker)."""
    return session_broker_port() + 1000


@dataclass
class KafkaBroker:
    """Handle on the session's broker: its address, and start / stop / restart."""

    port: int = field(default_factory=session_broker_port)
    auth: bool = False
    state_dir: Path = field(init=False)

    def __post_init__(self) -> None:
        self.state_dir = ROOT / "var" / (f"kafka-test-auth-{self.port}" if self.auth else f"kafka-test-{self.port}")

    def credentials(self, user: str) -> tuple[str, str]:
        """(user, password) of a SCRAM user of an ``auth`` broker (made by kafka.sh at format time)."""
        return user, (self.state_dir / "credentials" / user).read_text().strip()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(
            os.environ,
            KAFKA_PORT=str(self.port),
            KAFKA_STATE_DIR=str(self.state_dir),
            KAFKA_AUTH="scram" if self.auth else "none",
        )
        return subprocess.run([str(SCRIPT), *args], env=env, cwd=ROOT, text=True, capture_output=True, timeout=600)

    def start(self, fresh: bool = False) -> None:
        result = self._run("start", *(["--fresh"] if fresh else []))
        if result.returncode != 0:
            raise RuntimeError(f"kafka.sh start failed ({result.returncode}):\n{result.stderr[-4000:]}")

    def stop(self) -> None:
        result = self._run("stop")
        if result.returncode != 0:
            raise RuntimeError(f"kafka.sh stop failed:\n{result.stderr[-4000:]}")

    def restart(self) -> None:
        """Clean stop (SIGTERM, wait) and start again on the same data."""
        self.stop()
        self.start()

    def is_running(self) -> bool:
        return self._run("status").returncode == 0
