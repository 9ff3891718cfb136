"""Dealer replicas for the routing tests: an in-process ``Dealer`` servicer per replica on a real
``grpc.aio`` server (tests/fast/inproc.py), holding its own tables and a player's hands, recording
every call it gets; a table it does not hold is UNAVAILABLE ("dealt by another dealer"), as a sharded
dealer answers. ``before`` runs
ahead of every answer (e.g. to move a claim in the directory, or to fail the call)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardroom.v1 import dealer_pb2 as d, dealer_pb2_grpc
from tests.fast.inproc import serving

Before = Callable[[str, str, grpc.aio.ServicerContext], Awaitable[None]]


@dataclass
class Replica(dealer_pb2_grpc.DealerServicer):
    name: str
    tables: dict[str, d.TableInfo] = field(default_factory=dict)
    hands: list[d.RecentHand] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    """(method, table id or player id) of every call, in order."""
    before: Before | None = None
    end_watch: asyncio.Event | None = None
    """Set: the open Watch streams and table feeds end (without table_closed), as a replica giving its
    tables up."""
    feeds: bool = True
    """False: a replica of the version before WatchTableFeed (UNIMPLEMENTED: the sessions watch alone)."""
    address: str = ""

    def hold(self, *table_ids: str) -> Replica:
        for table_id in table_ids:
            self.tables[table_id] = d.TableInfo(table_id=table_id, config=d.TableConfig(name=f"{self.name}:{table_id}"))
        return self

    async def _enter(self, method: str, key: str, context: grpc.aio.ServicerContext) -> None:
        self.calls.append((method, key))
        if self.before is not None:
            await self.before(method, key, context)

    async def _table(self, method: str, table_id: str, context: grpc.aio.ServicerContext) -> d.TableInfo:
        await self._enter(method, table_id, context)
        info = self.tables.get(table_id)
        if info is None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"table {table_id!r} is dealt by another dealer")
        assert info is not None
        return info

    async def ListTables(self, request: d.ListTablesRequest, context: Any) -> d.ListTablesResponse:
        await self._enter("ListTables", "", context)
        return d.ListTablesResponse(tables=list(self.tables.values()))

    async def GetTable(self, request: d.GetTableRequest, context: Any) -> d.TableState:
        return d.TableState(info=await self._table("GetTable", request.table_id, context))

    async def CreateTable(self, request: d.CreateTableRequest, context: Any) -> d.TableInfo:
        await self._enter("CreateTable", request.table_id, context)
        table_id = request.table_id or f"{self.name}-{len(self.tables) + 1}"
        self.hold(table_id)
        return self.tables[table_id]

    async def SitDown(self, request: d.SitDownRequest, context: Any) -> d.SeatResponse:
        await self._table("SitDown", request.table_id, context)
        return d.SeatResponse(seat=d.SeatView(seat=request.seat or 1, player_id=request.player_id))

    async def StandUp(self, request: d.SeatCommandRequest, context: Any) -> d.StandUpResponse:
        await self._table("StandUp", request.table_id, context)
        return d.StandUpResponse(cashed_out=100)

    async def AddChips(self, request: d.AddChipsRequest, context: Any) -> d.SeatResponse:
        await self._table("AddChips", request.table_id, context)
        return d.SeatResponse(queued=True)

    async def SitOut(self, request: d.SeatCommandRequest, context: Any) -> d.SeatResponse:
        await self._table("SitOut", request.table_id, context)
        return d.SeatResponse()

    async def ComeBack(self, request: d.SeatCommandRequest, context: Any) -> d.SeatResponse:
        await self._table("ComeBack", request.table_id, context)
        return d.SeatResponse()

    async def Act(self, request: d.ActRequest, context: Any) -> d.ActResponse:
        await self._table("Act", request.table_id, context)
        return d.ActResponse(hand_number=7)

    async def PlayerHands(self, request: d.PlayerHandsRequest, context: Any) -> d.PlayerHandsResponse:
        await self._enter("PlayerHands", request.player_id, context)
        mine = [h for h in self.hands if h.player_id == request.player_id]
        return d.PlayerHandsResponse(hands=mine[: request.limit] if request.limit > 0 else mine)

    async def Watch(self, request: d.WatchRequest, context: Any) -> AsyncIterator[d.TableEvent]:
        info = await self._table("Watch", request.table_id, context)
        yield d.TableEvent(table_id=request.table_id, snapshot=d.TableState(info=info))
        ended = self.end_watch if self.end_watch is not None else asyncio.Event()
        await ended.wait()

    async def WatchBursts(self, request: d.WatchRequest, context: Any) -> AsyncIterator[d.TableEventBatch]:
        info = await self._table("WatchBursts", request.table_id, context)
        yield d.TableEventBatch(events=[d.TableEvent(table_id=request.table_id, snapshot=d.TableState(info=info))])
        ended = self.end_watch if self.end_watch is not None else asyncio.Event()
        await ended.wait()

    async def WatchTableFeed(
        self, requests: AsyncIterator[d.TableFeedRequest], context: Any
    ) -> AsyncIterator[d.TableFeed]:
        """A joined viewer's snapshot for each join; an action answered (and recorded as ``Act``)."""
        if not self.feeds:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        first = await anext(aiter(requests))
        info = await self._table("WatchTableFeed", first.table_id, context)
        out: asyncio.Queue[d.TableFeed] = asyncio.Queue()

        def one(request: d.TableFeedRequest) -> None:
            if request.join_player_id:
                snapshot = d.TableEvent(table_id=first.table_id, snapshot=d.TableState(info=info))
                out.put_nowait(
                    d.TableFeed(snapshots=[d.ViewerSnapshot(player_id=request.join_player_id, snapshot=snapshot)])
                )
            if request.HasField("act"):
                self.calls.append(("Act", request.act.table_id))
                answer = d.FeedResult(request_id=request.act.request_id, act=d.ActResponse(hand_number=7))
                out.put_nowait(d.TableFeed(results=[answer]))

        async def read() -> None:
            one(first)
            async for request in requests:
                one(request)

        reader = asyncio.create_task(read())
        ended = self.end_watch if self.end_watch is not None else asyncio.Event()
        try:
            while True:
                message = asyncio.ensure_future(out.get())
                end = asyncio.ensure_future(ended.wait())
                await asyncio.wait({message, end}, return_when=asyncio.FIRST_COMPLETED)
                end.cancel()
                if not message.done():
                    message.cancel()
                    return
                yield message.result()
        finally:
            reader.cancel()


def hand(hand_id: str, player: str, seconds: int) -> d.RecentHand:
    kept = d.RecentHand(hand_id=hand_id, player_id=player, table_id=hand_id.split("-")[0])
    kept.finished_at.FromSeconds(seconds)
    return kept


@contextlib.asynccontextmanager
async def serving_replicas(*replicas: Replica) -> AsyncIterator[list[Replica]]:
    """Each replica on its own real server; ``Replica.address`` set."""
    async with contextlib.AsyncExitStack() as stack:
        for replica in replicas:
            replica.address = await stack.enter_async_context(
                serving(dealer_pb2_grpc.add_DealerServicer_to_server, replica)
            )
        yield list(replicas)
