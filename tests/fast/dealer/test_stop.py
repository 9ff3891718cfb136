"""Fast tier: one table, one actor in a dealer. In a clean-clone chaos run (2026-12-05) a replica's release of
a partition did not finish (its rebalance callback timed out after 60 s) while a table of it kept running here,
and the partition came back and was restored over that table: two actors of one table in one process. A restore
now stops any actor still running for the table first."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from dealer.server import restore_tables
from dealer.service import Tables
from tests.fast.dealer.fakes import harness

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
