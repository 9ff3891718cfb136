"""Fast tier: the gateway's dealer calls with dealer shards (gateway/dealers.py on the runtime's
TableRouter, docs/sharding.md "Routing: the directory"), against in-process dealer replicas on real
``grpc.aio`` servers (tests/fast/gateway/replicas.py) and a dealer directory fed the claims the
replicas would write (never started: no Kafka). A table's calls go to its partition's owner, the
lobby and a player's hands are merged from every replica, new tables go to the replicas in turn,
a call that finds its table gone is retried once on the new owner, and without a directory or a
claim everything goes to the configured dealer (DEALER_ADDR) as before."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

import grpc
import pytest

from cardroom.core import ids
from cardroom.runtime.directory import DealerDirectory
from cardroom.v1 import dealer_pb2 as d, dealer_pb2_grpc, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from gateway.clients import Backends
from gateway.dealers import DealerRouter
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService
from tests.fast.gateway.fakes import FakeWallet
from tests.fast.gateway.replicas import Replica, hand, serving_replicas
from tests.fast.gateway.test_gateway_service import auth, config as gateway_config, failure
from tests.fast.gateway.test_play_session import Session
from tests.fast.inproc import serving
from tests.fast.runtime.claims_records import PARTITIONS, claim, table_in

#: Tables of partitions 0..5; A holds the even partitions, B the odd ones (see claims()).
T = [table_in(p) for p in range(PARTITIONS)]


@pytest.fixture(autouse=True)
def _plaintext(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TLS_DIR", raising=False)  # the channel factory's TLS: plaintext here


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 30))


def directory() -> DealerDirectory:
    return DealerDirectory("127.0.0.1:1", "test.directory")  # fed by take(), never started


def claims(directory: DealerDirectory, even: Replica, odd: Replica, first_offset: int = 0) -> None:
    """``even`` claims partitions 0, 2, 4, ``odd`` 1, 3, 5."""
    directory.take([claim(first_offset + p, p, (even if p % 2 == 0 else odd).address) for p in range(PARTITIONS)])


def move(directory: DealerDirectory, partition: int, to: Replica, offset: int = 100) -> None:
    directory.take([claim(offset, partition, to.address)])


def gives_up(old: Replica, directory: DealerDirectory, to: Replica) -> None:
    """``old`` no longer deals partition 0's table; ``to``'s claim of it arrives 0.2 s after each call
    ``old`` gets (after its answer)."""

    async def gave_it_up(method: str, key: str, context: grpc.aio.ServicerContext) -> None:
        asyncio.get_running_loop().call_later(0.2, move, directory, 0, to)

    old.before = gave_it_up


class Routers:
    """Routers over the replicas' servers, on channels the test closes."""

    def __init__(self) -> None:
        self.made: list[DealerRouter] = []
        self.channels: list[grpc.aio.Channel] = []

    def __call__(self, default: Replica, directory: DealerDirectory | None, move_wait: float = 5.0) -> DealerRouter:
        channel = grpc.aio.insecure_channel(default.address)
        self.channels.append(channel)
        router = DealerRouter(
            dealer_pb2_grpc.DealerStub(channel), directory, fallback_address=default.address, move_wait=move_wait
        )
        self.made.append(router)
        return router

    async def close(self) -> None:
        for router in self.made:
            await router.close()
        for channel in self.channels:
            await channel.close()


async def get(router: DealerRouter, table_id: str) -> d.TableState:
    return await router.call(table_id, lambda dealer: dealer.GetTable(d.GetTableRequest(table_id=table_id)))


# ---------------------------------------------------------------------------------------- routing


