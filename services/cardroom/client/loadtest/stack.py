"""A ``make run`` stack for the load test: scripts/run.py (Kafka and every service, no demo bots)
started as a child process; its ``NAME grpc=HOST:PORT metrics=URL`` lines say where each service is.

Once started, what run.py writes is copied to ``STATE_DIR/log/run.log`` (kept with the services' logs) by a
thread of its own: a pipe nobody read would block run.py once full, and its stop (the services, then Kafka)
would have nobody to tell.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cardroom.client.loadtest.services import Target

ROOT = Path(__file__).resolve().parents[4]
LINE = re.compile(r"^([\w-]+) grpc=(\S+) metrics=(\S+)$")  # dealer-2: a dealer replica


@dataclass
class RunStack:
    state_dir: Path
    kafka_port: int = 9092
    port_offset: int = 0
    metrics_offset: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[str] | None = None
    services: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (grpc address, metrics url)
    script: Path = ROOT / "scripts" / "run.py"
    _copier: threading.Thread | None = None

    def start(self, timeout: float = 300.0) -> RunStack:
        script = self.script
        if not script.exists():
            raise RuntimeError(f"{script} not found: --start-stack works from a source checkout")
        command = [
            sys.executable,
            str(script),
            "--no-bots",
            "--kafka-port",
            str(self.kafka_port),
            "--port-offset",
            str(self.port_offset),
            "--metrics-offset",
            str(self.metrics_offset),
            "--state-dir",
            str(self.state_dir),
        ]
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **self.extra_env},
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        seen = []
        for line in self.proc.stdout:
            line = line.strip()
            seen.append(line)
            match = LINE.match(line)
            if match:
                self.services[match.group(1)] = (match.group(2), match.group(3))
                print(f"stack: {line}", flush=True)
            if line.startswith("logs:"):
                self._copier = threading.Thread(target=self._copy_output, name="run.py output", daemon=True)
                self._copier.start()
                return self
            if time.monotonic() > deadline:
                break
        self.stop()
        raise RuntimeError("the make-run stack did not start:\n" + "\n".join(seen[-20:]))

    @property
    def gateway(self) -> str:
        return self.services["gateway"][0]

    def operator_token(self) -> str:
        return (self.state_dir / "gateway.operator-token").read_text().strip()

    def operator_tls_dir(self) -> Path | None:
        """The ``operator`` identity's certificate run.py made (None: it runs without TLS)."""
        directory = self.state_dir / "pki" / "operator"
        return directory if directory.is_dir() else None

    def targets(self) -> list[Target]:
        from urllib.parse import urlparse

        out = [Target(name, url, urlparse(url).port or 0) for name, (_, url) in self.services.items()]
        out.append(Target("kafka", "", self.kafka_port))
        return out

    def _copy_output(self) -> None:
        """Everything run.py writes after its start, to ``log/run.log``, until it ends."""
        assert self.proc is not None and self.proc.stdout is not None
        logs = self.state_dir / "log"
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / "run.log").open("a") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self._copier is not None:
            self._copier.join(5.0)

    def discard(self, keep_logs_in: Path) -> Path | None:
        """After :meth:`stop`: move the services' logs to ``keep_logs_in`` and remove the state dir (Kafka's
        log, the databases: some 110 MB a run). Returns where the logs went (None: there were none)."""
        logs = self.state_dir / "log"
        kept = None
        if logs.is_dir():
            keep_logs_in.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(logs), str(keep_logs_in))
            kept = keep_logs_in
        shutil.rmtree(self.state_dir, ignore_errors=True)
        return kept
