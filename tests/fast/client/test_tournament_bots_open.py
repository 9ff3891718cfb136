"""Fast tier: ``cardroom bots --tournament`` when its table cannot be opened yet.

The gateway answers a Play stream whose table the dealer does not have (not opened yet, or the
dealer restarting) with an error event carrying the opening's request id, and keeps the stream
open. The bot must take that as "look again" — before the fix it took it for a refused action and
waited on the stream for good, and its table was played by timeouts only (issue 15's stalled sit &
go on the dealer)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

from cardroom.client.connection import OPEN_REQUEST_ID
from cardroom.client.tournament_bots import TournamentBots, TournamentBotSettings
from cardroom.v1 import gateway_pb2 as g


class OpenRefused:
    """A Play stream that says the table is not there, then stays open (as the gateway's does)."""

    def __init__(self) -> None:
        self.closed = False

    async def send(self, request: g.PlayRequest) -> str:
        return request.request_id

    async def close(self) -> None:
        self.closed = True

    def cancel(self) -> None:
        self.closed = True

    async def __aiter__(self) -> AsyncIterator[g.PlayEvent]:
        yield g.PlayEvent(
            error=g.PlayError(request_id=OPEN_REQUEST_ID, code="NOT_FOUND", reason="", message="no table tt.x.1")
        )
        await asyncio.Event().wait()  # open for good


class Client:
    def __init__(self) -> None:
        self.streams: list[OpenRefused] = []

    def play(self, table_id: str) -> OpenRefused:
        self.streams.append(OpenRefused())
        return self.streams[-1]


def test_a_table_not_open_yet_is_looked_for_again_not_waited_on() -> None:
    bots = TournamentBots(TournamentBotSettings(gateway="-", operator_token="-", tournament_id="x"))
    client = Client()

    async def body() -> bool:
        return await asyncio.wait_for(bots.play(client, "tbotx1", "tt.x.1", random.Random(1)), 5)  # type: ignore[arg-type]

    assert asyncio.run(body()) is False  # not gone from the table: the bot asks for its status again
    assert client.streams[0].closed