def test_without_a_directory_or_before_the_first_claim_every_call_goes_to_the_configured_dealer() -> None:
    async def scenario() -> None:
        default, a = Replica("D").hold(T[0], T[1]), Replica("A").hold(T[0])
        async with serving_replicas(default, a):
            make = Routers()
            try:
                for router in (make(default, None, move_wait=2), make(default, directory(), move_wait=2)):
                    assert (await get(router, T[1])).info.config.name == f"D:{T[1]}"
                    listed = await router.list_tables(d.ListTablesRequest())
                    assert sorted(t.table_id for t in listed.tables) == sorted([T[0], T[1]])
                    assert router.every() == [(None, router.fallback)]
                    start = time.monotonic()
                    err = await failure(get(router, T[2]))  # nowhere to move to: refused at once, never waited on
                    assert err.code() == grpc.StatusCode.UNAVAILABLE and time.monotonic() - start < 1.5
                assert a.calls == []
            finally:
                await make.close()

    run(scenario)


def test_a_table_s_calls_go_to_the_replica_that_claimed_its_partition() -> None:
    async def scenario() -> None:
        default, a, b = Replica("D"), Replica("A").hold(T[0], T[2], T[4]), Replica("B").hold(T[1], T[3], T[5])
        async with serving_replicas(default, a, b):
            make = Routers()
            try:
                d_ = directory()
                claims(d_, a, b)
                router = make(default, d_)
                for table_id in T:
                    assert (await get(router, table_id)).info.table_id == table_id
                assert a.calls == [("GetTable", t) for t in (T[0], T[2], T[4])]
                assert b.calls == [("GetTable", t) for t in (T[1], T[3], T[5])]
                assert default.calls == []
                assert router.for_table(T[3]) is router.stub_at(b.address)  # one stub (channel) per address
                assert [address for address, _ in router.every()] == sorted([a.address, b.address])
            finally:
                await make.close()

    run(scenario)


# ---------------------------------------------------------------------------------------- merging


def test_the_lobby_merges_every_replica_s_tables_once_each_as_their_owner_lists_them() -> None:
    async def scenario() -> None:
        default, a, b = Replica("D"), Replica("A").hold(T[0], T[2]), Replica("B").hold(T[1])
        # each also still lists a table of the other's partitions (giving it up / not restored yet)
        a.tables[T[1]] = d.TableInfo(table_id=T[1], config=d.TableConfig(name="stale"))
        b.tables[T[0]] = d.TableInfo(table_id=T[0], config=d.TableConfig(name="stale"))
        async with serving_replicas(default, a, b):
            make = Routers()
            try:
                d_ = directory()
                claims(d_, a, b)
                listed = await make(default, d_).list_tables(d.ListTablesRequest(variant="NT"))
                names = {t.table_id: t.config.name for t in listed.tables}
                assert names == {T[0]: f"A:{T[0]}", T[1]: f"B:{T[1]}", T[2]: f"A:{T[2]}"}
                assert len(listed.tables) == 3
                assert a.calls == b.calls == [("ListTables", "")] and default.calls == []
            finally:
                await make.close()

    run(scenario)


def test_a_player_s_hands_are_merged_newest_first_up_to_the_limit() -> None:
    async def scenario() -> None:
        a = Replica("A", hands=[hand("a-4", "ann", 400), hand("a-1", "ann", 100), hand("a-9", "bob", 900)])
        b = Replica("B", hands=[hand("b-3", "ann", 300), hand("b-2", "ann", 200)])
        default = Replica("D")
        async with serving_replicas(default, a, b):
            make = Routers()
            try:
                d_ = directory()
                claims(d_, a, b)
                router = make(default, d_)
                three = await router.player_hands(d.PlayerHandsRequest(player_id="ann", limit=3))
                assert [h.hand_id for h in three.hands] == ["a-4", "b-3", "b-2"]
                every = await router.player_hands(d.PlayerHandsRequest(player_id="ann"))
                assert [h.hand_id for h in every.hands] == ["a-4", "b-3", "b-2", "a-1"]
            finally:
                await make.close()

    run(scenario)


