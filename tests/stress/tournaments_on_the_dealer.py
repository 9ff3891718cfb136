"""Stress: tournaments on the dealer with the dealer (and the tournament service) killed at random moments.

``make stress`` (``python -m tests.stress.tournaments_on_the_dealer``): many seeds of the fast tier's
in-process harness (tests/fast/tournament/test_on_the_dealer.py: the real house and the real dealer,
one manual clock), each a tournament played to its end (or cancelled) while the services restart at
random steps. A run is bad when it does not end, when the core and the dealer disagree (the harness
checks each hand's stakes and plan; the house logs a hand that ends otherwise), when the dealer refuses
a command or logs an error, or when a cancelled event leaves a table open or money in its pool.
Its runs found the bugs of session 29 (docs/tournament.md, "kill -9 of the dealer"); the fast tier keeps
a few seeds of the first scenario. Not in ``make test``: a few minutes a hundred seeds.

Scenarios: ``restarts`` (multi-table events of each game, the dealer restarted up to three times),
``services`` (dealer and tournament-service restarts mixed, up to eight), ``formats`` (re-buy with
add-on, heads-up, 6-max shoot-out, satellite, freeroll), ``cancel`` (cancelled at a random moment).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import OVERLAY, sng
from tests.fast.tournament.test_on_the_dealer import Both, both, doubling, settle
from tournament.dealer_tables import DealerTables
from tournament.house import TournamentHouse
from tournament.store import TournamentStore

GAMES = ("NT", "PO", "FT", "FO/8", "F7S", "F7S/8", "F2L3D", "N5CD", "NSK")


class Errors(logging.Handler):
    """The tournament service's and the dealer's errors during one run."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith(("tournament", "dealer")):
            self.messages.append(f"{record.name}: {record.getMessage()}")


def multi_table(tid: str, players: int, game: str, rng: random.Random) -> pb.CreateTournamentRequest:
    """A 6-max freeze-out; blind games at doubling 5 s levels, the others at their standard structure."""
    levels = {"levels": doubling(rng.choice([2.0, 5.0, 10.0]), 14)} if game in ("NT", "PO") else {"level_seconds": 3}
    seats = 5 if game in ("F2L3D", "N5CD") else 6
    request = sng(tid, players, variant=game, action_seconds=1, hand_interval_seconds=0.05, seats=seats, **levels)
    request.format, request.start_in_seconds, request.unregister_before_seconds = pb.TOURNAMENT_FORMAT_MTT, 2, 0
    request.late_registration_seconds = 0
    return request


def of_format(tid: str, fmt: str, rng: random.Random) -> tuple[pb.CreateTournamentRequest, int]:
    common = {"levels": doubling(5.0), "action_seconds": 1, "hand_interval_seconds": 0.3}
    if fmt == "rebuy":
        n = rng.choice([8, 12])
        request = sng(tid, n, bot_rebuys=2, seats=6, **common)
        request.format, request.late_registration_seconds = pb.TOURNAMENT_FORMAT_REBUY, 0
        request.break_every_seconds, request.break_seconds, request.bot_add_on = 6, 3, True
    elif fmt == "heads-up":
        n = rng.choice([4, 8])
        request = sng(tid, n, **common)
        request.format = pb.TOURNAMENT_FORMAT_HEADS_UP
    elif fmt == "shoot-out":
        n = 12
        request = sng(tid, n, seats=6, **common)
        request.format = pb.TOURNAMENT_FORMAT_SHOOTOUT
    elif fmt == "satellite":
        n = rng.choice([6, 9, 14])
        request = sng(tid, n, satellite_target="main", seats=6, **common)
        request.format, request.late_registration_seconds = pb.TOURNAMENT_FORMAT_SATELLITE, 0
    else:
        n = rng.choice([6, 9, 14])
        request = sng(tid, n, seats=6, buy_in=0, fee=0, **common)
        request.format, request.late_registration_seconds = pb.TOURNAMENT_FORMAT_FREEROLL, 0
    request.start_in_seconds, request.unregister_before_seconds = 5, 0
    return request, n


async def restart_tournament_service(room: Both, store: Path) -> None:
    """kill -9 the tournament service and start it on its store; its consumer reads the dealer's
    topic again from the start (at least once: its offsets commit after the steps they brought)."""
    await room.house.stop()
    old = room.port
    port = DealerTables(room.address, bootstrap=None, tls=None, retry_seconds=0.05)
    port.skip = room.house.store.tables_acked()
    house = TournamentHouse(
        TournamentStore(store), room.bank, room.clock, overlay_account=OVERLAY, tables=port, tick_log_seconds=1e9
    )
    await house.recover()
    room.senders.append(asyncio.create_task(port.run()))
    room.house, room.port, room.heard = house, port, 0
    await old.close()


