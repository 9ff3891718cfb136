"""Bot players through the gateway: each logs in, sits down, and plays random legal actions
on its own Play stream until the tables have dealt the wanted number of hands. The tables are
created and the bots funded through the gateway's operator API (the operator token), never on
the dealer or the wallet directly."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import random
import re
import signal
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TypeVar

import grpc

from cardroom.client.backoff import jittered, reconnect_delay
from cardroom.client.connection import RETRIED, TRANSIENT, GatewayClient, OperatorClient
from cardroom.client.policy import choose, passive
from cardroom.client.seat_commands import SeatCommands
from cardroom.client.stats import Stats
from cardroom.client.view import TableView
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g

#: Table events that do not move the hand on: a TurnStarted after them is the same turn again.
SAME_TURN = frozenset({"turn_started", "seat_changed", "pots_changed"})

T = TypeVar("T")


@dataclass
class BotSettings:
    gateway: str
    operator_token: str  # the gateway's GATEWAY_OPERATOR_TOKEN: creates the tables, funds the bots
    game: str = "NT"
    tables: int = 1
    players_per_table: int = 6
    seats: int = 0  # seats per table (0: as many as bots; more leaves room for people)
    hands: int | None = None  # stop after this many hands in all (None: until interrupted)
    think_ms: float = 0.0
    currency: common_pb2.Currency = common_pb2.CURRENCY_PLAY
    fund: int = 0  # deposit per bot before sitting down
    prefix: str = "bots"
    hand_pause: float = 0.2
    record: Path | None = None  # every Play event, "player<TAB>base64(PlayEvent)" per line
    seed: int | None = None
    timeout: float | None = None
    progress_every: float = 2.0
    stakes: tuple[int, int] | None = None  # (low, high) naming the stakes (stakes_for); None: the smallest


def stakes_for(variant: str, named: tuple[int, int] | None = None) -> d.Stakes:
    """Small stakes that suit the variant's structure and forced bets, or the stakes ``named``
    (low, high), as a table is named (rules/003: "€100/€200"): the small and big bet of limit and
    Stud games (the blinds, ante and bring-in derived by the dealer), the blinds of the others. A
    cash table counts in cents: (100, 200) at a blind game is a €1/€2 table, whose every flopped pot
    (at least €4) the rules/003 rake table rakes (from €3.75)."""
    stud = bool(re.search(r"7S|SK", variant))
    if named is not None:
        low, high = named
        if stud or variant.startswith("F"):
            return d.Stakes(small_bet=low, big_bet=high)
        return d.Stakes(small_blind=low, big_blind=high)
    if stud:
        return d.Stakes(small_bet=10, big_bet=20)  # the ante (1) and bring-in (5) derived by the dealer
    if variant.startswith("F"):
        return d.Stakes(small_blind=1, big_blind=2, small_bet=2, big_bet=4)
    return d.Stakes(small_blind=1, big_blind=2)


#: How long a bot waits before it sends an action again that the gateway refused as over its rate
#: (RESOURCE_EXHAUSTED, "slow down": the player's bucket refills at ``GATEWAY_PLAYER_RATE``, 20/s).
#: Without it a bot with no think time that outran the limit heads-up let its turn run out.
SLOW_DOWN_SECONDS = 0.25


def slowed_down(error: g.PlayError) -> bool:
    """The gateway refused a Play message as over one of its rates: send it again a moment later."""
    return error.code == grpc.StatusCode.RESOURCE_EXHAUSTED.name


async def retrying(call: Callable[[], Awaitable[T]], attempts: int = 4, delay: float = 0.5) -> T:
    """``call()``, again after a transient failure or a refusal as over a rate (the call must be
    idempotent), waiting ``delay``, twice that, … in between, each wait jittered (:mod:`cardroom.client.backoff`)."""
    for attempt in range(attempts):
        try:
            return await call()
        except grpc.aio.AioRpcError as err:
            if err.code() not in RETRIED or attempt == attempts - 1:
                raise
        await asyncio.sleep(jittered(delay * (attempt + 1)))
    raise AssertionError("unreachable")


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "", text).lower() or "x"


@dataclass
class BotRun:
    settings: BotSettings
    stats: Stats = field(default_factory=Stats)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    record_file: IO[str] | None = None
    interrupted: bool = False

    async def create_tables(self) -> list[d.TableInfo]:
        s = self.settings
        operator = OperatorClient(s.gateway, s.operator_token)
        try:
            infos = []
            for i in range(s.tables):
                table_id = f"{s.prefix}-{slug(s.game)}-{i + 1}"
                config = d.TableConfig(
                    name=f"{s.prefix} {s.game} #{i + 1}",
                    variant=s.game,
                    currency=s.currency,
                    seats=max(s.seats, s.players_per_table, 2),
                    stakes=stakes_for(s.game, s.stakes),
                    hand_pause_seconds=s.hand_pause,
                )
                infos.append(await retrying(functools.partial(operator.create_table, table_id, config)))
            return infos
        finally:
            await operator.close()

    async def fund(self, players: list[str]) -> None:
        s = self.settings
        if s.fund <= 0:
            return
        operator = OperatorClient(s.gateway, s.operator_token)
        try:
            for player in players:
                key = f"bots-fund:{player}:{s.currency}"
                await retrying(functools.partial(operator.fund, player, s.currency, s.fund, key, "bots funding"))
        finally:
            await operator.close()

    def _record(self, player: str, event: g.PlayEvent) -> None:
        if self.record_file is not None:
            self.record_file.write(f"{player}\t{base64.b64encode(event.SerializeToString()).decode()}\n")

    async def bot(self, player: str, table: d.TableInfo, counts_hands: bool, rng: random.Random) -> None:
        s = self.settings
        client = GatewayClient(s.gateway)
        try:
            await retrying(lambda: client.login(player))
            buy_in = table.max_buy_in or table.min_buy_in * 5
            try:
                join_id = f"{player}-join-{uuid.uuid4().hex[:12]}"  # one per run: its retries are the same join
                await retrying(lambda: client.join(table.table_id, buy_in, request_id=join_id))
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.ALREADY_EXISTS:  # seated before (a restored table): play on
                    raise
            view = TableView(me=player)
            sent: dict[str, float] = {}
            retry: dict[str, tuple[int, d.LegalActionsView]] = {}  # request id -> (hand, legal) for one retry
            fixed = table.config.variant.startswith("F")
            acted: tuple[int, int] | None = None
            progress = 0  # the sequence of the last table event that moved the hand on
            reconnects = 0

            async def leave_when_stopping() -> g.LeaveResponse:
                await self.stopping.wait()
                # UNAVAILABLE while the table moves between dealer replicas (the gateway's directory a
                # moment behind): asked again, as the refusal says, rather than leaving the seat taken
                return await retrying(lambda: client.leave(table.table_id), attempts=8)

            leave_task = asyncio.create_task(leave_when_stopping())
            # the stream of the moment (a reconnect opens a new one): seat commands go out on it
            seats = SeatCommands(lambda request: stream.send(request))

            async def act(key: tuple[int, int], legal: d.LegalActionsView) -> None:
                if s.think_ms > 0:
                    await asyncio.sleep(rng.uniform(0.5, 1.5) * s.think_ms / 1000)
                mine = view.my_seat()
                move = choose(legal, rng, mine.cards if mine else [], fixed)
                move.hand_number = key[0]
                rid = f"{player}-{key[0]}-{key[1]}"
                sent[rid] = time.perf_counter()
                retry[rid] = (key[0], legal)
                await stream.send(g.PlayRequest(request_id=rid, act=move))

            while True:
                # A Play stream per connection: when the gateway goes away (a restart, a deploy) the
                # bot reconnects with back-off, logs in again and resumes the table from the
                # stream's first snapshot (issue 14 item 14), instead of exiting.
                stream = client.play(table.table_id)
                try:
                    await seats.resend_all()  # after a reconnect: those the broken stream left unanswered
                    async for event in stream:
                        self._record(player, event)
                        kind = event.WhichOneof("kind")
                        if kind in ("result", "error"):
                            rid = getattr(event, kind).request_id
                            if seats.answered(event):  # add chips / come back: an UNAVAILABLE one goes again
                                if kind == "error":
                                    self.stats.refused(event.error.reason, event.error.code, event.error.message)
                                continue
                            started = sent.pop(rid, None)
                            if started is not None:
                                self.stats.latencies.append(time.perf_counter() - started)
                                if kind == "result":
                                    self.stats.actions += 1
                                else:
                                    self.stats.refused(event.error.reason, event.error.code, event.error.message)
                            elif kind == "error":  # not an action's answer: a seat command, the stream
                                self.stats.refused(event.error.reason, event.error.code, event.error.message)
                            again = retry.pop(rid, None)
                            if (
                                kind == "error"
                                and again is not None
                                and view.my_turn()
                                and view.hand_number == again[0]
                            ):
                                move = passive(again[1])  # rejected (e.g. an amount): play safe, once
                                move.hand_number = again[0]
                                if slowed_down(event.error):  # still his turn: it waits for him
                                    await asyncio.sleep(SLOW_DOWN_SECONDS)
                                sent[rid + "-again"] = time.perf_counter()
                                await stream.send(g.PlayRequest(request_id=rid + "-again", act=move))
                            continue
                        if kind != "table":
                            continue
                        table_event = event.table
                        view.apply(table_event)
                        what = table_event.WhichOneof("event")
                        if what not in SAME_TURN:
                            progress = table_event.sequence  # the hand moved on: a turn after this is a new one
                        if what == "hand_finished" and counts_hands:
                            self.stats.hands += 1
                            if s.hands is not None and self.stats.hands >= s.hands:
                                self.stopping.set()
                        if what in ("hand_finished", "snapshot") and not self.stopping.is_set():
                            mine = view.my_seat()
                            if (
                                mine is not None
                                and mine.stack < table.min_buy_in
                                and not (view.in_hand and mine.in_hand)
                                and not seats.awaiting(g.SeatCommand.KIND_ADD_CHIPS)
                            ):
                                await seats.send(g.SeatCommand.KIND_ADD_CHIPS, buy_in - mine.stack)
                            if (
                                mine is not None
                                and mine.sitting_out
                                and not seats.awaiting(g.SeatCommand.KIND_COME_BACK)
                            ):
                                await seats.send(g.SeatCommand.KIND_COME_BACK)
                        if (
                            what == "seat_changed"
                            and table_event.seat_changed.seat.player_id == player
                            and table_event.seat_changed.change == "stood_up"
                        ):
                            break
                        if leave_task.done():
                            with contextlib.suppress(Exception):
                                if not leave_task.result().pending:
                                    break
                        if (turn := view.turn_shown(table_event)) is not None:
                            # a repeated TurnStarted of the same turn (his time bank started, a connection
                            # change) has the key of the first: one action per turn
                            key = (view.hand_number, progress)
                            if acted != key:
                                acted = key
                                asyncio.create_task(act(key, turn))
                    else:  # the stream ended without the bot leaving: the gateway closed it
                        if self.stopping.is_set():
                            break
                        raise grpc.aio.AioRpcError(
                            grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "stream ended"
                        )
                    break
                except grpc.aio.AioRpcError as err:
                    if err.code() not in TRANSIENT or self.stopping.is_set():
                        raise
                    reconnects += 1
                    self.stats.refused(
                        "RECONNECTED", err.code().name, f"the Play stream broke ({err.code().name}); reconnected"
                    )
                    stream.cancel()
                    await asyncio.sleep(reconnect_delay(reconnects, rng))
                    await retrying(lambda: client.login(player), attempts=30, delay=0.5)
                    sent.clear()
                    acted = None
                    continue
            seats.close()
            await stream.close()
            stream.cancel()
            leave_task.cancel()
        finally:
            await client.close()

    def _interrupt(self, everything: asyncio.Future) -> None:
        """First Ctrl-C: every bot stands up and the run ends; a second one: stop at once."""
        if self.stopping.is_set():
            everything.cancel()
            return
        self.interrupted = True
        self.stopping.set()
        print("stopping: the bots stand up (Ctrl-C again to quit at once)", flush=True)
        asyncio.get_running_loop().call_later(20, everything.cancel)

    async def progress(self) -> None:
        while True:
            await asyncio.sleep(self.settings.progress_every)
            print(self.stats.line(), flush=True)

    async def run(self) -> Stats:
        s = self.settings
        rng = random.Random(s.seed)
        tables = await self.create_tables()
        seats = [
            (f"{s.prefix}{slug(s.game)}{t + 1}p{k + 1}", info, k == 0)
            for t, info in enumerate(tables)
            for k in range(s.players_per_table)
        ]
        await self.fund([p for p, _, _ in seats])
        print(
            f"{len(seats)} bots at {len(tables)} {s.game} tables: {', '.join(t.table_id for t in tables)}", flush=True
        )
        self.stats = Stats()
        reporter = asyncio.create_task(self.progress())
        everything = asyncio.gather(
            *(self.bot(p, info, counts, random.Random(rng.random())) for p, info, counts in seats)
        )
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, self._interrupt, everything)
        try:
            await asyncio.wait_for(everything, s.timeout)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            reporter.cancel()
        print(self.stats.line(), flush=True)
        for line in self.stats.errors_said():
            print(f"  error: {line}", flush=True)
        return self.stats


def run_bots(settings: BotSettings) -> BotRun:
    """Run the bots to the hand count or Ctrl-C (then they stand up); print progress lines."""
    runner = BotRun(settings)
    if settings.record is None:
        asyncio.run(runner.run())
        return runner
    settings.record.parent.mkdir(parents=True, exist_ok=True)
    with open(settings.record, "a") as f:
        runner.record_file = f
        asyncio.run(runner.run())
    return runner
