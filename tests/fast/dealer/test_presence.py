"""Fast tier: connection events reach every seat of the player, in their order, and a burst of them
(a gateway lost with its players: the load test's reconnect storm) looks through the tables' seats
once, not once per event (docs/capacity.md, "The dealer's own small costs")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from dealer.actor import TableActor
from dealer.deps import Deps
from dealer.service import Tables
from dealer.tablespec import build
from tests.fast.dealer.fakes import FakeChecker, FakePublisher, FakeWallet, FakeWriters, Harness, ManualClock, nl_config


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


class CountedSeats(dict[int, Any]):
    """A table's seats that count how often they are looked through."""

    looks = 0

    def values(self) -> Any:
        self.looks += 1
        return super().values()


async def room(seatings: dict[str, list[str]]) -> tuple[Tables, dict[str, TableActor]]:
    clock = ManualClock()
    wallet = FakeWallet(balances={p: 10_000 for ps in seatings.values() for p in ps})
    publisher = FakePublisher()
    tables = Tables(Deps(wallet, publisher, FakeChecker(), clock=clock, writers=FakeWriters(publisher)))
    actors: dict[str, TableActor] = {}
    for table_id, players in seatings.items():
        actor = TableActor(table_id, build(nl_config()), tables.deps)
        tables.add(actor)
        harness = Harness(actor, wallet, publisher, clock)
        for player in players:
            await harness.sit(player, 1000)
        actors[table_id] = actor
    return tables, actors


def connected(actor: TableActor, player: str) -> bool:
    seat = actor.table.seat_of(player)
    assert seat is not None
    return actor.table.connected.get(seat, True)


def test_connection_events_reach_each_seat_of_the_player_in_their_order() -> None:
    async def body() -> None:
        tables, actors = await room({"t-1": ["ann", "bob"], "t-2": ["ann", "cat"]})
        tables.connection_changed("ann", False)
        tables.connection_changed("bob", False)
        tables.connection_changed("ann", True)  # back before the events were applied: connected in the end
        tables.connection_changed("cat", True)
        tables.connection_changed("cat", False)
        tables.connection_changed("dan", False)  # seated nowhere here
        for _ in range(50):
            await asyncio.sleep(0)
        assert connected(actors["t-1"], "ann") and connected(actors["t-2"], "ann")
        assert not connected(actors["t-1"], "bob")
        assert not connected(actors["t-2"], "cat")
        for actor in actors.values():
            await actor.stop()

    run(body)


def test_a_burst_of_connection_events_looks_through_the_seats_once() -> None:
    async def body() -> None:
        players = {f"t-{t}": [f"p{t}-{s}" for s in range(6)] for t in range(10)}
        tables, actors = await room(players)
        for actor in actors.values():
            actor.table.seating.seats = CountedSeats(actor.table.seating.seats)
        everyone = [p for ps in players.values() for p in ps]
        for player in everyone:  # a gateway lost: all of its players at once
            tables.connection_changed(player, False)
        await asyncio.sleep(0)  # the burst is applied before anything else runs
        assert [a.table.seating.seats.looks for a in actors.values()] == [1] * len(actors)  # type: ignore[attr-defined]
        for _ in range(50):
            await asyncio.sleep(0)
        assert not any(connected(actors[t], p) for t, ps in players.items() for p in ps)
        for actor in actors.values():
            await actor.stop()

    run(body)
