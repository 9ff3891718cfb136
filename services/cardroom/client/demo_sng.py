"""``cardroom demo-sng``: the free demo Sit & Go that ``make run`` keeps open for people to join.

One at a time: a free NL Hold'em Sit & Go of ``seats`` players (buy-in 0, fee 0, so no prize: nobody
needs cash to try a tournament; a Sit & Go starts when full, a freeroll is a scheduled event) is
created on the tournament service (an operator call: the operator's certificate with mutual TLS, and
``TOURNAMENT_OPERATOR_TOKEN`` when the service has one); bots
(:class:`cardroom.client.tournament_bots.TournamentBots`, through the gateway like a person) take
every seat but one at once, and the last one after ``last_seat_after`` seconds unless a person took
it (``cardroom play --tournament ID``). When it is over (or cancelled) the next one opens. A demo
Sit & Go still open from an earlier run (registration or running) is carried on first: its bots
register again (the same entry) and play on.

Its lines (``make run`` reads the first): ``demo sng=ID open: ...``, ``demo sng=ID last seat: ...``,
``demo sng=ID running``, ``demo sng=ID finished: 1. NAME, 2. NAME ...``."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass

import grpc

from cardroom.client.bots import retrying
from cardroom.client.tournament_bots import TournamentBots, TournamentBotSettings
from cardroom.runtime.trust import TlsFiles, channel_credentials
from cardroom.v1 import tournament_pb2 as t, tournament_pb2_grpc

OVER = (t.TOURNAMENT_STATUS_FINISHED, t.TOURNAMENT_STATUS_CANCELLED)


@dataclass
class DemoSettings:
    gateway: str
    tournament: str
    """The tournament service's address (its internal port)."""
    tls_dir: str = ""
    """The operator's certificate (``STATE/pki/operator`` under make run); empty: plaintext."""
    operator_token: str = ""
    """The tournament service's ``TOURNAMENT_OPERATOR_TOKEN`` when it has one."""
    seats: int = 6
    last_seat_after: float = 60.0
    variant: str = "NT"
    starting_stack: int = 1500
    level_seconds: int = 180
    action_seconds: int = 20
    think_ms: float = 1500.0
    prefix: str = "demo-sng"
    rounds: int | None = None
    """How many Sit & Gos to run (None: until stopped)."""
    poll: float = 1.0


class DemoSitAndGo:
    def __init__(self, settings: DemoSettings) -> None:
        self.settings = settings
        s = settings
        if s.tls_dir:
            self.channel = grpc.aio.secure_channel(s.tournament, channel_credentials(TlsFiles.load(s.tls_dir)))
        else:
            self.channel = grpc.aio.insecure_channel(s.tournament)
        self.stub = tournament_pb2_grpc.TournamentStub(self.channel)
        self.metadata = [("authorization", f"Operator {s.operator_token}")] if s.operator_token else []

    def say(self, text: str) -> None:
        print(text, flush=True)

    async def info(self, tournament_id: str) -> t.TournamentInfo:
        return await retrying(
            lambda: self.stub.GetTournament(
                t.GetTournamentRequest(tournament_id=tournament_id), timeout=10, metadata=self.metadata
            ),
            attempts=30,
            delay=1.0,
        )

    async def still_open(self) -> str | None:
        """A demo Sit & Go of an earlier run not over yet (registration first), to carry on."""
        reply = await retrying(
            lambda: self.stub.ListTournaments(t.ListTournamentsRequest(), timeout=10, metadata=self.metadata),
            attempts=30,
            delay=1.0,
        )
        mine = [
            x
            for x in reply.tournaments
            if x.tournament_id.startswith(f"{self.settings.prefix}-") and x.status not in OVER
        ]
        mine.sort(key=lambda x: x.status != t.TOURNAMENT_STATUS_REGISTRATION)
        return mine[0].tournament_id if mine else None

    async def create(self) -> str:
        s = self.settings
        tournament_id = f"{s.prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
        request = t.CreateTournamentRequest(
            tournament_id=tournament_id,
            name=f"Demo Sit & Go ({s.seats} players, free)",
            format=t.TOURNAMENT_FORMAT_SNG,
            variant=s.variant,
            buy_in=0,
            fee=0,
            starting_stack=s.starting_stack,
            max_entrants=s.seats,
            seats=s.seats,
            level_seconds=s.level_seconds,
            action_seconds=s.action_seconds,
        )
        await retrying(
            lambda: self.stub.CreateTournament(request, timeout=20, metadata=self.metadata), attempts=30, delay=1.0
        )
        return tournament_id

    def bots(self, tournament_id: str, players: int, prefix: str) -> TournamentBots:
        s = self.settings
        return TournamentBots(
            TournamentBotSettings(
                gateway=s.gateway,
                operator_token="",
                tournament_id=tournament_id,
                players=players,
                prefix=prefix,
                think_ms=s.think_ms,
                progress_every=60.0,
            )
        )

    async def one(self, tournament_id: str, carried_on: bool = False) -> t.TournamentInfo:
        """Fill ``tournament_id`` (every seat but one at once, the last after the wait) and see it to its end."""
        s = self.settings
        self.say(
            f"demo sng={tournament_id} {'carried on' if carried_on else 'open'}: {s.seats - 1} bots take their "
            f"seats, the last seat goes to a bot in {s.last_seat_after:.0f} s unless a person takes it "
            f"(cardroom play --tournament {tournament_id})"
        )
        tasks = [asyncio.create_task(self.bots(tournament_id, s.seats - 1, "demo").run())]
        deadline = time.monotonic() + s.last_seat_after
        info = await self.info(tournament_id)
        while info.status == t.TOURNAMENT_STATUS_REGISTRATION:
            if time.monotonic() >= deadline and info.entrants < s.seats:
                self.say(
                    f"demo sng={tournament_id} last seat: nobody came in {s.last_seat_after:.0f} s, a bot takes it"
                )
                tasks.append(asyncio.create_task(self.bots(tournament_id, 1, "demolast").run()))
                deadline = float("inf")
            await asyncio.sleep(s.poll)
            info = await self.info(tournament_id)
        if info.status == t.TOURNAMENT_STATUS_RUNNING:
            self.say(f"demo sng={tournament_id} running: {info.entrants} players")
        while info.status not in OVER:
            await asyncio.sleep(s.poll)
            info = await self.info(tournament_id)
        for task in tasks:
            try:
                await asyncio.wait_for(task, 60)
            except grpc.aio.AioRpcError as err:  # the last bot too late: a person took the seat
                self.say(f"demo sng={tournament_id}: a bot could not play ({err.code().name}: {err.details()})")
            except TimeoutError:
                task.cancel()
        places = ", ".join(f"{r.place}. {r.player_id}" for r in sorted(info.results, key=lambda r: r.place))
        status = "finished" if info.status == t.TOURNAMENT_STATUS_FINISHED else "cancelled"
        self.say(f"demo sng={tournament_id} {status}: {places}")
        return info

    async def run(self) -> None:
        s = self.settings
        try:
            done = 0
            left = await self.still_open()
            if left is not None:
                await self.one(left, carried_on=True)
                done += 1
            while s.rounds is None or done < s.rounds:
                await self.one(await self.create())
                done += 1
        finally:
            with contextlib.suppress(Exception):
                await self.channel.close()


__all__ = ["DemoSettings", "DemoSitAndGo"]
