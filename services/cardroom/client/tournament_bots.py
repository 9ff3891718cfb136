"""``cardroom bots --tournament ID``: bots that enter a tournament and play it through the gateway.

Each bot logs in, is funded through the gateway's operator API (the operator token: the buy-in and
fee are cash), registers (``RegisterTournament``, idempotent by its request id), then follows its
own table through :mod:`cardroom.client.tournament_seat` (the same following as ``cardroom play``'s):
``MyTournamentStatus`` names the table number, the bot plays the dealer's table on its Play stream
with the random legal policy of the cash bots (:func:`cardroom.client.policy.choose`, or the
``policy`` given) until it is moved (the table says ``moved_out``: it looks its table up again),
busted or the tournament is over."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from cardroom.client import tournament_seat
from cardroom.client.bots import SAME_TURN, SLOW_DOWN_SECONDS, retrying, slowed_down
from cardroom.client.connection import TRANSIENT, GatewayClient, OperatorClient
from cardroom.client.policy import choose
from cardroom.client.stats import Stats
from cardroom.client.view import TableView
from cardroom.core import ids
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, tournament_pb2 as t

#: How many times a bot sends one turn's action again after the gateway refused it as over its rate.
SLOW_DOWN_TRIES = 4

#: A bot's decision: the table as it sees it, the legal actions, its random source -> its action.
Policy = Callable[[TableView, d.LegalActionsView, random.Random], g.PlayAction]


def random_policy(view: TableView, legal: d.LegalActionsView, rng: random.Random) -> g.PlayAction:
    """The cash bots' random legal action (:func:`cardroom.client.policy.choose`)."""
    mine = view.my_seat()
    return choose(legal, rng, mine.cards if mine else [])


@dataclass
class TournamentBotSettings:
    gateway: str
    operator_token: str
    tournament_id: str
    players: int = 6
    prefix: str = "tbot"
    fund: int = 0  # cash deposited per bot first (0: none, the accounts must hold the buy-in and fee)
    think_ms: float = 0.0
    seed: int | None = None
    timeout: float | None = None
    progress_every: float = 2.0


