"""One load generator's players: its share of the run's tables (every player of a table in the same
process, so the table's hands are counted once), the lobby pollers and reconnect storms of that share,
and the generator's own garbage collections and event-loop lateness (they read as the card room's
latency: the report says how large they were).

A run has one crowd per load-generator process (generators.py); with one generator the crowd runs in
the coordinating process itself."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardroom.client.bots import retrying
from cardroom.client.connection import GatewayClient
from cardroom.client.loadtest import gcpause
from cardroom.client.loadtest.player import UNARY_IN_FLIGHT, HandCounter, Player
from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.settings import LoadSettings, Scenario
from cardroom.client.stats import percentile
from cardroom.runtime import looplag
from cardroom.v1 import dealer_pb2 as d

#: How long the players get to stand up at the end before they are cut off.
STOP_SECONDS = 90.0


@dataclass(frozen=True)
class Share:
    """What one load generator plays: ``tables`` by their place in the run (0-based) and the lobby
    pollers by number; generator 0 also records the storms (each generator drops its own players)."""

    generator: int
    tables: tuple[int, ...]
    lobby_pollers: tuple[int, ...] = ()


def shares(tables: int, lobby_pollers: int, generators: int) -> list[Share]:
    """The run's tables and lobby pollers dealt round the ``generators`` like cards: each gets whole
    tables, and the ramp (players sit down in the order of their tables) reaches every generator alike."""
    if generators < 1:
        raise ValueError("generators: at least 1")
    return [
        Share(g, tuple(range(g, tables, generators)), tuple(range(g, lobby_pollers, generators)))
        for g in range(generators)
    ]


@dataclass(frozen=True)
class Balances:
    """The players' chips before and after the run, as far as they are known."""

    players: int  # players in the share
    known: int  # players whose balance was read before and after
    drift_of_those_known: int  # sum of after - before over them

    @staticmethod
    def total(parts: list[Balances]) -> Balances:
        return Balances(
            sum(p.players for p in parts), sum(p.known for p in parts), sum(p.drift_of_those_known for p in parts)
        )


@dataclass
class Finish:
    """What a crowd says at the end: its steady-state collections and loop lateness, the players'
    balances, its notes."""

    gc: dict[str, Any]
    lags: list[float]
    balances: Balances
    notes: list[str]


def lag_summary(lags: list[float]) -> dict[str, float]:
    """p50 / p99 / max of the loop's lateness (seconds in, ms out) and how many wakes were measured."""
    return {
        "p50_ms": round(1000 * percentile(lags, 50), 2),
        "p99_ms": round(1000 * percentile(lags, 99), 2),
        "max_ms": round(1000 * max(lags, default=0.0), 2),
        "samples": len(lags),
    }


