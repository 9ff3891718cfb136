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