def test_a_replica_that_is_down_is_left_out_of_the_lobby_but_not_out_of_a_money_view() -> None:
    async def scenario() -> None:
        default, a, b = Replica("D"), Replica("A").hold(T[0]), Replica("B").hold(T[1])

        async def down(method: str, key: str, context: grpc.aio.ServicerContext) -> None:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "restarting")

        b.before = down
        async with serving_replicas(default, a, b):
            make = Routers()
            try:
                d_ = directory()
                claims(d_, a, b)
                router = make(default, d_)
                listed = await router.list_tables(d.ListTablesRequest())
                assert [t.table_id for t in listed.tables] == [T[0]]
                err = await failure(router.list_tables(d.ListTablesRequest(), partial=False))
                assert err.code() == grpc.StatusCode.UNAVAILABLE
                a.before = down  # nobody answers: the failure is the answer
                assert (await failure(router.list_tables(d.ListTablesRequest()))).code() == grpc.StatusCode.UNAVAILABLE

                async def refuses(method: str, key: str, context: grpc.aio.ServicerContext) -> None:
                    await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "variant: unknown")

                a.before, b.before = None, refuses  # not a replica being down: never left out
                err = await failure(router.list_tables(d.ListTablesRequest()))
                assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
            finally:
                await make.close()

    run(scenario)


# ---------------------------------------------------------------------------------------- moves


def test_a_call_that_finds_its_table_gone_is_retried_once_on_the_new_owner() -> None:
    async def scenario() -> None:
        default, a, b = Replica("D"), Replica("A"), Replica("B").hold(T[0])
        d_ = directory()
        gives_up(a, d_, b)
        async with serving_replicas(default, a, b):
            make = Routers()
            try:
                claims(d_, a, b)
                state = await get(make(default, d_), T[0])
                assert state.info.config.name == f"B:{T[0]}"
                assert a.calls == [("GetTable", T[0])] and b.calls == [("GetTable", T[0])]
            finally:
                await make.close()

    run(scenario)


def test_an_unavailable_owner_whose_partition_was_claimed_again_is_passed_over_at_once() -> None:
    async def scenario() -> None:
        default, a, b = Replica("D"), Replica("A").hold(T[2]), Replica("B").hold(T[2])
        d_ = directory()

        async def fenced(method: str, key: str, context: grpc.aio.ServicerContext) -> None:
            move(d_, 2, b)  # B already holds it when A fails
            await context.abort(grpc.StatusCode.UNAVAILABLE, "shutting down")

        a.before = fenced
        async with serving_replicas(default, a, b):
            make = Routers()
            try:
                claims(d_, a, b)
                router = make(default, d_, move_wait=30)
                start = time.monotonic()
                seat = await router.call(
                    T[2], lambda dealer: dealer.SitDown(d.SitDownRequest(table_id=T[2], player_id="ann", seat=3))
                )
                assert seat.seat.seat == 3 and time.monotonic() - start < 5
                assert a.calls == [("SitDown", T[2])] and b.calls == [("SitDown", T[2])]
            finally:
                await make.close()

    run(scenario)


def test_a_table_that_did_not_move_and_other_failures_are_not_retried() -> None:
    async def scenario() -> None:
        default, a, b = Replica("D"), Replica("A"), Replica("B").hold(T[0])
        d_ = directory()
        async with serving_replicas(default, a, b):
            make = Routers()
            try:
                claims(d_, a, b)
                router = make(default, d_, move_wait=0.3)
                start = time.monotonic()
                err = await failure(get(router, T[0]))  # A answers UNAVAILABLE and no claim comes
                assert err.code() == grpc.StatusCode.UNAVAILABLE and 0.25 < time.monotonic() - start < 3
                assert a.calls == [("GetTable", T[0])] and b.calls == []

                async def unknown(method: str, key: str, context: grpc.aio.ServicerContext) -> None:
                    await context.abort(grpc.StatusCode.NOT_FOUND, f"no table {key!r}")

                a.before = unknown  # a table its owner does not know: the answer, at once (no wait for a move)
                start = time.monotonic()
                err = await failure(get(router, T[0]))
                assert err.code() == grpc.StatusCode.NOT_FOUND and time.monotonic() - start < 0.25
                assert b.calls == []

                async def refuses(method: str, key: str, context: grpc.aio.ServicerContext) -> None:
                    move(d_, 0, b)
                    await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not your turn")

                a.before = refuses  # the table moved, but A refused for another reason: that is the answer
                err = await failure(get(router, T[0]))
                assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and b.calls == []
            finally:
                await make.close()

    run(scenario)


