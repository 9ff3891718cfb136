"""`cardroom bots` (the demo tables of `make run`, the chaos test's players): a top-up the wallet could
not take is sent again with the same request id. The chaos test found a table idle for good after the
wallet's kill -9: two bots busted while the wallet restarted, their one top-up each came back
UNAVAILABLE, and with one player left no hand came to bring a second try (issue 14, "no table
freezes")."""

from __future__ import annotations

import asyncio
import random

from cardroom.client import bots as bots_module, seat_commands
from cardroom.client.bots import BotRun, BotSettings
from cardroom.client.seat_commands import SeatCommands
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g

ME = "bot-1"
TABLE = d.TableInfo(table_id="t-1", min_buy_in=100, max_buy_in=200, config=d.TableConfig(variant="NT"))


class FakeStream:
    """The table after a hand in which the bot busted; ADD_CHIPS refused UNAVAILABLE ``refusals`` times."""

    def __init__(self, refusals: int, code: str = "UNAVAILABLE") -> None:
        self.refusals = refusals
        self.code = code
        self.sent: list[g.PlayRequest] = []
        self.events: asyncio.Queue[g.PlayEvent] = asyncio.Queue()
        seats = [d.SeatView(seat=1, player_id=ME, stack=0), d.SeatView(seat=2, player_id="bot-2", stack=400)]
        snapshot = d.TableEvent(
            table_id="t-1", sequence=1, snapshot=d.TableState(info=TABLE, hand_number=5, seats=seats)
        )
        finished = d.TableEvent(table_id="t-1", sequence=2, hand_number=5)
        finished.hand_finished.hand_number = 5
        for event in (snapshot, finished):
            self.events.put_nowait(g.PlayEvent(table=event))

    async def send(self, request: g.PlayRequest) -> str:
        self.sent.append(request)
        if request.seat.kind != g.SeatCommand.KIND_ADD_CHIPS:
            return request.request_id
        if self.refusals > 0:
            self.refusals -= 1
            error = g.PlayError(request_id=request.request_id, code=self.code, message="wallet unavailable")
            self.events.put_nowait(g.PlayEvent(error=error))
        else:  # taken: the bot is then stood up (the test ends)
            self.events.put_nowait(g.PlayEvent(result=g.PlayResult(request_id=request.request_id)))
            up = d.TableEvent(table_id="t-1", sequence=3)
            up.seat_changed.seat.player_id, up.seat_changed.change = ME, "stood_up"
            self.events.put_nowait(g.PlayEvent(table=up))
        return request.request_id

    def __aiter__(self) -> FakeStream:
        return self

    async def __anext__(self) -> g.PlayEvent:
        return await self.events.get()

    async def close(self) -> None:
        return None

    def cancel(self) -> None:
        return None


class FakeClient:
    stream: FakeStream

    def __init__(self, address: str) -> None:
        self.address = address

    async def login(self, player: str) -> None:
        return None

    async def join(self, table_id: str, buy_in: int, request_id: str = "") -> None:
        return None

    def play(self, table_id: str) -> FakeStream:
        return FakeClient.stream

    async def leave(self, table_id: str) -> g.LeaveResponse:
        return g.LeaveResponse()

    async def close(self) -> None:
        return None


def test_a_top_up_refused_as_unavailable_is_sent_again_with_the_same_request_id(monkeypatch) -> None:
    monkeypatch.setattr(bots_module, "GatewayClient", FakeClient)
    monkeypatch.setattr(seat_commands, "RETRY_SECONDS", 0.01)
    FakeClient.stream = FakeStream(refusals=3)

    async def play() -> None:
        run = BotRun(BotSettings(gateway="unused:1", operator_token="x"))
        await asyncio.wait_for(run.bot(ME, TABLE, True, random.Random(1)), 10)

    asyncio.run(play())
    top_ups = [r for r in FakeClient.stream.sent if r.seat.kind == g.SeatCommand.KIND_ADD_CHIPS]
    assert len(top_ups) == 4, top_ups  # refused three times, taken the fourth
    assert {r.request_id for r in top_ups} == {top_ups[0].request_id}  # one command: idempotent
    assert top_ups[0].seat.amount == 200


def test_a_top_up_whose_answer_ran_out_of_time_is_sent_again_with_the_same_request_id(monkeypatch) -> None:
    """The chaos test's table frozen after the broker's kill -9: two busted bots' top-ups waited
    behind snapshot writes the broker could not take and came back DEADLINE_EXCEEDED; sent once,
    the table never dealt again."""
    monkeypatch.setattr(bots_module, "GatewayClient", FakeClient)
    monkeypatch.setattr(seat_commands, "RETRY_SECONDS", 0.01)
    FakeClient.stream = FakeStream(refusals=2, code="DEADLINE_EXCEEDED")

    async def play() -> None:
        run = BotRun(BotSettings(gateway="unused:1", operator_token="x"))
        await asyncio.wait_for(run.bot(ME, TABLE, True, random.Random(1)), 10)

    asyncio.run(play())
    top_ups = [r for r in FakeClient.stream.sent if r.seat.kind == g.SeatCommand.KIND_ADD_CHIPS]
    assert len(top_ups) == 3 and {r.request_id for r in top_ups} == {top_ups[0].request_id}


def test_only_unavailable_is_tried_again_and_a_reconnect_resends_what_is_unanswered() -> None:
    async def body() -> list[g.PlayRequest]:
        out: list[g.PlayRequest] = []

        async def send(request: g.PlayRequest) -> None:
            out.append(request)

        seats = SeatCommands(send, retry_seconds=0.0)
        add = await seats.send(g.SeatCommand.KIND_ADD_CHIPS, 50)
        back = await seats.send(g.SeatCommand.KIND_COME_BACK)
        refused = g.PlayEvent(error=g.PlayError(request_id=back, code="FAILED_PRECONDITION", message="not out"))
        assert seats.answered(refused) and not seats.awaiting(g.SeatCommand.KIND_COME_BACK)
        assert not seats.answered(g.PlayEvent(result=g.PlayResult(request_id="someone-else")))
        await seats.resend_all()  # the stream broke before the add-chips was answered
        assert seats.answered(g.PlayEvent(result=g.PlayResult(request_id=add)))
        assert not seats.pending
        return out

    sent = asyncio.run(body())
    assert [(r.seat.kind, r.request_id) for r in sent][2:] == [(g.SeatCommand.KIND_ADD_CHIPS, sent[0].request_id)]
    assert len(sent) == 3