async def played(room: Both, tid: str, rng: random.Random, restarts: int, services: bool, store: Path) -> None:
    for round_ in range(restarts):
        runner = room.house.runners[tid]
        await room.play(runner, steps=rng.randint(3, 120), shove=round_ > 0 and rng.random() < 0.4)
        if room.house.runners[tid].finished:
            return
        if services and rng.random() < 0.6:
            await restart_tournament_service(room, store)
        else:
            room.clock.advance(rng.choice([0.0, 0.3, 5.0]))  # a level may begin while it is down
            await room.restart_dealer()
    await room.play(room.house.runners[tid], shove=True, steps=20_000)


async def one(scenario: str, seed: int, game: str) -> list[str]:
    """The problems of one run (none: it went well)."""
    rng = random.Random(seed)
    errors = Errors()
    logging.getLogger().addHandler(errors)
    try:
        with tempfile.TemporaryDirectory() as d:
            store = Path(d) / "t.sqlite3"
            async with both(Path(d)) as room:
                try:
                    problems = await run(room, scenario, seed, game, rng, store)
                finally:
                    for task in room.senders:
                        task.cancel()
                return problems + errors.messages[:3] + ([f"{room.port.refused} refused"] if room.port.refused else [])
    finally:
        logging.getLogger().removeHandler(errors)


async def run(room: Both, scenario: str, seed: int, game: str, rng: random.Random, store: Path) -> list[str]:
    tid = f"x{seed}"
    if scenario == "formats":
        fmt = ("rebuy", "heads-up", "shoot-out", "satellite", "freeroll")[seed % 5]
        if fmt == "satellite":
            await room.house.create(sng("main", players=100, buy_in=2500, fee=250, start_in_seconds=3600))
        request, n = of_format(tid, fmt, rng)
    else:
        n = rng.choice([7, 12, 13, 18])
        request = multi_table(tid, n, game, rng)
    await room.enter(request, [f"p{i}" for i in range(n)])
    if scenario != "cancel":
        await played(room, tid, rng, 8 if scenario == "services" else 3, scenario == "services", store)
        status = room.house.runners[tid].t.status.name
        return [] if status == "FINISHED" else [f"still {status}"]
    for round_ in range(rng.randint(1, 3)):
        await room.play(room.house.runners[tid], steps=rng.randint(3, 80), shove=round_ > 0 and rng.random() < 0.4)
        if room.house.runners[tid].finished:
            return []
        await room.restart_dealer()
    await room.play(room.house.runners[tid], steps=rng.randint(0, 5))
    await room.house.cancel(tid, "cancel")
    for _ in range(600):  # the hands in progress on the dealer play on to their end, then the tables close
        await room.port.flush()
        await settle()
        room.clock.advance(0.1)
    await room.house.pay_owed()
    open_tables = [a.number for a in room.actors(tid).values() if not a.closed]
    pool = room.bank.balances.get(f"tournament_prize_pool:{tid}:cash", 0)
    return ([f"tables {open_tables} still open"] if open_tables else []) + (
        [f"{pool} left in the pool"] if pool else []
    )


async def stress(scenarios: list[str], seeds: range, games: list[str], say: Callable[[str], None]) -> int:
    bad = 0
    for scenario in scenarios:
        for game in games if scenario in ("restarts", "services") else ["NT"]:
            for seed in seeds:
                try:
                    problems = await one(scenario, seed, game)
                except Exception as exc:  # noqa: BLE001 - reported as the run's problem
                    problems = [repr(exc)]
                if problems:
                    bad += 1
                    say(f"BAD {scenario} {game} seed {seed}: {problems}")
            say(f"{scenario} {game}: {len(seeds)} runs")
    return bad


def main(argv: list[str] | None = None, runner: Callable[[Awaitable[int]], int] = asyncio.run) -> int:
    parser = argparse.ArgumentParser(prog="make stress", description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", default="restarts,services,formats,cancel")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--seeds", type=int, default=10, help="seeds per scenario and game (default 10)")
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    bad = runner(stress(args.scenarios.split(","), seeds, args.games.split(","), lambda line: print(line, flush=True)))
    print(f"{bad} bad run(s)", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