# ---------------------------------------------------------------------------------------- the gateway


def sharded_backends(default: Replica, d_: DealerDirectory) -> Backends:
    channel = grpc.aio.insecure_channel(default.address)
    return Backends(
        dealer=dealer_pb2_grpc.DealerStub(channel),
        wallet=FakeWallet(),  # type: ignore[arg-type]
        monitor=None,
        channels=[channel],
        directory=d_,
        dealer_addr=default.address,
    )


def test_the_gateway_s_calls_are_routed_and_merged() -> None:
    """Lobby (merged), Join and Leave (the table's owner), MyHands (merged), the operator's
    CreateTable (by the id it names, else in turn) through the Gateway servicers."""
    default, a, b = Replica("D"), Replica("A").hold(T[0], T[2]), Replica("B").hold(T[1])
    a.hands, b.hands = [hand("a-1", "ann", 100)], [hand("b-2", "ann", 200)]
    d_ = directory()

    async def scenario(stub: g_grpc.GatewayStub, operator: g_grpc.GatewayOperatorStub) -> None:
        lobby = await stub.Lobby(g.LobbyRequest(), metadata=auth("ann"))
        assert [t.table_id for t in lobby.tables] == sorted([T[0], T[1], T[2]])
        await stub.Join(g.JoinRequest(table_id=T[1], seat=2, buy_in=100), metadata=auth("ann"))
        await stub.Leave(g.LeaveRequest(table_id=T[2]), metadata=auth("ann"))
        hands = await stub.MyHands(g.MyHandsRequest(), metadata=auth("ann"))
        assert [h.hand_id for h in hands.hands] == ["b-2", "a-1"]
        op = [("authorization", "Operator op")]
        await operator.CreateTable(d.CreateTableRequest(table_id=T[3]), metadata=op)  # partition 3: B's
        # without an id: named from the request id (ids.created_table_id) and created on that id's owner
        named = [ids.created_table_id(r) for r in ("r-1", "r-2", "r-3", "r-4")]
        for request_id in ("r-1", "r-2", "r-3", "r-4"):
            await operator.CreateTable(d.CreateTableRequest(request_id=request_id), metadata=op)
        assert ("SitDown", T[1]) in b.calls and ("StandUp", T[2]) in a.calls
        assert ("CreateTable", T[3]) in b.calls
        created = {r.address: [k for m, k in r.calls if m == "CreateTable"] for r in (a, b)}
        assert sorted(created[a.address] + created[b.address]) == sorted(named + [T[3]])
        for replica in (a, b):
            assert all(d_.route(k)[0] == replica.address for k in created[replica.address])
        assert default.calls == []

    def add(servicers: tuple[GatewayService, GatewayOperatorService], server: grpc.aio.Server) -> None:
        g_grpc.add_GatewayServicer_to_server(servicers[0], server)
        g_grpc.add_GatewayOperatorServicer_to_server(servicers[1], server)

    async def main() -> None:
        async with serving_replicas(default, a, b):
            claims(d_, a, b)
            back = sharded_backends(default, d_)
            cfg = gateway_config()
            servicers = (GatewayService(cfg, back), GatewayOperatorService(cfg.operator_token, back))
            try:
                async with serving(add, servicers) as address, grpc.aio.insecure_channel(address) as channel:
                    await scenario(g_grpc.GatewayStub(channel), g_grpc.GatewayOperatorStub(channel))
            finally:
                await back.close()

    run(main)


