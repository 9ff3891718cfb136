"""A closed table leaves its dealer's memory and answers as before (dealer.retired).

A closed table's actor (the rules core's table and its loop's task, some 10–20 KB) stayed in its dealer for
good, one per sit-and-go and per tournament table, and was built again on every restart. Once nothing about it
lives in memory only, it retires to the snapshot a restart would read; a call about it brings it back from
that snapshot. Every answer about it is the same before and after (the dealer's and the tournament's gRPC
calls over an in-process server), and a closed table holding anything in memory only stays."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest

from cardroom.v1 import dealer_pb2, dealer_pb2_grpc, tournament_tables_pb2 as tt
from dealer.errors import DealerError
from dealer.fences import Fences
from dealer.server import restore_tables
from dealer.service import DealerService, Tables
from tests.fast.dealer.fakes import Harness, harness, nl_config
from tests.fast.dealer.test_tournament_tables import TID, Room, open_table, room, seats
from tests.fast.inproc import serving

RICH = {"ann": 5000, "bob": 5000, "cat": 5000}
TABLE = "fast-1"


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


async def refusal(call: Awaitable[Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    return info.value.code(), info.value.details() or ""


async def closed_table(h: Harness, stub: dealer_pb2_grpc.DealerStub) -> None:
    """ann and bob play; the table is closed (at the end of its hand), their chips cashed out."""
    await h.sit("ann", 1000)
    await h.sit("bob", 1500)
    await h.advance(1.0)
    closing = asyncio.ensure_future(stub.CloseTable(dealer_pb2.CloseTableRequest(table_id=TABLE)))
    while not closing.done():
        await h.advance(11)
    assert {s.player_id for s in (await closing).cashed_out} >= {"ann", "bob"}


async def answers(stub: dealer_pb2_grpc.DealerStub) -> list[Any]:
    """What the dealer answers about the closed table: its state, a late close, a sit-down, a new table
    of its id, the lobby."""
    sit = dealer_pb2.SitDownRequest(table_id=TABLE, player_id="cat", buy_in=500)
    return [
        await stub.GetTable(dealer_pb2.GetTableRequest(table_id=TABLE)),
        await stub.GetTable(dealer_pb2.GetTableRequest(table_id=TABLE, viewer_player_id="ann")),
        await stub.CloseTable(dealer_pb2.CloseTableRequest(table_id=TABLE)),
        await refusal(stub.SitDown(sit)),
        await refusal(stub.CreateTable(dealer_pb2.CreateTableRequest(table_id=TABLE, config=nl_config()))),
        await stub.ListTables(dealer_pb2.ListTablesRequest()),
    ]


@asynccontextmanager
async def dealer(tables: Tables) -> AsyncIterator[dealer_pb2_grpc.DealerStub]:
    """The dealer's gRPC service over ``tables`` on an in-process server; the tables stopped after."""
    async with serving(dealer_pb2_grpc.add_DealerServicer_to_server, DealerService(tables)) as addr:
        async with grpc.aio.insecure_channel(addr) as channel:
            yield dealer_pb2_grpc.DealerStub(channel)
    await tables.stop()


def one_table(h: Harness) -> Tables:
    tables = Tables(h.actor.deps)
    tables.add(h.actor)
    return tables


def test_a_closed_table_retires_and_answers_as_before_when_a_call_brings_it_back() -> None:
    async def body() -> None:
        h = harness(balances=RICH, start=False)
        tables = one_table(h)
        async with dealer(tables) as stub:
            await closed_table(h, stub)
            before = await answers(stub)
            assert before[3][0] == grpc.StatusCode.FAILED_PRECONDITION and "closed" in before[3][1]
            assert before[4][0] == grpc.StatusCode.ALREADY_EXISTS

            balances = dict(h.wallet.balances)
            assert tables.retire_idle() == [TABLE]
            assert TABLE not in tables.actors and TABLE in tables.retired
            await h.settle()
            assert h.actor.task is not None and h.actor.task.done()  # its loop ended with it

            after = await answers(stub)
            assert after == before
            back = tables.actors[TABLE]
            assert back is not h.actor and back.closed and TABLE not in tables.retired
            assert tables.retire_idle() == [TABLE]  # idle again: retired again
            assert h.wallet.balances == balances  # nothing moved again

    run(body)


def test_a_closed_table_with_an_answer_kept_for_a_repeat_stays_until_it_expires() -> None:
    async def body() -> None:
        h = harness(balances=RICH, start=False)
        tables = one_table(h)
        async with dealer(tables) as stub:
            await h.sit("cat", 800, request_id="r-cat")  # its answer kept ten minutes for a repeat
            await closed_table(h, stub)
            assert tables.retire_idle() == []
            await h.advance(h.actor.mailbox.remember_seconds / 2)
            assert tables.retire_idle() == [] and tables.actors[TABLE] is h.actor
            await h.advance(h.actor.mailbox.remember_seconds)  # the loop forgot it
            assert tables.retire_idle() == [TABLE]

    run(body)


