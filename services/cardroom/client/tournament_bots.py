"""``cardroom bots --tournament ID``: bots that enter a tournament and play it through the gateway.

Each bot logs in, is funded through the gateway's operator API (the operator token: the buy-in and
fee are cash), registers (``RegisterTournament``, idempotent by its request id), then follows its
own table: ``MyTournamentStatus`` names the table number, :func:`cardroom.core.ids.tournament_table_id`
the dealer's table, and the bot plays it on its Play stream with the random legal policy of the cash
bots (:func:`cardroom.client.policy.choose`) until it is moved (the table says ``moved_out``: it
looks its table up again), busted or the tournament is over."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
from dataclasses import dataclass, field

import grpc

from cardroom.client.bots import TRANSIENT, retrying
from cardroom.client.connection import OPEN_REQUEST_ID, GatewayClient, OperatorClient
from cardroom.client.policy import choose
from cardroom.client.stats import Stats
from cardroom.client.view import TableView
from cardroom.core import ids
from cardroom.v1 import common_pb2, gateway_pb2 as g

#: The player's status once he is out or the tournament over (MyTournamentStatus.status).
DONE = frozenset({"busted", "eliminated", "finished"})
#: His seat changes that take him away from the table he follows.
GONE = frozenset({"moved_out", "busted", "removed"})


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
            left: tuple[int, int] | None = None  # the seat the bot just left (the service may not know yet)
            while True:
                status = await retrying(lambda: client.tournament_status(s.tournament_id))
                if status.status in DONE or status.place:
                    self.places[player] = status.place
                    return
                if not status.table or (status.table, status.seat) == left:
                    await asyncio.sleep(0.3)  # not started, between two tables, or his bust not yet placed
                    continue
                gone = await self.play(client, player, ids.tournament_table_id(s.tournament_id, status.table), rng)
                left = (status.table, status.seat) if gone else None
        finally:
            await client.close()

    async def play(self, client: GatewayClient, player: str, table_id: str, rng: random.Random) -> bool:
        """Play at ``table_id`` until the bot leaves it (moved, busted: True) or the stream ends."""
        s = self.settings
        view = TableView(me=player)
        acted: tuple[int, int] | None = None
        progress = 0
        stream = client.play(table_id)

        async def act(key: tuple[int, int]) -> None:
            if s.think_ms > 0:
                await asyncio.sleep(rng.uniform(0.5, 1.5) * s.think_ms / 1000)
            legal = view.to_act
            if legal is None or not view.my_turn() or view.hand_number != key[0]:
                return
            mine = view.my_seat()
            move = choose(legal, rng, mine.cards if mine else [])
            move.hand_number = key[0]
            await stream.send(g.PlayRequest(request_id=f"{player}-{key[0]}-{key[1]}", act=move))

        try:
            async for event in stream:
                kind = event.WhichOneof("kind")
                if kind == "result":
                    self.stats.actions += 1
                    continue
                if kind == "error":
                    self.stats.refused(event.error.reason, event.error.code, event.error.message)
                    if event.error.request_id in ("", OPEN_REQUEST_ID):  # the table's, not an act's: look again
                        await asyncio.sleep(0.3)
                        return False
                    continue
                if kind != "table":
                    continue
                table_event = event.table
                view.apply(table_event)
                what = table_event.WhichOneof("event")
                if what not in ("turn_started", "seat_changed", "pots_changed"):
                    progress = table_event.sequence
                if what == "hand_finished":
                    self.stats.hands += 1
                if what == "table_closed":
                    return True
                if (
                    what == "seat_changed"
                    and table_event.seat_changed.seat.player_id == player
                    and table_event.seat_changed.change in GONE
                ):
                    return True
                if what in ("turn_started", "snapshot") and view.my_turn() and view.to_act is not None:
                    key = (view.hand_number, progress)
                    if acted != key:
                        acted = key
                        asyncio.create_task(act(key))
        except grpc.aio.AioRpcError as err:
            if err.code() not in TRANSIENT and err.code() != grpc.StatusCode.NOT_FOUND:
                raise
            await asyncio.sleep(0.5)  # the gateway or the dealer restarting, or the table not open yet
        finally:
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


__all__ = ["TournamentBotSettings", "TournamentBots"]
