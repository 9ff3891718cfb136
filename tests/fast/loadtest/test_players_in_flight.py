"""The load test's players share one bound on their unary calls in flight (``UNARY_IN_FLIGHT``): one
grpc.aio client process with more than about 1,100 unary calls in flight ends some of them CANCELLED on
its own (docs/capacity.md, "Capacity at the SLO, and the load generator's own CANCELLED")."""

from __future__ import annotations

import asyncio

from cardroom.v1 import dealer_pb2 as d
from tests.fast.loadtest.players import load_player


class CountingClient:
    """Balances that take a while, counting the calls in flight across every player using it."""

    def __init__(self) -> None:
        self.in_flight = self.most = 0

    async def balances(self) -> object:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        return type("Reply", (), {"balances": []})()


def test_the_players_unary_calls_in_flight_are_bounded_by_the_runs_semaphore() -> None:
    async def run() -> list[int | None]:
        client, calls = CountingClient(), asyncio.Semaphore(2)
        players = []
        for i in range(6):
            player = load_player(f"bot-{i}", d.TableInfo(table_id="t-1", min_buy_in=100, max_buy_in=1000))
            player.client, player.calls = client, calls  # type: ignore[assignment]
            players.append(player)
        balances = await asyncio.gather(*(p._balance() for p in players))
        assert client.most == 2
        return balances

    assert asyncio.run(run()) == [0] * 6
