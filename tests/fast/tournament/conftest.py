"""The tournament service in-process: the real house, runner, store (SQLite in tmp) and
in-process tables, a fake bank and a manual clock."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cardroom.runtime.clock import ManualClock
from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.fakes import FakeBank
from tournament.house import TournamentHouse
from tournament.store import TournamentStore

OVERLAY = "external:house:cash"


@dataclass
class Room:
    path: Path
    bank: FakeBank
    clock: ManualClock
    house: TournamentHouse

    def reopen(self) -> TournamentHouse:
        """A new house on the same store: what a restart after kill -9 sees (the old one is dropped)."""
        self.house = TournamentHouse(TournamentStore(self.path), self.bank, self.clock, overlay_account=OVERLAY)
        return self.house

    def fund(self, *players: str, amount: int = 10_000) -> None:
        for p in players:
            self.bank.fund(f"player_cash:{p}:cash", amount)

    async def play(
        self,
        tid: str,
        *,
        step: float = 0.5,
        limit: int = 50_000,
        until: Callable[[], bool] | None = None,
        between: Callable[[], Awaitable[None]] | None = None,
    ) -> int:
        steps = 0
        runner = self.house.runners[tid]
        while not runner.finished and steps < limit and not (until and until()):
            self.clock.advance(step)
            await self.house.step()
            if between is not None:
                await between()
            steps += 1
            runner = self.house.runners[tid]
        await self.house.pay_owed()
        return steps


@pytest.fixture
def room(tmp_path: Path) -> Room:
    bank, clock = FakeBank(), ManualClock()
    path = tmp_path / "tournament.sqlite3"
    return Room(path, bank, clock, TournamentHouse(TournamentStore(path), bank, clock, overlay_account=OVERLAY))


def sng(tid: str = "sng1", players: int = 6, **kw: object) -> pb.CreateTournamentRequest:
    base: dict[str, object] = {
        "tournament_id": tid,
        "format": pb.TOURNAMENT_FORMAT_SNG,
        "variant": "NT",
        "buy_in": 1000,
        "fee": 100,
        "starting_stack": 1500,
        "max_entrants": players,
        "level_seconds": 30,
        "hand_interval_seconds": 0.01,
    }
    base.update(kw)
    return pb.CreateTournamentRequest(**base)  # type: ignore[arg-type]


async def satellite_played(room: Room, players: list[str]) -> None:
    """A satellite ("sat", six players, seats of the target's 2500 + 250) played to its end, its target
    ("main", a multi-table event far from its start) open for the winners."""
    room.fund(*players)
    await room.house.create(
        sng("main", format=pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=10_000, max_entrants=0, buy_in=2500, fee=250)
    )
    await room.house.create(
        sng("sat", players=6, format=pb.TOURNAMENT_FORMAT_SATELLITE, satellite_target="main", start_in_seconds=5)
    )
    for i, p in enumerate(players):
        await room.house.register("sat", p, f"r{i}")
    await room.play("sat")


def rebuy_event(tid: str = "rb1", **kw: object) -> pb.CreateTournamentRequest:
    """A re-buy tournament starting in 5 s, seated six a table, 20 s levels and a break every 20 s (a
    multi-table event has its breaks: the add-on's), no late registration."""
    base: dict[str, object] = {
        "format": pb.TOURNAMENT_FORMAT_REBUY,
        "start_in_seconds": 5,
        "max_entrants": 0,
        "seats": 6,
        "level_seconds": 20,
        "break_every_seconds": 20,
        "break_seconds": 5,
        "late_registration_seconds": 0,
    }
    base.update(kw)
    return sng(tid, **base)


def run_async(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an ``async def`` test in its own event loop (60 s at most)."""

    @functools.wraps(test)
    def wrapper(*args: object, **kwargs: object) -> None:
        asyncio.run(asyncio.wait_for(test(*args, **kwargs), 60))

    return wrapper