@pytest.mark.parametrize("feeds", [True, False], ids=["table feed", "watch per session"])
def test_a_play_stream_follows_its_table_to_the_new_owner(feeds: bool) -> None:
    """The old owner ends the table's feed (or the session's Watch, with replicas of the version before
    the feed): it gave the table up; the gateway reopens it on the owner the directory names: the client
    sees the new owner's snapshot on the same stream, and his next action goes there."""

    async def scenario() -> None:
        default, a, b = (Replica(n, feeds=feeds) for n in "DAB")
        a.hold(T[4])
        a.end_watch = asyncio.Event()
        async with serving_replicas(default, a, b):
            d_ = directory()
            claims(d_, a, b)
            back = sharded_backends(default, d_)
            s = Session(back)
            try:
                s.send("o", open=g.OpenTable(table_id=T[4]))
                first = await s.next()
                assert first is not None and first.table.snapshot.info.config.name == f"A:{T[4]}"
                b.hold(T[4])
                move(d_, 4, b)
                a.end_watch.set()
                second = await s.next()
                assert second is not None and second.table.snapshot.info.config.name == f"B:{T[4]}"
                s.send("x", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))
                result = await s.next()
                assert result is not None and result.result.act.hand_number == 7, result
                assert ("Act", T[4]) in b.calls and ("Act", T[4]) not in a.calls
                await s.close()
            finally:
                await back.close()

    run(scenario)


@pytest.mark.parametrize("feeds", [True, False], ids=["table feed", "watch per session"])
def test_a_play_stream_opened_on_a_replica_that_gave_the_table_up_waits_for_the_new_owner(feeds: bool) -> None:
    """The feed (or Watch) finds the table dealt elsewhere (UNAVAILABLE) where the directory sent it; the new
    owner's claim comes a moment later: the client gets that owner's snapshot, and no error."""
    method = "WatchTableFeed" if feeds else "WatchBursts"

    async def scenario() -> None:
        default, a, b = (Replica(n, feeds=feeds) for n in "DAB")
        b.hold(T[0])
        d_ = directory()
        gives_up(a, d_, b)
        async with serving_replicas(default, a, b):
            claims(d_, a, b)
            back = sharded_backends(default, d_)
            s = Session(back)
            try:
                s.send("o", open=g.OpenTable(table_id=T[0]))
                first = await s.next()
                assert first is not None and first.WhichOneof("kind") == "table", first
                assert first.table.snapshot.info.config.name == f"B:{T[0]}"
                assert a.calls == [(method, T[0])] and b.calls == [(method, T[0])]
                await s.close()
            finally:
                await back.close()

    run(scenario)


def test_a_feed_refused_while_its_joins_are_being_sent_still_waits_for_the_new_owner() -> None:
    """grpc.aio loses a stream's status when a request is written as the server ends it (grpc/grpc#36066:
    INTERNAL "Internal error from Core" in its place). Forty sessions follow the table as the replica that
    gave it up refuses the feed: the feed sends the other joins only after the dealer's first answer, so
    the refusal's UNAVAILABLE reaches the gateway, which waits for the new owner and never asks the old
    replica again (before the fix most runs saw INTERNAL and retried it)."""

    async def scenario() -> None:
        default, a, b = Replica("D"), Replica("A"), Replica("B").hold(T[0])
        d_ = directory()
        gives_up(a, d_, b)
        async with serving_replicas(default, a, b):
            claims(d_, a, b)
            back = sharded_backends(default, d_)
            sessions = [Session(back, player=f"p{n}") for n in range(40)]
            try:
                for session in sessions:
                    session.send("o", open=g.OpenTable(table_id=T[0]))
                for session in sessions:
                    first = await session.next()
                    assert first is not None and first.WhichOneof("kind") == "table", first
                    assert first.table.snapshot.info.config.name == f"B:{T[0]}"
                assert a.calls == [("WatchTableFeed", T[0])]
                assert b.calls == [("WatchTableFeed", T[0])]
                for session in sessions:
                    await session.close()
            finally:
                await back.close()

    run(scenario)
