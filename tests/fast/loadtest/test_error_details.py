"""A refused call of a load-test player is reported with the gateway's details, not only its code:
two cash300 runs ended with ``balance: CANCELLED`` (25 players at once) and nothing to say why."""

from __future__ import annotations

import asyncio

import grpc

from cardroom.v1 import dealer_pb2 as d
from tests.fast.loadtest.players import load_player


class RefusingClient:
    async def balances(self) -> None:
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(), details="Received RST_STREAM"
        )


def test_a_refused_balance_read_is_reported_with_its_details() -> None:
    player = load_player("bot-1", d.TableInfo(table_id="t-1", min_buy_in=100, max_buy_in=1000))
    player.client = RefusingClient()  # type: ignore[assignment]

    assert asyncio.run(player._balance()) is None
    [example] = player.recorder.examples
    assert example.endswith("s balance: CANCELLED Received RST_STREAM")


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
    """One grpc.aio client process with more than about 1,100 unary calls in flight ends some of them
    CANCELLED on its own (docs/capacity.md): the run's players share one bound."""

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
