"""Fast tier: the dealer's WatchBursts beside Watch, over a real in-process gRPC server — the same
events for the same viewer, a burst (an action, the pots it changed, the next turn) in one message
(docs/capacity.md: the gateway reads a third of the messages it read with Watch)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc

from cardroom.runtime.clock import ManualClock
from cardroom.v1 import dealer_pb2 as d, dealer_pb2_grpc
from dealer.actor import TableActor
from dealer.deps import Deps
from dealer.service import DealerService, Tables
from dealer.tablespec import build
from tests.fast.dealer.fakes import FakeChecker, FakePublisher, FakeWallet, FakeWriters, nl_config
from tests.fast.inproc import serving


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


async def _collect(stream: grpc.aio.UnaryStreamCall, into: list, until: Callable[[], bool]) -> None:
    while not until():
        message = await stream.read()
        assert message is not grpc.aio.EOF
        into.append(message)


def test_watch_bursts_sends_the_events_of_watch_one_burst_per_message() -> None:
    async def body() -> None:
        clock = ManualClock()
        publisher = FakePublisher()
        deps = Deps(
            FakeWallet(balances={"ann": 5000, "bob": 5000}),
            publisher,
            FakeChecker(),
            clock=clock,
            writers=FakeWriters(publisher),
        )
        tables = Tables(deps)
        actor = TableActor("fast-1", build(nl_config()), deps)
        tables.add(actor)
        async with serving(dealer_pb2_grpc.add_DealerServicer_to_server, DealerService(tables)) as address:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = dealer_pb2_grpc.DealerStub(channel)
                request = d.WatchRequest(table_id="fast-1", viewer_player_id="ann")
                singles: list[d.TableEvent] = []
                bursts: list[d.TableEventBatch] = []
                one = stub.Watch(request)
                many = stub.WatchBursts(request)
                await one.read()  # both watchers are subscribed once their snapshots came
                await many.read()
                for player in ("ann", "bob"):
                    sit = d.SitDownRequest(table_id="fast-1", player_id=player, buy_in=1000, request_id=player)
                    await stub.SitDown(sit)
                clock.advance(1.0)  # the hand starts after the pause
                # the hand dealt: its first turn announced
                await asyncio.wait_for(
                    _collect(one, singles, lambda: bool(singles) and singles[-1].HasField("turn_started")), 5
                )
                table = actor.table
                legal = table.legal_actions()
                assert legal is not None
                player = table.seating.seats[legal.seat].player
                dealt = len(singles)
                await stub.Act(d.ActRequest(table_id="fast-1", player_id=player, action=d.ACTION_TYPE_FOLD))
                n_sent = actor.sequence

                await asyncio.wait_for(_collect(one, singles, lambda: singles[-1].sequence >= n_sent), 5)
                await asyncio.wait_for(
                    _collect(many, bursts, lambda: bool(bursts) and bursts[-1].events[-1].sequence >= n_sent), 5
                )
                one.cancel()
                many.cancel()
        await actor.stop()
        assert dealt < len(singles)
        flat = [e for b in bursts for e in b.events]
        assert flat == singles[: len(flat)] and flat[-1].sequence == n_sent
        assert len(bursts) < len(flat)  # bursts, not one message per event
        fold = next(b for b in bursts if any(e.WhichOneof("event") == "action" for e in b.events))
        # the fold and what it brought (the hand's end) came in one message
        assert len(fold.events) >= 2, [e.WhichOneof("event") for e in fold.events]

    run(body)
