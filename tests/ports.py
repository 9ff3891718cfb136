"""Free loopback ports for servers the tests start, outside the kernel's ephemeral range.

A port from ``bind(("127.0.0.1", 0))`` comes from the ephemeral range (``ip_local_port_range``,
32768–60999 here), the range every outgoing connection takes its source port from. With hundreds of
client sockets open (Kafka clients, gRPC channels), such a port was taken by a client between the test
choosing it and the service binding it ("Address already in use": clean-clone CI, a dealer's metrics
port), or while a killed service was down before its restart on the same ports.

So ports come from 61000–65499, which no client socket is given, split into blocks of 500: one block
per xdist worker (shifted with ``CARDROOM_TEST_KAFKA_PORT`` like every other port of a parallel run),
taken in turn and skipped while something is bound there. Fixed ports of the suite (the brokers on
19092+, ``make run`` tests on 25000–29200) are all below 32768."""

from __future__ import annotations

import itertools
import os
import socket

LOW, BLOCK, BLOCKS = 61000, 500, 9


def _block() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    index = int(worker[2:]) + 1 if worker.startswith("gw") and worker[2:].isdigit() else 0
    shift = int(os.environ.get("CARDROOM_TEST_KAFKA_PORT", "19092")) - 19092
    return (index + shift // 2) % BLOCKS


_CANDIDATES = itertools.cycle(range(LOW + _block() * BLOCK, LOW + (_block() + 1) * BLOCK))


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port nothing is bound to, from this worker's block (each port in turn)."""
    for _ in range(BLOCK):
        port = next(_CANDIDATES)
        if _bindable(port):
            return port
    raise RuntimeError(f"no free port in {LOW + _block() * BLOCK}..{LOW + (_block() + 1) * BLOCK - 1}")
