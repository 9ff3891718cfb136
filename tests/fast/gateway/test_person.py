"""Fast tier: the gateway as a person meets it (issue 13) — one Play session per player, leave's
chips still coming back, chips queued during a hand, post the big blind now."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc

from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from tests.fast.gateway.fakes import FakeDealer, backends
from tests.fast.gateway.test_gateway_service import auth, run

TABLE = d.TableEvent(table_id="t1", snapshot=d.TableState(info=d.TableInfo(table_id="t1")))


class Stream:
    """One Play stream through the real gateway servicer: requests in, events out."""

    def __init__(self, stub: g_grpc.GatewayStub, player: str) -> None:
        self.requests: asyncio.Queue[g.PlayRequest | None] = asyncio.Queue()
        self.call = stub.Play(self._requests(), metadata=auth(player))

    async def _requests(self) -> AsyncIterator[g.PlayRequest]:
        while (request := await self.requests.get()) is not None:
            yield request

    def send(self, request_id: str = "", **kind: Any) -> None:
        self.requests.put_nowait(g.PlayRequest(request_id=request_id, **kind))

    async def next(self) -> g.PlayEvent | None:
        event = await asyncio.wait_for(self.call.read(), 5)
        return None if event is grpc.aio.EOF else event


def test_a_second_play_session_takes_over_and_the_first_is_told_why_and_closed() -> None:
    """Issue 13 bug 4: the same player could open two Play sessions that both got the turn."""
    dealer = FakeDealer(answers={"Act": [d.ActResponse(hand_number=1)]}, watches=[[TABLE]])

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        first = Stream(stub, "ann")
        first.send("o1", open=g.OpenTable(table_id="t1"))
        assert (await first.next()).WhichOneof("kind") == "table"  # type: ignore[union-attr]
        second = Stream(stub, "ann")
        second.send("o2", open=g.OpenTable(table_id="t1"))
        assert (await second.next()).WhichOneof("kind") == "table"  # type: ignore[union-attr]
        told = await first.next()
        assert told is not None and told.WhichOneof("kind") == "error"
        assert told.error.reason == "SESSION_TAKEN_OVER" and "another session" in told.error.message
        assert await first.next() is None  # and closed
        second.send("a1", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))
        done = await second.next()
        assert done is not None and done.WhichOneof("kind") == "result" and done.result.request_id == "a1"
        other = Stream(stub, "bob")  # another player: no take-over
        other.send("o3", open=g.OpenTable(table_id="t1"))
        assert (await other.next()).WhichOneof("kind") == "table"  # type: ignore[union-attr]
        second.send("p", ping=g.Ping())
        assert (await second.next()).WhichOneof("kind") == "pong"  # type: ignore[union-attr]
        for s in (second, other):
            s.requests.put_nowait(None)
            s.call.cancel()

    run(backends(dealer=dealer), scenario)


def test_leave_reports_the_chips_still_coming_back_and_join_can_post_now() -> None:
    dealer = FakeDealer(
        answers={
            "StandUp": [d.StandUpResponse(pending=True, returning=940)],
            "SitDown": [d.SeatResponse(seat=d.SeatView(seat=2, player_id="ann", stack=500))],
        }
    )

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        left = await stub.Leave(g.LeaveRequest(table_id="t1"), metadata=auth("ann"))
        assert left.pending and left.returning == 940 and left.cashed_out == 0
        await stub.Join(g.JoinRequest(table_id="t1", buy_in=500, post_now=True), metadata=auth("ann"))
        sat = [r for m, r in dealer.calls if m == "SitDown"]
        assert sat[0].post_now and sat[0].player_id == "ann"

    run(backends(dealer=dealer), scenario)


def test_add_chips_during_the_hand_says_queued_and_post_now_asks_the_dealer() -> None:
    dealer = FakeDealer(
        answers={"AddChips": [d.SeatResponse(queued=True)], "ComeBack": [d.SeatResponse()]}, watches=[[TABLE]]
    )

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        s = Stream(stub, "ann")
        s.send("o", open=g.OpenTable(table_id="t1"))
        await s.next()
        s.send("add", seat=g.SeatCommand(kind=g.SeatCommand.KIND_ADD_CHIPS, amount=300))
        added = await s.next()
        assert added is not None and added.result.request_id == "add" and added.result.queued
        s.send("post", seat=g.SeatCommand(kind=g.SeatCommand.KIND_POST_NOW))
        posted = await s.next()
        assert posted is not None and posted.WhichOneof("kind") == "result"
        came = [r for m, r in dealer.calls if m == "ComeBack"]
        assert came[0].post_now and came[0].player_id == "ann"
        s.requests.put_nowait(None)
        s.call.cancel()

    run(backends(dealer=dealer), scenario)


def test_the_lobby_hides_unlisted_tables_from_all_but_their_owner_and_keeps_a_stable_order() -> None:
    def info(table_id: str, **config: Any) -> d.TableInfo:
        return d.TableInfo(table_id=table_id, config=d.TableConfig(variant="NT", **config))

    listed = d.ListTablesResponse(
        tables=[info("zeta"), info("load-1", unlisted=True, owner="loadtester"), info("alpha")]
    )
    dealer = FakeDealer(answers={"ListTables": [listed]})

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await stub.Lobby(g.LobbyRequest(), metadata=auth("ann"))
        assert [t.table_id for t in ann.tables] == ["alpha", "zeta"]
        owner = await stub.Lobby(g.LobbyRequest(), metadata=auth("loadtester"))
        assert [t.table_id for t in owner.tables] == ["alpha", "load-1", "zeta"]

    run(backends(dealer=dealer), scenario)
