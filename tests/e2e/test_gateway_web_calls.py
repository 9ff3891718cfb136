"""The gateway's calls for gRPC-Web clients against the real dealer, wallet and connection monitor
(issue 18, "Transport": "the gateway gains a server stream of the player's table events and unary
calls for actions"): two players each watch the table with the WatchMyTable server stream and play
a whole hand of Hold'em with unary TableCommand calls only — each sees his own hole cards and the
other's face down, an action out of turn and one for the other player are refused with their
status, a ping answers, sitting out is a seat command — the streams outlive a kill -9 of the dealer
(the gateway re-opens the Watch on the new one), and after leaving the wallets hold every chip."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc
import pytest

from cardroom.client.connection import GatewayClient
from cardroom.runtime import errors
from cardroom.v1 import common_pb2, dealer_pb2 as d, dealer_pb2_grpc, gateway_pb2 as g
from tests.e2e.stack import PLAY_GRANT, Stack


@dataclass
class WebPlayer:
    """A player as a browser plays: one WatchMyTable stream, a unary TableCommand per request."""

    client: GatewayClient
    name: str
    session_id: str = ""
    seat: int = 0
    events: list[g.PlayEvent] = field(default_factory=list)
    call: grpc.aio.UnaryStreamCall | None = None

    def watch(self, table_id: str, merged: asyncio.Queue[tuple[WebPlayer, g.PlayEvent]]) -> asyncio.Task[None]:
        self.call = self.client.stub.WatchMyTable(
            g.WatchMyTableRequest(table_id=table_id), metadata=self.client.metadata
        )

        async def pump() -> None:
            assert self.call is not None
            async for event in self.call:
                self.events.append(event)
                await merged.put((self, event))

        return asyncio.create_task(pump())

    async def command(self, request_id: str = "", **kind: object) -> g.PlayEvent:
        request = g.TableCommandRequest(session_id=self.session_id, request_id=request_id or uuid.uuid4().hex, **kind)
        return await self.client.stub.TableCommand(request, metadata=self.client.metadata, timeout=30)

    def table(self, kind: str) -> list:
        return [
            getattr(e.table, kind)
            for e in self.events
            if e.WhichOneof("kind") == "table" and e.table.WhichOneof("event") == kind
        ]


async def _next(merged: asyncio.Queue[tuple[WebPlayer, g.PlayEvent]]) -> tuple[WebPlayer, g.PlayEvent]:
    return await asyncio.wait_for(merged.get(), 60)


def _is(event: g.PlayEvent, kind: str) -> bool:
    return event.WhichOneof("kind") == "table" and event.table.WhichOneof("event") == kind


def test_watch_and_play_a_hand_with_unary_calls_only(cardroom: Stack) -> None:
    asyncio.run(_scenario(cardroom))


async def _scenario(stack: Stack) -> None:
    table_id = f"web-{stack.run}"
    async with stack.aio_channel("dealer") as channel:
        await dealer_pb2_grpc.DealerStub(channel).CreateTable(
            d.CreateTableRequest(
                table_id=table_id,
                config=d.TableConfig(
                    name="web calls test",
                    variant="NT",
                    currency=common_pb2.CURRENCY_PLAY,
                    seats=2,
                    stakes=d.Stakes(small_blind=1, big_blind=2),
                    # one hand, then a long pause: both leave before a second one is dealt
                    hand_pause_seconds=60,
                    clock=d.ClockSettings(action_seconds=600),  # no decision times out on a loaded machine
                ),
            ),
            timeout=10,
        )
    ann = WebPlayer(GatewayClient(stack.address("gateway")), f"ann{uuid.uuid4().hex[:6]}")
    ben = WebPlayer(GatewayClient(stack.address("gateway")), f"ben{uuid.uuid4().hex[:6]}")
    players = (ann, ben)
    merged: asyncio.Queue[tuple[WebPlayer, g.PlayEvent]] = asyncio.Queue()
    pumps: list[asyncio.Task[None]] = []
    try:
        for p in players:
            await p.client.login(p.name)
            pumps.append(p.watch(table_id, merged))
        opened = {}
        while len(opened) < 2:  # each stream: its session first, then the table's snapshot
            who, event = await _next(merged)
            if event.WhichOneof("kind") == "session":
                assert who.name not in opened and event.session.table_id == table_id
                who.session_id = event.session.session_id
                opened[who.name] = True
        assert ann.session_id != ben.session_id
        pong = await ann.command(ping=g.Ping())
        assert pong.WhichOneof("kind") == "pong" and pong.pong.server_time.seconds > 0
        for p, buy_in in ((ann, 100), (ben, 150)):
            p.seat = (await p.client.join(table_id, buy_in)).seat.seat

        refused: list[str] = []

        async def refusals(who: WebPlayer, other: WebPlayer) -> None:
            """Once, at the first turn: the player not on turn acts, and acts for the one on turn."""
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await other.command("early", act=g.PlayAction(action=d.ACTION_TYPE_CALL))
            refused.append(f"{caught.value.code().name} {errors.reason_of(caught.value)}")
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await other.command(act=g.PlayAction(action=d.ACTION_TYPE_FOLD, player_id=who.name))
            refused.append(f"{caught.value.code().name} {errors.reason_of(caught.value)}")

        acted: list[str] = []

        async def play(until: Callable[[WebPlayer, g.PlayEvent], bool]) -> None:
            """Each player checks or calls on his turns (unary calls only) until ``until`` holds."""
            while True:
                who, event = await _next(merged)
                if until(who, event):
                    return
                if not _is(event, "turn_started") or event.table.turn_started.to_act.player_id != who.name:
                    continue
                if not refused:
                    await refusals(who, ben if who is ann else ann)
                turn = event.table.turn_started.to_act
                action = d.ACTION_TYPE_CHECK if d.ACTION_TYPE_CHECK in turn.actions else d.ACTION_TYPE_CALL
                rid = f"{who.name}-{len(acted)}"
                done = await who.command(rid, act=g.PlayAction(action=action, hand_number=event.table.hand_number))
                assert done.WhichOneof("kind") == "result" and done.result.request_id == rid
                assert done.result.act.action.action == action
                acted.append(rid)

        finished: set[str] = set()

        def both_saw_the_hand_end(who: WebPlayer, event: g.PlayEvent) -> bool:
            if _is(event, "hand_finished"):
                finished.add(who.name)
            return len(finished) == 2

        await play(both_saw_the_hand_end)
        assert refused == ["FAILED_PRECONDITION OUT_OF_TURN", "PERMISSION_DENIED OTHER_PLAYER"]
        assert len(acted) >= 4  # a check-down heads-up: 2 preflop, 1 on each later street at least
        for p in players:
            other = ben if p is ann else ann
            dealt = {c.seat: list(c.cards) for c in p.table("cards_dealt")}
            assert "??" not in dealt[p.seat] and len(dealt[p.seat]) == 2  # his own hole cards
            assert dealt[other.seat] == ["??", "??"]  # the other's stay hidden
            assert len(p.table("action")) == len(acted)  # every action reached both streams
        first = ann.table("hand_finished")[0]
        assert sum(r.amount for r in first.results) + first.rake == 0

        sat_out = await ann.command("sit", seat=g.SeatCommand(kind=g.SeatCommand.KIND_SIT_OUT))
        assert sat_out.WhichOneof("kind") == "result" and sat_out.result.request_id == "sit"
        await play(
            lambda who, e: (
                who is ann
                and _is(e, "seat_changed")
                and e.table.seat_changed.change == "sat_out"
                and e.table.seat_changed.seat.player_id == ann.name
            )
        )

        # kill -9 the dealer: both streams stay open, the gateway re-opens their Watch on the new one
        await asyncio.to_thread(stack.restart_dealer)
        await play(lambda who, e: all(len(p.table("snapshot")) >= 2 for p in players))
        for p in players:
            assert (await p.command(ping=g.Ping())).WhichOneof("kind") == "pong"  # the sessions are still open

        for p in players:
            await p.client.leave(table_id)
        gone: set[str] = set()

        def both_stood_up(who: WebPlayer, event: g.PlayEvent) -> bool:
            if who is ann and _is(event, "seat_changed") and event.table.seat_changed.change == "stood_up":
                gone.add(event.table.seat_changed.seat.player_id)
            return gone >= {ann.name, ben.name}

        await play(both_stood_up)
        rake = sum({h.hand_number: h.rake for h in ann.table("hand_finished")}.values())
        totals = []
        for p in players:
            balances = {b.currency: b.balance for b in (await p.client.balances()).balances}
            totals.append(balances[common_pb2.CURRENCY_PLAY])
        assert sum(totals) + rake == 2 * PLAY_GRANT
    finally:
        for p in players:
            if p.call is not None:
                p.call.cancel()
        for task in pumps:
            task.cancel()
        await asyncio.gather(*pumps, return_exceptions=True)
        for p in players:
            await p.client.close()