def gc_total(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Several generators' :meth:`gcpause.Pauses.summary` as one: collections and milliseconds added
    up, the longest pause of any."""
    out: dict[str, Any] = {}
    for part in parts:
        for generation, figures in part.items():
            into = out.setdefault(
                generation, {"collections": 0, "max_ms": 0.0, "total_ms": 0.0, "cpu_ms": 0.0, "collected": 0}
            )
            into["collections"] += figures["collections"]
            into["cpu_ms"] = round(into["cpu_ms"] + figures.get("cpu_ms", 0.0), 1)
            into["collected"] += figures.get("collected", 0)
            into["max_ms"] = max(into["max_ms"], figures["max_ms"])
            into["total_ms"] = round(into["total_ms"] + figures["total_ms"], 1)
    return out


@dataclass
class Crowd:
    settings: LoadSettings
    run_id: str
    share: Share
    tables: dict[int, d.TableInfo]  # the share's tables by their place in the run
    recorder: Recorder
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    players: list[Player] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _delays: list[float] = field(default_factory=list)  # each player's sit-down, seconds into the ramp
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _side: list[asyncio.Task[None]] = field(default_factory=list)
    _pauses: gcpause.Pauses = field(default_factory=gcpause.Pauses)
    _held: gcpause.Held = field(default_factory=gcpause.Held)
    _lags: list[float] = field(default_factory=list)
    _lag_task: asyncio.Task[None] | None = None
    _window: tuple[dict[str, Any], list[float]] | None = None  # the steady state's collections and lags

    def make_players(self) -> None:
        """The share's players, named and seeded as in a one-generator run (the run's random sequence is
        drawn for every player, in table order, and each keeps its own), starting at their place in the
        run's ramp."""
        s = self.settings
        rng, calls = random.Random(s.seed), asyncio.Semaphore(UNARY_IN_FLIGHT)
        counter = HandCounter(self.recorder)
        for t in range(s.tables):
            for k in range(s.players_per_table):
                seed = rng.random()
                info = self.tables.get(t)
                if info is None:
                    continue
                player = Player(
                    f"{s.prefix}{self.run_id}t{t + 1}p{k + 1}",
                    info,
                    s,
                    self.recorder,
                    counter,
                    self.stopping,
                    random.Random(seed),
                    calls=calls,
                )
                self.players.append(player)
                self._delays.append(s.ramp * (t * s.players_per_table + k) / s.players)

    def start(self) -> None:
        """The players, the lobby pollers and the storms start; the generator's own measures too."""
        if not self.players:
            self.make_players()
        self._tasks = [asyncio.create_task(p.run(delay)) for p, delay in zip(self.players, self._delays, strict=True)]
        self._side = [asyncio.create_task(self.lobby_poller(i, random.Random(i))) for i in self.share.lobby_pollers]
        if self.settings.scenario is Scenario.RECONNECT:
            self._side.append(asyncio.create_task(self.storms()))
        self._pauses.install()
        self._lag_task = asyncio.create_task(looplag.observe_lag(looplag.PERIOD, self._lag))

    def _lag(self, seconds: float) -> None:
        """Each tick of the loop-lag observer: the lag kept, the held collector's valve looked at."""
        self._lags.append(seconds)
        self._held.valve()

    def steady(self) -> None:
        """The steady state begins: the ramp's objects are frozen out of the collections and the collector
        is held (gcpause), and the collections and lags are counted from now."""
        gcpause.freeze()
        self._pauses.reset()
        self._lags.clear()
        self._held.hold()

    def steady_over(self) -> None:
        """The steady state is over: its collections and lags are kept for :meth:`finish`; the collector
        runs again, and the note says what it found that the steady state left."""
        if self._window is None:
            self._window = (self._pauses.summary(), list(self._lags))
            if self._held.held:
                freed, ms = self._held.release()
                valves = f", {self._held.valves} made by its valve" if self._held.valves else ""
                self.notes.append(
                    f"the load generator's collector was held in the steady state{valves}; the collection "
                    f"after it freed {freed} objects in {ms:.0f} ms"
                )

    async def stop(self) -> Finish:
        """The players stand up (cut off after :data:`STOP_SECONDS`), the side tasks end."""
        self.steady_over()
        self.stopping.set()
        try:
            if self._tasks:
                _, pending = await asyncio.wait(self._tasks, timeout=STOP_SECONDS)
                for task in pending:
                    task.cancel()
                if pending:
                    self.notes.append(f"{len(pending)} players had not stood up after {STOP_SECONDS:.0f} s")
            for task in self._side:
                task.cancel()
            await asyncio.gather(*self._tasks, *self._side, return_exceptions=True)
        finally:
            await self.close()
        assert self._window is not None
        return Finish(self._window[0], self._window[1], self.balances(), list(self.notes))

    async def close(self) -> None:
        """Whatever happened: the measures removed, the ramp's objects collectable again."""
        self.stopping.set()
        await looplag.stop(self._lag_task)
        self._lag_task = None
        self._held.release()
        self._pauses.remove()
        gcpause.unfreeze()

    def balances(self) -> Balances:
        known = [p for p in self.players if p.balance_before is not None and p.balance_after is not None]
        return Balances(
            len(self.players), len(known), sum((p.balance_after or 0) - (p.balance_before or 0) for p in known)
        )

    # ------------------------------------------------------------------ the scenarios' side tasks
    async def storms(self) -> None:
        """Reconnect: every ``storm_every`` s of the steady state, a share of the players drop at once."""
        s = self.settings
        rng = random.Random(s.seed if s.seed is None else s.seed + self.share.generator)
        await asyncio.sleep(s.ramp + s.storm_every / 2)
        while not self.stopping.is_set():
            candidates = [p for p in self.players if p.seated and not p.drop.is_set()]
            for player in rng.sample(candidates, int(len(candidates) * s.storm_fraction)):
                player.drop.set()
            if self.share.generator == 0:  # one storm of the run, whatever the generators
                self.recorder.event("storm")
            await asyncio.sleep(s.storm_every)

    async def lobby_poller(self, i: int, rng: random.Random) -> None:
        s = self.settings
        await asyncio.sleep(rng.uniform(0, min(s.ramp, s.lobby_every) or 0.1))
        client = GatewayClient(s.gateway)
        try:
            await retrying(lambda: client.login(f"{s.prefix}{self.run_id}lobby{i + 1}"))
            while not self.stopping.is_set():
                started = time.perf_counter()
                try:
                    await client.lobby(s.game)
                    self.recorder.event("lobby", time.perf_counter() - started)
                except grpc.aio.AioRpcError as err:
                    self.recorder.error("lobby", err.code().name)
                await asyncio.sleep(rng.uniform(0.5, 1.5) * s.lobby_every)
        except grpc.aio.AioRpcError as err:
            self.recorder.error("lobby login", err.code().name)
        finally:
            await client.close()
