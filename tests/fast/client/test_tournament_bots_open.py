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

import grpc

from cardroom.client.bots import retrying
from cardroom.client.connection import OPEN_REQUEST_ID
from cardroom.client.tournament_bots import TournamentBots, TournamentBotSettings
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g


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


ME = "tbotx1"


class SlowDown:
    """A Play stream at the bot's turn whose gateway refuses the bot's first action as over the
    player's rate (RESOURCE_EXHAUSTED, as `gateway.play` answers), takes the next, then busts him."""

    def __init__(self) -> None:
        self.sent: list[g.PlayRequest] = []
        self.events: asyncio.Queue[g.PlayEvent] = asyncio.Queue()
        legal = d.LegalActionsView(
            seat=1, player_id=ME, actions=[d.ACTION_TYPE_FOLD, d.ACTION_TYPE_CALL], call_amount=20
        )
        state = d.TableState(
            hand_number=3,
            in_hand=True,
            seats=[d.SeatView(seat=1, player_id=ME, stack=980), d.SeatView(seat=2, player_id="tbotx2", stack=960)],
            to_act=legal,
        )
        self.events.put_nowait(g.PlayEvent(table=d.TableEvent(table_id="tt.x.1", sequence=7, snapshot=state)))

    async def send(self, request: g.PlayRequest) -> None:
        if request.HasField("open"):
            return
        self.sent.append(request)
        if len(self.sent) == 1:
            refusal = g.PlayError(
                request_id=request.request_id,
                code="RESOURCE_EXHAUSTED",
                reason="PLAYER_RATE_LIMITED",
                message="rate limit: at most 20 calls/s per player",
            )
            self.events.put_nowait(g.PlayEvent(error=refusal))
            return
        self.events.put_nowait(g.PlayEvent(result=g.PlayResult(request_id=request.request_id)))
        gone = d.SeatChanged(seat=d.SeatView(seat=1, player_id=ME), change="busted")
        self.events.put_nowait(g.PlayEvent(table=d.TableEvent(table_id="tt.x.1", sequence=8, seat_changed=gone)))

    async def close(self) -> None:
        return None

    def cancel(self) -> None:
        return None

    async def __aiter__(self) -> AsyncIterator[g.PlayEvent]:
        while True:
            yield await self.events.get()


def test_an_action_refused_as_over_the_rate_is_sent_again_in_the_same_turn() -> None:
    """The gateway's "slow down" (RESOURCE_EXHAUSTED, the player's 20 actions/s) is not a refused
    move: the turn is still the bot's and waits for it. Before, the bot counted the error and let
    its turn run out (3 s, then the 30 s time bank): a bots' sit & go on the dealer stalled for
    40-110 s whenever two bots with no think time outran the limit heads-up."""
    bots = TournamentBots(TournamentBotSettings(gateway="-", operator_token="-", tournament_id="x"))
    stream = SlowDown()

    class OneStream:
        def play(self, table_id: str) -> SlowDown:
            return stream

    async def body() -> bool:
        return await asyncio.wait_for(bots.play(OneStream(), ME, "tt.x.1", random.Random(1)), 5)  # type: ignore[arg-type]

    assert asyncio.run(body()) is True  # busted after his action: he left the table
    assert [r.WhichOneof("kind") for r in stream.sent] == ["act", "act"]
    first, again = stream.sent
    assert again.request_id != first.request_id and again.act.hand_number == first.act.hand_number == 3
    assert bots.stats.actions == 1 and bots.stats.reasons == {"PLAYER_RATE_LIMITED": 1}
    assert len(bots.stats.latencies) == 2  # each answer timed from its sending (the progress line's act latency)


def test_an_idempotent_call_refused_as_over_the_rate_is_made_again() -> None:
    outcomes: list[object] = [
        grpc.aio.AioRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata(), "slow"),
        "registered",
    ]

    async def call() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return str(outcome)

    assert asyncio.run(retrying(call, delay=0)) == "registered"
