"""``make run``'s gRPC ports, and ``cardroom loadtest --start-stack``'s unless told otherwise, sit below the
kernel's ephemeral range: 127.0.0.1:50054, the connection monitor's port before the
defaults moved, was taken by the stack's own outgoing connections in 5 runs of 6."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cardroom.cli.commands import loadtest
from cardroom.cli.main import main
from cardroom.runtime.config import DEFAULT_PORTS, replica_ports


class Stopped(Exception):
    pass


@pytest.fixture
def offsets(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    seen: list[int] = []

    class Stack:
        def __init__(self, state: Path, kafka_port: int, port_offset: int, metrics_offset: int) -> None:
            seen.append(port_offset)

        def start(self) -> Any:
            raise Stopped

        def stop(self) -> None:
            pass

    monkeypatch.setattr("cardroom.client.loadtest.stack.RunStack", Stack)
    return seen


def test_the_started_stack_s_ports_sit_below_the_ephemeral_range(offsets: list[int], tmp_path: Path) -> None:
    with pytest.raises(Stopped):
        main(["loadtest", "--start-stack", "--state-dir", str(tmp_path), "--out", str(tmp_path / "out")])
    assert offsets == [loadtest.STACK_PORT_OFFSET]
    lowest_ephemeral = 32768  # Linux's default net.ipv4.ip_local_port_range starts here
    ports = [replica_ports(name, k)[0] for name in DEFAULT_PORTS for k in (1, 2)]
    assert max(ports) < lowest_ephemeral  # make run's own (dealer-2's is the highest)
    assert max(ports) + loadtest.STACK_PORT_OFFSET < lowest_ephemeral
    assert min(ports) + loadtest.STACK_PORT_OFFSET > 1024  # and no privileged port


def test_an_explicit_offset_is_kept(offsets: list[int], tmp_path: Path) -> None:
    with pytest.raises(Stopped):
        main(["loadtest", "--start-stack", "--port-offset", "7", "--state-dir", str(tmp_path), "--out", str(tmp_path)])
    assert offsets == [7]