@dataclass
class TournamentBots:
    settings: TournamentBotSettings
    stats: Stats = field(default_factory=Stats)
    places: dict[str, int] = field(default_factory=dict)
    policy: Policy = random_policy

    def names(self) -> list[str]:
        s = self.settings
        tag = "".join(c for c in s.tournament_id if c.isalnum())[-12:] or "t"
        return [f"{s.prefix}{tag}p{i + 1}"[: ids.PLAYER_ID_MAX] for i in range(s.players)]

    async def fund(self, players: list[str]) -> None:
        s = self.settings
        if s.fund <= 0:
            return
        operator = OperatorClient(s.gateway, s.operator_token)
        try:
            for player in players:
                key = f"tbots-fund:{s.tournament_id}:{player}"
                await retrying(
                    functools.partial(operator.fund, player, common_pb2.CURRENCY_CASH, s.fund, key, "tournament bots")
                )
        finally:
            await operator.close()

    async def bot(self, player: str, rng: random.Random) -> None:
        s = self.settings
        client = GatewayClient(s.gateway)
        try:
            await retrying(lambda: client.login(player))
            try:
                await retrying(lambda: client.register_tournament(s.tournament_id, f"tbots-{player}"))
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.ALREADY_EXISTS:  # registered before: play on
                    raise

            async def play_at(status: t.TournamentPlayerStatus) -> bool:
                return await self.play(client, player, tournament_seat.table_id(status), rng)

            last = await tournament_seat.follow(
                lambda: retrying(lambda: client.tournament_status(s.tournament_id)), play_at
            )
            assert last is not None  # play_at never stops following
            self.places[player] = last.place
        finally:
            await client.close()

    async def play(self, client: GatewayClient, player: str, table_id: str, rng: random.Random) -> bool:
        """Play at ``table_id`` until the bot leaves it (moved, busted: True) or the stream ends."""
        s = self.settings
        view = TableView(me=player)
        acted: tuple[int, int] | None = None
        progress = 0
        asked: dict[str, tuple[tuple[int, int], int, float]] = {}  # request id -> (the turn, the attempt, sent at)
        acting: set[asyncio.Task[None]] = set()
        stream = client.play(table_id)

        async def act(key: tuple[int, int], attempt: int = 0) -> None:
            if attempt:  # refused as over the gateway's rate: the same turn, a moment later
                await asyncio.sleep(SLOW_DOWN_SECONDS * attempt)
                if (view.hand_number, progress) != key:
                    return
            elif s.think_ms > 0:
                await asyncio.sleep(rng.uniform(0.5, 1.5) * s.think_ms / 1000)
            legal = view.to_act
            if legal is None or not view.my_turn() or view.hand_number != key[0]:
                return
            move = self.policy(view, legal, rng)
            move.hand_number = key[0]
            rid = f"{player}-{key[0]}-{key[1]}" + (f"-{attempt}" if attempt else "")
            asked[rid] = (key, attempt, time.perf_counter())
            await stream.send(g.PlayRequest(request_id=rid, act=move))

        def start(key: tuple[int, int], attempt: int = 0) -> None:
            task = asyncio.create_task(act(key, attempt))
            acting.add(task)
            task.add_done_callback(acting.discard)

        try:
            async for event in stream:
                kind = event.WhichOneof("kind")
                if kind == "result":
                    answered = asked.pop(event.result.request_id, None)
                    if answered is not None:
                        self.stats.latencies.append(time.perf_counter() - answered[2])
                    self.stats.actions += 1
                    continue
                if kind == "error":
                    self.stats.refused(event.error.reason, event.error.code, event.error.message)
                    if tournament_seat.stream_failed(event):  # no such table yet, or its watch failed: look again
                        await asyncio.sleep(0.3)
                        return False
                    turn = asked.pop(event.error.request_id, None)
                    if turn is not None:
                        self.stats.latencies.append(time.perf_counter() - turn[2])
                    if turn is not None and slowed_down(event.error) and turn[1] < SLOW_DOWN_TRIES:
                        start(turn[0], turn[1] + 1)
                    continue
                if kind != "table":
                    continue
                table_event = event.table
                view.apply(table_event)
                what = table_event.WhichOneof("event")
                if what not in SAME_TURN:
                    progress = table_event.sequence
                if what == "hand_finished":
                    self.stats.hands += 1
                if tournament_seat.leaves(table_event, player):
                    return True
                if view.turn_shown(table_event) is not None:
                    key = (view.hand_number, progress)
                    if acted != key:
                        acted = key
                        start(key)
        except grpc.aio.AioRpcError as err:
            if err.code() not in TRANSIENT and err.code() != grpc.StatusCode.NOT_FOUND:
                raise
            await asyncio.sleep(0.5)  # the gateway or the dealer restarting, or the table not open yet
        finally:
            for task in acting:
                task.cancel()
            with contextlib.suppress(Exception):
                await stream.close()
            stream.cancel()
        return False

    async def progress(self) -> None:
        while True:
            await asyncio.sleep(self.settings.progress_every)
            print(self.stats.line(), flush=True)

    async def run(self) -> dict[str, int]:
        """Every bot to the end of its tournament; the places they finished in."""
        s = self.settings
        players = self.names()
        await self.fund(players)
        print(f"{len(players)} bots registering for {s.tournament_id}", flush=True)
        rng = random.Random(s.seed)
        reporter = asyncio.create_task(self.progress())
        try:
            await asyncio.wait_for(
                asyncio.gather(*(self.bot(p, random.Random(rng.random())) for p in players)), s.timeout
            )
        finally:
            reporter.cancel()
        print(self.stats.line(), flush=True)
        for player, place in sorted(self.places.items(), key=lambda kv: kv[1] or 10**6):
            print(f"  {player}: place {place or '-'}", flush=True)
        return dict(self.places)


__all__ = ["Policy", "TournamentBotSettings", "TournamentBots", "random_policy"]
