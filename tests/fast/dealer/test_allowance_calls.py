"""The dealer's calls to the connection monitor for the all-in allowance are bounded: a gateway lost
with its players disconnects thousands at once, and one grpc.aio process with more than about 1,100
unary calls in flight ends some of them CANCELLED on its own (docs/capacity.md)."""

from __future__ import annotations

import asyncio

from cardroom.v1 import connection_monitor_pb2 as cm
from dealer import connections
from dealer.connections import MonitoredAllowance


class CountingMonitor:
    def __init__(self) -> None:
        self.in_flight = self.most = self.calls = 0

    async def GetAllInAllowance(self, request: cm.GetAllInAllowanceRequest) -> cm.AllInAllowance:  # noqa: N802
        self.in_flight += 1
        self.calls += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.001)
        self.in_flight -= 1
        return cm.AllInAllowance(player_id=request.player_id, left=1)


def test_a_mass_disconnect_asks_the_monitor_at_most_monitor_calls_at_a_time() -> None:
    async def run() -> tuple[CountingMonitor, MonitoredAllowance]:
        allowance = MonitoredAllowance(per_day=2, address=None)
        monitor = CountingMonitor()
        allowance.stub = monitor  # type: ignore[assignment]
        for i in range(3 * connections.MONITOR_CALLS):
            allowance.refresh(f"p{i}")
        while allowance.tasks:
            await asyncio.gather(*allowance.tasks)
        return monitor, allowance

    monitor, allowance = asyncio.run(run())
    assert monitor.calls == 3 * connections.MONITOR_CALLS
    assert monitor.most == connections.MONITOR_CALLS
    assert allowance.remote == {f"p{i}": 1 for i in range(3 * connections.MONITOR_CALLS)}
