"""Fast tier: the tournament service's table commands with dealer shards (tournament/dealer_tables.py
on the runtime's TableRouter, docs/sharding.md "Routing: the directory"): each command goes to the
replica whose claim holds its table's partition, one that finds its table gone goes to the new owner
(not counted as the dealer's refusal), and without a directory everything goes to DEALER_ADDR.
The replicas are in-process ``TournamentTables`` servicers on real ``grpc.aio`` servers; the
directory is fed the claims they would write (no Kafka)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardroom.core import ids
from cardroom.core.engine import Stakes
from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.partitions import table_partition
from cardroom.v1 import tournament_tables_pb2 as tt, tournament_tables_pb2_grpc as tt_grpc
from tests.fast.inproc import serving
from tests.fast.runtime.claims_records import PARTITIONS, claim
from tournament.dealer_tables import DealerTables, TableShape, command_table

TID = "sng-route"
METHODS = [m.name for m in tt.DESCRIPTOR.services_by_name["TournamentTables"].methods]


def table_numbers() -> tuple[int, int]:
    """Two table numbers of TID (in one partition, as every table of a tournament:
    cardroom.runtime.partitions)."""
    return 1, 2


@dataclass
class TablesReplica(tt_grpc.TournamentTablesServicer):
    """Opens the tables it is asked to; any other command about a table it does not hold is UNAVAILABLE."""

    name: str
    held: set[str] = field(default_factory=set)
    calls: list[tuple[str, str]] = field(default_factory=list)
    before: Callable[[str, str], Awaitable[None]] | None = None
    address: str = ""

    async def answer(self, method: str, request: Any, context: grpc.aio.ServicerContext) -> tt.TournamentTableState:
        table_id = command_table(method, request)
        self.calls.append((method, table_id))
        if self.before is not None:
            await self.before(method, table_id)
        if method == "OpenTournamentTable":
            self.held.add(table_id)
        elif table_id not in self.held:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"table {table_id} is dealt by another dealer")
        return tt.TournamentTableState(tournament_id=TID)


def _handler(method: str) -> Callable[..., Awaitable[tt.TournamentTableState]]:
    async def handle(self: TablesReplica, request: Any, context: grpc.aio.ServicerContext) -> tt.TournamentTableState:
        return await self.answer(method, request, context)

    return handle


for _method in METHODS:
    setattr(TablesReplica, _method, _handler(_method))


@contextlib.asynccontextmanager
async def serving_all(*replicas: TablesReplica) -> AsyncIterator[None]:
    async with contextlib.AsyncExitStack() as stack:
        for replica in replicas:
            replica.address = await stack.enter_async_context(
                serving(tt_grpc.add_TournamentTablesServicer_to_server, replica)
            )
        yield


async def send(port: DealerTables, work: Callable[[], None]) -> None:
    """Queue the commands ``work`` makes, release them and wait until every one was answered."""
    work()
    port.release(TID)
    sender = asyncio.create_task(port.run())
    try:
        await asyncio.wait_for(port.flush(), 15)
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender


def open_two(port: DealerTables, even: int, odd: int) -> None:
    port.configure(TID, TableShape("NT", 6, 5.0))
    port.open_table(TID, even, {1: ("ann", 500), 2: ("bob", 500)}, Stakes.blinds(10, 20))
    port.open_table(TID, odd, {1: ("cid", 500), 2: ("dan", 500)}, Stakes.blinds(10, 20))


def test_each_command_goes_to_its_table_s_owner_and_follows_a_move() -> None:
    even, odd = table_numbers()
    even_id, odd_id = ids.tournament_table_id(TID, even), ids.tournament_table_id(TID, odd)

    async def scenario() -> None:
        default, a, b = TablesReplica("D"), TablesReplica("A"), TablesReplica("B")
        async with serving_all(default, a, b):
            directory = DealerDirectory("127.0.0.1:1", "test.directory")
            partition = table_partition(even_id, PARTITIONS)
            assert table_partition(odd_id, PARTITIONS) == partition  # a tournament's tables: one replica
            directory.take([claim(p, p, (a if p == partition else b).address) for p in range(PARTITIONS)])
            port = DealerTables(default.address, bootstrap=None, tls=None, retry_seconds=0.05, directory=directory)
            try:
                await send(port, lambda: open_two(port, even, odd))
                assert a.calls == [("OpenTournamentTable", even_id), ("OpenTournamentTable", odd_id)]
                assert b.calls == []

                # A gives the partition up; B, which restored it, claims it a moment later
                a.held.difference_update({even_id, odd_id})
                b.held.update({even_id, odd_id})

                async def gave_it_up(method: str, table_id: str) -> None:
                    asyncio.get_running_loop().call_later(0.2, directory.take, [claim(50, partition, b.address)])

                a.before = gave_it_up
                await send(port, lambda: port.set_level(TID, even, Stakes.blinds(20, 40)))
                assert a.calls[-1] == ("SetTournamentLevel", even_id)
                assert b.calls[-1] == ("SetTournamentLevel", even_id)
                assert port.refused == 0 and port.sent == 3
                assert default.calls == []
            finally:
                await port.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_without_a_directory_every_command_goes_to_the_configured_dealer() -> None:
    even, odd = table_numbers()

    async def scenario() -> None:
        default = TablesReplica("D")
        async with serving_all(default):
            port = DealerTables(default.address, bootstrap=None, tls=None, retry_seconds=0.05)
            try:
                await send(port, lambda: open_two(port, even, odd))
                assert [m for m, _ in default.calls] == ["OpenTournamentTable"] * 2
            finally:
                await port.close()

    asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_move_is_routed_by_the_table_the_player_leaves() -> None:
    move = tt.MoveTournamentPlayerRequest(tournament_id=TID, from_table=3, to_table=5)
    assert command_table("MoveTournamentPlayer", move) == ids.tournament_table_id(TID, 3)
    level = tt.SetTournamentLevelRequest(tournament_id=TID, table=4)
    assert command_table("SetTournamentLevel", level) == ids.tournament_table_id(TID, 4)
    assert command_table("SetTournamentLevel", tt.SetTournamentLevelRequest(tournament_id="", table=4)) == ""
