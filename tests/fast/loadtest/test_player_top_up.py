"""Issue 14 chaos finding 1: after the wallet's kill -9 a bot's top-up was refused as UNAVAILABLE
("wallet unavailable (buy-in); retry with the same request_id") and its table dealt no hand again. The
bot tried once per hand number, and no hand starts while a seated player is short (or sitting out): it
now sends the same seat command again until it is taken."""

from __future__ import annotations

import asyncio

from cardroom.client.loadtest import player as player_module
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g
from tests.fast.loadtest.players import QueuedStream, load_player

ME = "bot-1"


class FakeStream(QueuedStream):
    """A Play stream: the table's events, then an answer to each ``kind`` command (UNAVAILABLE at first)."""

    def __init__(self, table: d.TableInfo, refusals: int, kind: int, me: d.SeatView) -> None:
        super().__init__()
        self.sent: list[g.PlayRequest] = []
        self.refusals, self.kind = refusals, kind
        seats = [me, d.SeatView(seat=2, player_id="bot-2", stack=500)]
        state = d.TableState(info=table, hand_number=3, in_hand=False, seats=seats)
        self.events.put_nowait(g.PlayEvent(table=d.TableEvent(table_id=table.table_id, sequence=1, snapshot=state)))
        finished = d.TableEvent(table_id=table.table_id, sequence=2, hand_number=3)
        finished.hand_finished.hand_number = 3
        self.events.put_nowait(g.PlayEvent(table=finished))

    async def send(self, request: g.PlayRequest) -> None:
        self.sent.append(request)
        if request.seat.kind != self.kind:
            return
        if self.refusals > 0:
            self.refusals -= 1
            error = g.PlayError(request_id=request.request_id, code="UNAVAILABLE", message="wallet unavailable")
            self.events.put_nowait(g.PlayEvent(error=error))
        else:
            self.events.put_nowait(None)  # taken: the test is over


def _play(kind: int, me: d.SeatView) -> list[g.PlayRequest]:
    """What the bot sends of ``kind`` when the first two are refused as UNAVAILABLE."""
    table = d.TableInfo(table_id="t-1", min_buy_in=100, max_buy_in=1000)
    bot = load_player(ME, table)
    stream = FakeStream(table, refusals=2, kind=kind, me=me)

    async def play() -> None:
        await asyncio.wait_for(bot._play(stream, 0.0, False), 10)  # type: ignore[arg-type]

    asyncio.run(play())
    return [r for r in stream.sent if r.seat.kind == kind]


def test_a_top_up_the_wallet_could_not_take_is_sent_again_with_the_same_request_id(monkeypatch) -> None:
    monkeypatch.setattr(player_module, "SEAT_RETRY_SECONDS", 0.0, raising=False)
    top_ups = _play(g.SeatCommand.KIND_ADD_CHIPS, d.SeatView(seat=1, player_id=ME, stack=10))
    assert len(top_ups) == 3, top_ups  # refused twice, taken the third time
    assert {r.request_id for r in top_ups} == {top_ups[0].request_id}  # the same request: idempotent
    assert top_ups[0].seat.amount == 100


def test_a_come_back_refused_as_unavailable_is_sent_again_with_the_same_request_id(monkeypatch) -> None:
    monkeypatch.setattr(player_module, "SEAT_RETRY_SECONDS", 0.0, raising=False)
    backs = _play(g.SeatCommand.KIND_COME_BACK, d.SeatView(seat=1, player_id=ME, stack=500, sitting_out=True))
    assert len(backs) == 3, backs
    assert {r.request_id for r in backs} == {backs[0].request_id}


def test_a_player_standing_up_at_the_end_of_the_run_does_not_top_up() -> None:
    """At the run's end all players stand up within --stop-spread; a top-up then (seen: refused
    DEADLINE_EXCEEDED under 360 stand-ups a second) buys chips the player is about to cash out."""
    table = d.TableInfo(table_id="t-1", min_buy_in=100, max_buy_in=1000)
    bot = load_player(ME, table)
    bot.stopping.set()
    stream = FakeStream(
        table, refusals=0, kind=g.SeatCommand.KIND_ADD_CHIPS, me=d.SeatView(seat=1, player_id=ME, stack=10)
    )
    stream.events.put_nowait(None)  # the stream ends after the hand

    async def play() -> None:
        await asyncio.wait_for(bot._play(stream, 0.0, False), 10)  # type: ignore[arg-type]

    asyncio.run(play())
    assert not [r for r in stream.sent if r.seat.kind == g.SeatCommand.KIND_ADD_CHIPS]
