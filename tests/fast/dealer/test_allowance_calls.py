"""The dealer's calls to the connection monitor for the all-in allowance are bounded: a gateway lost
with its players disconnects thousands at once, and one grpc.aio process with more than about 1,100
unary calls in flight ends some of them CANCELLED on its own (docs/capacity.md)."""

from __future__ import annotations

import asyncio
import logging

import grpc
import pytest

from cardroom.v1 import connection_monitor_pb2 as cm
from dealer import connections, metrics
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


class FullAllowances(CountingMonitor):
    async def GetAllInAllowance(self, request: cm.GetAllInAllowanceRequest) -> cm.AllInAllowance:  # noqa: N802
        return cm.AllInAllowance(player_id=request.player_id, left=2)


def test_a_full_allowance_is_not_kept_for_every_player_who_ever_disconnected() -> None:
    """A full allowance changes nothing (``left`` takes the smaller of the table's count and the
    monitor's): the map keeps only the players who have used some, not every player ever seen."""

    async def run() -> MonitoredAllowance:
        allowance = MonitoredAllowance(per_day=2, address=None)
        allowance.stub = FullAllowances()  # type: ignore[assignment]
        allowance.remote["back"] = 0  # used both, then the window passed: the monitor says 2 again
        for player in ("ann", "bob", "back"):
            allowance.refresh(player)
        while allowance.tasks:
            await asyncio.gather(*allowance.tasks)
        return allowance

    allowance = asyncio.run(run())
    assert allowance.remote == {}
    assert allowance.left("back", 0.0) == 2 and allowance.left("ann", 0.0) == 2


class FailingOnce(CountingMonitor):
    """ConsumeAllIn fails UNAVAILABLE on its first try (the dealer tries again half a second later)."""

    def __init__(self) -> None:
        super().__init__()
        self.consumed: list[str] = []
        self.asked_while_consume_waited = False

    async def ConsumeAllIn(self, request: cm.ConsumeAllInRequest) -> cm.ConsumeAllInResponse:  # noqa: N802
        self.consumed.append(request.player_id)
        if len(self.consumed) == 1:
            raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "down")
        return cm.ConsumeAllInResponse(allowance=cm.AllInAllowance(player_id=request.player_id, left=0))

    async def GetAllInAllowance(self, request: cm.GetAllInAllowanceRequest) -> cm.AllInAllowance:  # noqa: N802
        self.asked_while_consume_waited = len(self.consumed) == 1
        return await super().GetAllInAllowance(request)


def test_a_report_waiting_to_be_tried_again_holds_no_call_slot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connections, "MONITOR_CALLS", 1)

    async def run() -> FailingOnce:
        allowance = MonitoredAllowance(per_day=2, address=None)
        monitor = FailingOnce()
        allowance.stub = monitor  # type: ignore[assignment]
        allowance.use("ann", now=0.0)  # reported: fails once, tried again after 0.5 s
        await asyncio.sleep(0.05)
        allowance.refresh("bob")  # asked meanwhile: the one slot is free
        while allowance.tasks:
            await asyncio.gather(*allowance.tasks)
        assert allowance.remote == {"bob": 1, "ann": 0}
        return monitor

    monitor = asyncio.run(run())
    assert monitor.consumed == ["ann", "ann"] and monitor.asked_while_consume_waited


class Slow(CountingMonitor):
    """A monitor too slow for the dealer's deadline: every call ends DEADLINE_EXCEEDED."""

    async def GetAllInAllowance(self, request: cm.GetAllInAllowanceRequest) -> cm.AllInAllowance:  # noqa: N802
        self.calls += 1
        raise grpc.aio.AioRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, grpc.aio.Metadata(), grpc.aio.Metadata(), "slow")


def test_a_slow_monitor_s_failures_are_counted_and_warned_about_once_a_while(caplog: pytest.LogCaptureFixture) -> None:
    """Seen in a load test on a slow machine (2026-12-08): 6,000 players standing up at once, the monitor too
    slow, 4,359 warnings in 90 s, one per player. Each failure is counted (``dealer_monitor_calls_failed_total``),
    and the log warns once per ``WARN_EVERY`` seconds, saying how many failed."""
    failed = metrics.MONITOR_FAILURES.labels("GetAllInAllowance", "DEADLINE_EXCEEDED")
    before = failed._value.get()

    async def run() -> None:
        allowance = MonitoredAllowance(per_day=2, address=None)
        allowance.stub = Slow()  # type: ignore[assignment]
        for i in range(500):
            allowance.refresh(f"p{i}")
        while allowance.tasks:
            await asyncio.gather(*allowance.tasks)
        assert allowance.left("p1", 0.0) == 2  # counted at the table meanwhile
        assert allowance._unwarned == 499  # the next warning says so

    with caplog.at_level(logging.WARNING, logger="dealer.connections"):
        asyncio.run(run())
    assert failed._value.get() - before == 500
    warned = [r for r in caplog.records if r.name == "dealer.connections"]
    assert len(warned) == 1 and warned[0].failed == 1
