"""The tournament registration burst: one large scheduled tournament, N funded players logged in to the
gateway, and all of them call ``Gateway/RegisterTournament`` at the same instant, each with its own
request id; a share of them also sends the same request id again (at once, while the first call is in
flight, and once more after its answer), as a client that timed out and retried would. Measured: the
register latency at the player (p50 / p90 / p99 / max) and the refusals by status. Checked through the
gateway afterwards: the tournament's entrants == N and its prize pool == N × buy-in, every player's
cash down by exactly one buy-in + fee (a retry never charges twice); then every player unregisters
(a second burst, measured too), the tournament is back to no entrants and an empty pool, and every
player's cash is back where it was once the refunds (paid in the background) have reached the wallet.
Above ``UNARY_IN_FLIGHT`` calls at once (500) they go out that many at a time, with a note: one
load-generator process cancels some of its own calls above about 1,100 in flight (docs/capacity.md).

The tournament is created on the tournament service itself (``CreateTournament`` is the operator's: the
gateway's operator API has no tournament call and the trust table grants it to the ``operator``
identity only), with the ``operator`` certificate when the services talk mutual TLS; the players use
the gateway only."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from cardroom.client.bots import retrying
from cardroom.client.connection import GatewayClient, OperatorClient
from cardroom.client.loadtest.player import UNARY_IN_FLIGHT
from cardroom.client.stats import percentile
from cardroom.runtime.errors import reason_of
from cardroom.runtime.trust import TlsFiles, channel_credentials
from cardroom.v1 import common_pb2, tournament_pb2 as t, tournament_pb2_grpc as t_grpc

#: The tournament starts this long after its creation: the burst and the unregistering happen well
#: before it (players may unregister until 10 minutes before the start, rules/000).
START_IN_SECONDS = 3600.0


def status_of(err: grpc.aio.AioRpcError) -> str:
    reason = reason_of(err)
    return f"{err.code().name}/{reason}" if reason else err.code().name


def latency_summary(seconds: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in seconds]
    out = {f"p{p}": round(percentile(ms, p), 3) if ms else 0.0 for p in (50, 90, 99)}
    return out | {"max": round(max(ms, default=0.0), 3), "samples": len(ms)}


@dataclass
class Calls:
    """One kind of call in the burst: latencies (answered or refused) and refusals by status."""

    latencies: list[float] = field(default_factory=list)
    completed: list[float] = field(default_factory=list)  # seconds since the burst's start, per answer
    errors: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    replayed: int = 0

    def answered(self, started: float, origin: float, replayed: bool) -> None:
        now = time.perf_counter()
        self.latencies.append(now - started)
        self.completed.append(now - origin)
        self.replayed += int(replayed)

    def refused(self, started: float, origin: float, err: grpc.aio.AioRpcError, who: str) -> None:
        now = time.perf_counter()
        self.latencies.append(now - started)
        self.completed.append(now - origin)
        status = status_of(err)
        self.errors[status] = self.errors.get(status, 0) + 1
        if len(self.examples) < 10:
            self.examples.append(f"{who}: {status} {err.details()}")

    def summary(self) -> dict[str, Any]:
        return {
            "calls": len(self.latencies),
            "latency_ms": latency_summary(self.latencies),
            "errors": sum(self.errors.values()),
            "errors_by_status": dict(sorted(self.errors.items(), key=lambda kv: -kv[1])),
            "replayed": self.replayed,
        }


@dataclass
class Entrant:
    name: str
    request_id: str
    retries: bool  # sends its request id again
    client: GatewayClient | None = None
    cash_before: int | None = None
    cash_registered: int | None = None
    cash_after: int | None = None
    registered: bool = False


@dataclass
class Burst:
    """One burst run (``run`` returns the report's ``burst`` section)."""

    gateway: str
    operator_token: str
    tournament_addr: str
    tournament_id: str
    prefix: str
    entrants: int
    buy_in: int
    fee: int
    retry_share: float = 0.2
    tls_dir: Path | None = None
    tournament_token: str = ""
    setup_concurrency: int = 16
    seed: int | None = None
    refund_seconds: float = 20.0  # how long the refunds after unregistering may take to reach the wallet
    notes: list[str] = field(default_factory=list)
    register: Calls = field(default_factory=Calls)
    retry: Calls = field(default_factory=Calls)
    unregister: Calls = field(default_factory=Calls)
    players: list[Entrant] = field(default_factory=list)
    wall: dict[str, float] = field(default_factory=dict)

    # ------------------------------------------------------------------ set-up
    def _tournament_channel(self) -> grpc.aio.Channel:
        if self.tls_dir is not None:
            return grpc.aio.secure_channel(self.tournament_addr, channel_credentials(TlsFiles.load(self.tls_dir)))
        return grpc.aio.insecure_channel(self.tournament_addr)

    async def create(self) -> t.TournamentInfo:
        metadata = [("authorization", f"Operator {self.tournament_token}")] if self.tournament_token else []
        async with self._tournament_channel() as channel:
            stub = t_grpc.TournamentStub(channel)
            request = t.CreateTournamentRequest(
                tournament_id=self.tournament_id,
                name=f"load test burst {self.tournament_id}",
                format=t.TOURNAMENT_FORMAT_MTT,
                variant="NT",
                buy_in=self.buy_in,
                fee=self.fee,
                starting_stack=1500,
                max_entrants=self.entrants,
                start_in_seconds=START_IN_SECONDS,
                seats=9,
                request_id=f"create-{self.tournament_id}",
            )
            reply: t.TournamentInfo = await stub.CreateTournament(request, timeout=30, metadata=metadata)
            return reply

    def make_players(self) -> None:
        rng = random.Random(self.seed)
        every = round(1 / self.retry_share) if self.retry_share > 0 else 0
        order = list(range(self.entrants))
        rng.shuffle(order)  # which players retry: spread over the burst, not the first ones
        retriers = {order[i] for i in range(0, self.entrants, every)} if every else set()
        for i in range(self.entrants):
            name = f"{self.prefix}b{i + 1}"
            self.players.append(Entrant(name, f"reg-{self.tournament_id}-{i + 1}", retries=i in retriers))

    async def prepare(self) -> None:
        """Fund every player with one buy-in + fee in cash (the operator API) and log him in."""
        operator = OperatorClient(self.gateway, self.operator_token, timeout=30)
        limit = asyncio.Semaphore(self.setup_concurrency)

        async def one(p: Entrant) -> None:
            async with limit:
                await retrying(
                    lambda: operator.fund(
                        p.name,
                        common_pb2.CURRENCY_CASH,
                        self.buy_in + self.fee,
                        f"{self.tournament_id}:{p.name}",
                        "load test: tournament burst",
                    )
                )
                client = GatewayClient(self.gateway, timeout=30)
                await retrying(lambda: client.login(p.name))
                p.client = client
                p.cash_before = await cash(client)

        try:
            await asyncio.gather(*(one(p) for p in self.players))
        finally:
            await operator.close()

    # ------------------------------------------------------------------ the burst
    async def burst(self) -> None:
        go = asyncio.Event()
        origin = 0.0

        limit = asyncio.Semaphore(UNARY_IN_FLIGHT)

        async def register(p: Entrant, calls: Calls) -> None:
            assert p.client is not None
            async with limit:
                started = time.perf_counter()
                try:
                    reply = await p.client.register_tournament(self.tournament_id, p.request_id)
                except grpc.aio.AioRpcError as err:
                    calls.refused(started, origin, err, p.name)
                    return
                calls.answered(started, origin, reply.replayed)
            p.registered = True

        async def one(p: Entrant) -> None:
            await go.wait()
            if not p.retries:
                await register(p, self.register)
                return
            # the same request id twice at once (a retry while the first is in flight), then once more
            await asyncio.gather(register(p, self.register), register(p, self.retry))
            await register(p, self.retry)

        at_once = len(self.players) + sum(p.retries for p in self.players)
        if at_once > UNARY_IN_FLIGHT:
            self.notes.append(
                f"{at_once} registrations at once were sent at most {UNARY_IN_FLIGHT} at a time: one load-generator"
                " process cancels some of its own calls above about 1,100 in flight (docs/capacity.md)"
            )
        tasks = [asyncio.create_task(one(p)) for p in self.players]
        await asyncio.sleep(0.2)  # every task waits on the event
        origin = time.perf_counter()
        go.set()
        await asyncio.gather(*tasks)
        self.wall["register_s"] = time.perf_counter() - origin

    async def leave(self) -> None:
        """Every registered player unregisters at once (his own request id)."""
        origin = time.perf_counter()

        limit = asyncio.Semaphore(UNARY_IN_FLIGHT)

        async def one(p: Entrant) -> None:
            assert p.client is not None
            async with limit:
                started = time.perf_counter()
                try:
                    reply = await p.client.unregister_tournament(self.tournament_id, f"un{p.request_id}")
                except grpc.aio.AioRpcError as err:
                    self.unregister.refused(started, origin, err, p.name)
                    return
                self.unregister.answered(started, origin, reply.replayed)

        await asyncio.gather(*(one(p) for p in self.players if p.registered))
        self.wall["unregister_s"] = time.perf_counter() - origin

    # ------------------------------------------------------------------ checks
    async def check(self, after_unregister: bool) -> dict[str, Any]:
        reader = next((p.client for p in self.players if p.client is not None), None)
        assert reader is not None
        info = await retrying(lambda: reader.tournament(self.tournament_id))
        return {
            "status": t.TournamentStatus.Name(info.status),
            "entrants": info.entrants,
            "prize_pool": info.prize_pool,
            "collected": info.collected,
            "expected_entrants": 0 if after_unregister else self.entrants,
            "expected_prize_pool": 0 if after_unregister else self.entrants * self.buy_in,
        }

    async def balances(self, attr: str) -> None:
        limit = asyncio.Semaphore(self.setup_concurrency)

        async def one(p: Entrant) -> None:
            assert p.client is not None
            async with limit:
                try:
                    setattr(p, attr, await retrying(lambda: cash(p.client)))  # type: ignore[arg-type]
                except grpc.aio.AioRpcError as err:
                    self.notes.append(f"{p.name}: MyBalance {status_of(err)}")

        await asyncio.gather(*(one(p) for p in self.players))

    async def refunds_settled(self) -> None:
        """The players' cash after unregistering: the tournament service answers the Unregister at once and
        pays the refund (buy-in + fee) through the wallet in the background, so read again (once a second, up
        to ``refund_seconds``) while a player's cash is not back where it was."""
        deadline = time.monotonic() + self.refund_seconds
        reads = 0
        while True:
            await self.balances("cash_after")
            reads += 1
            back = all(p.cash_after is not None and p.cash_after == p.cash_before for p in self.players)
            if back or time.monotonic() >= deadline:
                self.wall["refund_reads"] = reads
                return
            await asyncio.sleep(1.0)

    # ------------------------------------------------------------------ the run
    async def run(self) -> dict[str, Any]:
        self.make_players()
        started = time.perf_counter()
        created = await self.create()
        await self.prepare()
        self.wall["setup_s"] = time.perf_counter() - started
        await self.burst()
        registered = await self.check(after_unregister=False)
        await self.balances("cash_registered")
        await self.leave()
        emptied = await self.check(after_unregister=True)
        await self.refunds_settled()
        await self.close()
        return self.summarize(created, registered, emptied)

    async def close(self) -> None:
        await asyncio.gather(*(p.client.close() for p in self.players if p.client is not None))

    def summarize(
        self, created: t.TournamentInfo, registered: dict[str, Any], emptied: dict[str, Any]
    ) -> dict[str, Any]:
        entry = self.buy_in + self.fee
        charged_wrong = [
            f"{p.name}: {p.cash_before} -> {p.cash_registered}"
            for p in self.players
            if p.cash_before is None or p.cash_registered is None or p.cash_before - p.cash_registered != entry
        ]
        refunded_wrong = [
            f"{p.name}: {p.cash_registered} -> {p.cash_after}"
            for p in self.players
            if p.cash_after is None or p.cash_registered is None or p.cash_after != p.cash_before
        ]
        failed = []
        if registered["entrants"] != registered["expected_entrants"]:
            failed.append(f"entrants {registered['entrants']} != {registered['expected_entrants']}")
        if registered["prize_pool"] != registered["expected_prize_pool"]:
            failed.append(f"prize pool {registered['prize_pool']} != {registered['expected_prize_pool']}")
        if charged_wrong:
            failed.append(f"{len(charged_wrong)} players not charged exactly one buy-in + fee")
        if emptied["entrants"] != 0 or emptied["prize_pool"] != 0:
            failed.append(f"after unregistering: {emptied['entrants']} entrants, pool {emptied['prize_pool']}")
        if refunded_wrong:
            failed.append(f"{len(refunded_wrong)} players' cash not back to where it was after unregistering")
        wall = self.wall.get("register_s", 0.0)
        return {
            "tournament_id": self.tournament_id,
            "created_status": t.TournamentStatus.Name(created.status),
            "entrants_target": self.entrants,
            "buy_in": self.buy_in,
            "fee": self.fee,
            "retrying_players": sum(p.retries for p in self.players),
            "register": self.register.summary(),
            "retries": self.retry.summary(),
            "unregister": self.unregister.summary(),
            "register_wall_s": round(wall, 3),
            "registrations_per_s": round(self.register.summary()["calls"] / wall, 1) if wall else None,
            "setup_s": round(self.wall.get("setup_s", 0.0), 3),
            "refund_reads": self.wall.get("refund_reads", 0),
            "after_register": registered,
            "after_unregister": emptied,
            "charged_wrong": charged_wrong[:20],
            "refunded_wrong": refunded_wrong[:20],
            "failed_checks": failed,
            "examples": self.register.examples + self.retry.examples + self.unregister.examples,
            "note": "register: each player's first RegisterTournament; retries: the same request id again, once "
            "while the first is in flight and once after its answer (replayed = answered as the same entry); "
            "latency at the player, from sending to the answer or refusal",
        }


async def cash(client: GatewayClient) -> int:
    reply = await client.balances()
    return sum(b.balance for b in reply.balances if b.currency == common_pb2.CURRENCY_CASH)
