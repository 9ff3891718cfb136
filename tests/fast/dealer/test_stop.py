"""Fast tier: one table, one actor in a dealer, and an actor whose hold ended writes nothing. In a clean-clone
chaos run (2026-12-05) a replica's release of a partition did not finish (its rebalance callback timed out after
60 s) while a table of it kept running here, and the partition came back and was restored over that table: two
actors of one table in one process, and a player's balance 172 chips off his hand records. The stop had been
lost: Python 3.11's ``asyncio.wait_for`` drops a cancellation that comes as its awaitable finishes
(python/cpython#86296), and the table's loop ran on. Now:

- a restore stops any actor still running for the table first, and an actor runs one loop;
- a stop ends the table's loop even if its cancellation is lost;
- a release stops the partition's tables together and forgets only them (a later hold keeps its own);
- an actor made under one hold of its partition deals nothing, writes nothing and moves no money under a later
  one (``Fences.current``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc
import pytest

from dealer.errors import DealerError
from dealer.fences import Fences
from dealer.server import restore_tables
from dealer.service import Tables
from tests.fast.dealer.fakes import harness, nl_config

RICH = {"ann": 5000, "bob": 5000}


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


def test_a_table_restored_over_one_still_running_stops_that_one_first() -> None:
    async def body() -> None:
        h = harness(balances=RICH, start=False)
        tables = Tables(h.actor.deps)
        tables.add(h.actor)
        await h.sit("ann", 1000)
        old = h.actor
        await restore_tables({old.table_id: old.snapshot()}, tables, close=False)
        new = tables.actors[old.table_id]
        assert new is not old
        assert old.stopping and old.task is not None and old.task.done()
        assert new.task is not None and not new.task.done()
        assert [s.player for s in new.table.seating.seats.values()] == ["ann"]
        await new.stop()

    run(body)


def test_a_stop_ends_the_tables_loop_even_when_its_cancellation_is_lost() -> None:
    async def body() -> None:
        h = harness(balances=RICH)
        actor = h.actor
        running = asyncio.Event()

        async def loses_the_cancellation() -> None:  # as 3.11's wait_for did when its answer came in that turn
            running.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass

        command = asyncio.create_task(actor.submit(loses_the_cancellation))
        await running.wait()
        stop = asyncio.create_task(actor.stop())
        async with asyncio.timeout(10):  # shielded: the stop itself, not this bound, must end the loop
            await asyncio.shield(stop)
        assert actor.task is not None and actor.task.done()
        await command

    run(body)


def _sharded(epoch: int, table_id: str) -> Fences:
    fences = Fences(sharded=True, partitions=6)
    fences.hold(fences.partition(table_id), epoch)
    fences.serve(fences.partition(table_id))
    return fences


def test_an_actor_of_an_earlier_hold_deals_writes_and_moves_nothing_once_the_partition_is_held_again() -> None:
    async def body() -> None:
        h = harness(nl_config(), {"ann": 5000, "bob": 5000, "cat": 5000}, "t-zombie", fences=_sharded(5, "t-zombie"))
        fences = h.actor.deps.fences
        p = fences.partition("t-zombie")
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.advance(1.0)
        assert h.actor.table.in_hand
        # the partition is given up and taken again (a later epoch) while this actor still runs
        fences.release(p)
        fences.hold(p, 6)
        fences.serve(p)
        sent, calls, hands = len(h.publisher.sent), len(h.wallet.calls), h.actor.table.hand_number
        with pytest.raises(DealerError) as refused:  # the buy-in's write-ahead is not written: no money moves
            await h.sit("cat", 1000)
        assert refused.value.code == grpc.StatusCode.UNAVAILABLE
        for _ in range(60):  # a minute of clocks: no timeout acted, no hand settled or dealt, nothing sent
            await h.advance(1.0)
        assert len(h.publisher.sent) == sent and len(h.wallet.calls) == calls
        assert h.actor.table.hand_number == hands and h.actor.table.in_hand
        assert not await h.actor.write_snapshot()
        # an actor made under the hold of now writes, with that hold's fence
        fresh = harness(nl_config(), {}, "t-zombie", start=False, fences=fences)
        assert await fresh.actor.write_snapshot()
        assert fresh.snapshots[-1].fence.epoch == 6
        await h.stop()

    run(body)


def test_a_release_stops_its_tables_together_and_leaves_a_later_hold_of_the_partition_alone() -> None:
    async def body() -> None:
        fences = _sharded(5, "t-a")
        p = fences.partition("t-a")
        other = "t-b"
        while fences.partition(other) != p:
            other += "x"
        slow = harness(nl_config(), {}, "t-a", start=False, fences=fences)
        quick = harness(nl_config(), {}, other, start=False, fences=fences)
        tables = Tables(slow.actor.deps)
        tables.add(slow.actor)  # first in the registry, stopped first before
        tables.add(quick.actor)
        unstuck, running = asyncio.Event(), asyncio.Event()

        async def stuck() -> None:  # a table slow to stop: it swallows every cancellation (for 5 s at most)
            running.set()
            give_up = asyncio.get_running_loop().time() + 5
            while not unstuck.is_set() and asyncio.get_running_loop().time() < give_up:
                try:
                    async with asyncio.timeout(1):
                        await unstuck.wait()
                except (asyncio.CancelledError, TimeoutError):
                    pass

        try:
            asyncio.create_task(slow.actor.submit(stuck))
            await running.wait()
            release = asyncio.create_task(tables.release(p))
            await asyncio.sleep(0.1)
            # nothing of the partition goes out any more, and the other table is stopped already
            assert not fences.holds("t-a") and slow.actor.deps.writers.closed == [p]  # type: ignore[union-attr]
            assert quick.actor.task is not None and quick.actor.task.done()
            assert not release.done()
            # the partition comes back here (a later epoch) and its tables are restored before that release ends
            fences.hold(p, 6)
            fences.serve(p)
            await restore_tables({other: quick.actor.snapshot()}, tables, close=False)
            back = tables.actors[other]
            unstuck.set()
            assert await release == ["t-a", other]
            assert tables.actors == {other: back} and back.task is not None and not back.task.done()
        finally:  # nothing left running, whatever failed (a loop that lost its cancellation would run on)
            unstuck.set()
            await asyncio.sleep(0.05)
            for actor in (slow.actor, quick.actor, *tables.actors.values()):
                if actor.task is not None:
                    actor.task.cancel()

    run(body)


def test_a_table_has_one_loop() -> None:
    async def body() -> None:
        h = harness(balances=RICH)  # started
        with pytest.raises(RuntimeError, match="running already"):
            h.actor.start()  # a second loop on one mailbox would run each command twice
        await h.actor.stop()

    run(body)