def test_a_restart_keeps_a_closed_tables_snapshot_and_builds_no_actor_for_it() -> None:
    async def body() -> None:
        h = harness(balances=RICH, start=False)
        async with dealer(one_table(h)) as stub:
            await closed_table(h, stub)
            before = await answers(stub)
        last = h.snapshots[-1]
        assert last.closed and [s.player_id for s in last.cashed_out_at_close] == ["ann", "bob"]

        restarted = Tables(h.actor.deps)  # a new process reads the snapshots topic
        await restore_tables({TABLE: last}, restarted, close=False)
        assert not restarted.actors and TABLE in restarted.retired
        async with dealer(restarted) as stub:
            assert await answers(stub) == before

    run(body)


# ---------------------------------------------------------------- a tournament's table
async def tournament_answers(r: Room, opened: tt.OpenTournamentTableRequest) -> list[Any]:
    """The tournament's calls about its closed table: the open and the close sent again, its state, a
    command on it."""
    pause = tt.PauseTournamentTableRequest(command_id="late", tournament_id=TID, table=1)
    return [
        await r.stub.OpenTournamentTable(opened),
        await r.stub.CloseTournamentTable(
            tt.CloseTournamentTableRequest(command_id="done", tournament_id=TID, table=1)
        ),
        await r.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=TID, table=1)),
        await refusal(r.stub.PauseTournamentTable(pause)),
    ]


def test_a_closed_tournament_table_retires_and_answers_as_before() -> None:
    async def body() -> None:
        async with room() as r:
            state = await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000)), start_paused=True)
            actor = r.actor(1)
            opened = actor.opened
            closed = await r.stub.CloseTournamentTable(
                tt.CloseTournamentTableRequest(command_id="done", tournament_id=TID, table=1)
            )
            assert closed.closed and not closed.seats and state.seats
            before = await tournament_answers(r, opened)
            assert before[3][0] == grpc.StatusCode.FAILED_PRECONDITION
            assert r.tables.retire_idle() == []  # the answers to the repeats kept ten minutes
            await r.tick(actor.mailbox.remember_seconds + 1)
            assert r.tables.retire_idle() == [actor.table_id]
            assert actor.table_id not in r.tables.actors
            after = await tournament_answers(r, opened)
            assert after == before
            assert r.tables.actors[actor.table_id] is not actor
            await r.tick(actor.mailbox.remember_seconds + 1)  # the repeats' answers expire
            assert r.tables.retire_idle() == [actor.table_id]

    run(body)


def test_a_closed_table_owing_its_escrow_reconciliation_is_restored_as_an_actor() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        await h.sit("ann", 1000)
        await (await h.actor.submit(h.actor.close))
        await h.stop()
        owing = h.snapshots[-1]
        assert owing.closed and not owing.reconcile_owed
        again = harness(balances=dict(h.wallet.balances), start=False)
        tables = Tables(again.actor.deps)
        await restore_tables({TABLE: owing}, tables, close=False)
        assert TABLE in tables.retired and TABLE not in tables.actors
        owing.reconcile_owed = True  # a restore before the close, its reconciliation not yet made
        await restore_tables({TABLE: owing}, tables, close=False)  # (the partition restored again)
        assert TABLE in tables.actors and TABLE not in tables.retired
        await again.settle()
        assert [r[0] for r in again.wallet.reconciles] == [TABLE]  # its loop made it
        assert tables.retire_idle() == [TABLE]  # and then it retires
        await tables.stop()

    run(body)


def test_a_partition_given_up_forgets_its_retired_tables() -> None:
    async def body() -> None:
        fences = Fences(sharded=True, partitions=6)
        mine, other = "t-mine", "t-other"
        while fences.partition(other) == fences.partition(mine):
            other += "x"
        for table_id in (mine, other):
            fences.hold(fences.partition(table_id), 3)
            fences.serve(fences.partition(table_id))
        tables = Tables(harness(start=False, fences=fences).actor.deps)
        for table_id in (mine, other):
            tables.retired.keep(table_id, dealer_pb2.TableSnapshot(table_id=table_id, config=nl_config(), closed=True))
        await tables.release(fences.partition(mine))  # its next owner restores it from the snapshots topic
        assert mine not in tables.retired and other in tables.retired
        with pytest.raises(DealerError) as moved:
            tables.get(mine)
        assert moved.value.code == grpc.StatusCode.UNAVAILABLE

    run(body)


def test_a_table_that_cannot_be_retired_is_left_and_the_pass_goes_on() -> None:
    async def body() -> None:
        tables = Tables(harness(start=False).actor.deps)
        for table_id in ("t-bad", "t-good"):
            h = harness(balances=RICH, table_id=table_id)
            await h.sit("ann", 1000)
            await (await h.actor.submit(h.actor.close))
            await h.stop()
            snap = h.snapshots[-1]
            await restore_tables({table_id: snap}, tables, close=False)
            assert tables.lookup(table_id) is not None  # back as an actor: a call came
        bad = tables.actors["t-bad"]

        def broken() -> dealer_pb2.TableSnapshot:
            raise RuntimeError("snapshot failed")

        bad.snapshot = broken  # type: ignore[method-assign]
        assert tables.retire_idle() == ["t-good"]
        assert tables.actors == {"t-bad": bad} and "t-bad" not in tables.retired
        await tables.stop()

    run(body)
