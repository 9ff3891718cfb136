"""The registration burst sends at most ``UNARY_IN_FLIGHT`` calls at once and says so: one grpc.aio
client process with more than about 1,100 unary calls in flight cancels some of them on its own
(docs/capacity.md, "Capacity at the SLO, and the load generator's own CANCELLED")."""

from __future__ import annotations

import asyncio

import pytest

from cardroom.client.loadtest import burst as burst_module
from cardroom.client.loadtest.burst import Burst, Entrant


class CountingClient:
    """Register and unregister calls that take a while, counted in flight across every entrant."""

    def __init__(self) -> None:
        self.in_flight = self.most = self.calls = 0

    async def _call(self) -> object:
        self.in_flight += 1
        self.calls += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        return type("Reply", (), {"replayed": False})()

    async def register_tournament(self, tournament_id: str, request_id: str) -> object:
        return await self._call()

    async def unregister_tournament(self, tournament_id: str, request_id: str) -> object:
        return await self._call()


def _burst(entrants: int, client: CountingClient) -> Burst:
    run = Burst("unused:1", "x", "unused:2", "t-1", "lt", entrants=entrants, buy_in=100, fee=10)
    run.players = [Entrant(f"p{i}", f"r{i}", retries=i % 4 == 0, client=client) for i in range(entrants)]  # type: ignore[arg-type]
    return run


def test_a_burst_above_the_bound_goes_out_that_many_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(burst_module, "UNARY_IN_FLIGHT", 5)
    client = CountingClient()
    run = _burst(12, client)

    asyncio.run(run.burst())
    assert client.most == 5
    assert client.calls == 12 + 2 * 3  # each of the 3 retriers: twice more
    assert all(p.registered for p in run.players)
    assert len(run.notes) == 1 and "15 registrations at once" in run.notes[0]

    client.most = 0
    asyncio.run(run.leave())
    assert client.most == 5


def test_a_burst_within_the_bound_is_all_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(burst_module, "UNARY_IN_FLIGHT", 50)
    client = CountingClient()
    run = _burst(12, client)

    asyncio.run(run.burst())
    assert client.most == 15  # 12 first calls and 3 retries at the same instant
    assert run.notes == []
