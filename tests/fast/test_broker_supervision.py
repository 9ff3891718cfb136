"""``make run`` restarts a killed broker once: a due restart waits while the dead broker's ports
still answer (a kill -9'd JVM's leader is a zombie a moment before its listeners close), instead of
spending a restart on ``kafka.sh start``'s refusal ("port … already in use") and counting two
(the chaos test's flaky "kafka restarted (restart 2)")."""

from __future__ import annotations

import importlib.util
import socket
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_run_script", ROOT / "scripts" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def dead_broker(run: ModuleType, tmp_path: Path, port: int) -> object:
    pidfile = tmp_path / "kafka.pid"
    pidfile.write_text("999999999\n")  # no such process
    broker = run.Broker("kafka.sh", {}, pidfile, "127.0.0.1", (port,))
    starts: list[float] = []
    broker.start = lambda: starts.append(1.0)  # type: ignore[method-assign]
    broker.starts = starts  # type: ignore[attr-defined]
    broker.restart_at = 0.0  # its back-off is over: the restart is due
    return broker


def test_a_due_restart_waits_while_the_dead_brokers_port_answers(run, tmp_path, capsys):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    broker = dead_broker(run, tmp_path, listener.getsockname()[1])
    try:
        for _ in range(3):
            broker.restart_at = 0.0
            run.supervise_broker(broker, restart=True)
        assert broker.starts == [] and broker.restarts == 0
        assert capsys.readouterr().out.count("waiting for the dead broker to release port") == 1
    finally:
        listener.close()
    broker.restart_at = 0.0
    run.supervise_broker(broker, restart=True)
    assert broker.starts == [1.0] and broker.restarts == 1
    assert broker.port_wait_since is None


def test_the_wait_is_bounded_then_kafka_sh_is_asked_anyway(run, tmp_path, monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        broker = dead_broker(run, tmp_path, listener.getsockname()[1])
        run.supervise_broker(broker, restart=True)
        assert broker.starts == []
        broker.port_wait_since -= run.PORT_WAIT_SECONDS  # a minute of waiting later
        broker.restart_at = 0.0
        run.supervise_broker(broker, restart=True)
        assert broker.starts == [1.0] and broker.restarts == 1
    finally:
        listener.close()


def test_free_ports_start_at_once(run, tmp_path):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    free = probe.getsockname()[1]
    probe.close()
    broker = dead_broker(run, tmp_path, free)
    run.supervise_broker(broker, restart=True)
    assert broker.starts == [1.0] and broker.restarts == 1
