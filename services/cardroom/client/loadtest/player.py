"""One load-test player through the gateway: log in, sit down, play its Play stream (random legal
actions after a think time), and — by scenario — leave and come back (churn) or drop its stream and
re-open it (reconnect storm). Everything it sees goes to the Recorder."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import grpc

from cardroom.client.bots import SAME_TURN, retrying
from cardroom.client.connection import GatewayClient, PlayStream
from cardroom.client.loadtest.recorder import Recorder, refusal_kind
from cardroom.client.loadtest.settings import LoadSettings, Scenario
from cardroom.client.policy import choose, passive
from cardroom.client.seat_commands import SeatCommands
from cardroom.client.view import TableView
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g

#: How long a bot waits before sending a seat command again that came back UNAVAILABLE (e.g. a top-up
#: while the wallet restarts).
SEAT_RETRY_SECONDS = 1.0

#: The run's unary calls in flight at once (log-ins, balances, sit-downs, stand-ups), shared by its
#: players: one grpc.aio client process with more than about 1,100 unary calls in flight ends some of
#: them CANCELLED ("CANCELLED") on its own, whatever the server (docs/capacity.md, "Capacity at the SLO,
#: and the load generator's own CANCELLED"); a card room's players are separate processes and never meet
#: that limit.
UNARY_IN_FLIGHT = 500

T = TypeVar("T")

STOPPED, CHURN, DROPPED, BROKEN = "stopped", "churn", "dropped", "broken"  # how a Play stream ended


def status_name(err: BaseException) -> str:
    if isinstance(err, grpc.aio.AioRpcError):
        return err.code().name
    return type(err).__name__


@dataclass
class HandCounter:
    """Hands per table, counted once whoever of its players sees the end (players come and go)."""

    recorder: Recorder
    last: dict[str, int] = field(default_factory=dict)

    def finished(self, table_id: str, hand_number: int) -> None:
        if hand_number > self.last.get(table_id, 0):
            self.last[table_id] = hand_number
            self.recorder.hand()


@dataclass
class Player:
    player_id: str
    table: d.TableInfo
    settings: LoadSettings
    recorder: Recorder
    hands: HandCounter
    stopping: asyncio.Event
    rng: random.Random
    drop: asyncio.Event = field(default_factory=asyncio.Event)
    balance_before: int | None = None
    balance_after: int | None = None
    seated: bool = False
    leaving: bool = False  # a stand-up is pending (the dealer folds the hand): act no more
    arrived: bool = False  # the first sit-down has ended (seated, or given up)
    client: GatewayClient | None = None
    calls: asyncio.Semaphore | None = None
    """The run's bound on unary calls in flight (:data:`UNARY_IN_FLIGHT`); None: unbounded."""

    # ------------------------------------------------------------------ life
    async def run(self, start_delay: float) -> None:
        await asyncio.sleep(start_delay)
        self.client = GatewayClient(self.settings.gateway)
        try:
            await self._login()
            self.balance_before = await self._balance()
            while not self.stopping.is_set():
                if not self.seated:
                    self.leaving = False
                    await self._join()
                    self._arrive()
                outcome = await self._session(reopened=False)
                while outcome in (DROPPED, BROKEN) and not self.stopping.is_set():
                    if outcome == DROPPED:  # a storm: away for a while, as a player whose network went
                        await self._away(self.settings.storm_away)
                    outcome = await self._session(reopened=True)
                if outcome == CHURN:
                    if self.seated:
                        await self._leave()
                    await self._away(self.settings.churn_away)
            if self.seated:
                await self._leave()
            self.balance_after = await self._balance()
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 — a player that cannot go on is an error, not the end of the run
            self.recorder.error("player", status_name(err), f"{self.player_id}: {err}"[:300])
            self._arrive()  # given up: the steady state does not wait for it
        finally:
            if self.client is not None:
                await self.client.close()

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        """A unary call, again after a transient failure; at most :attr:`calls` of the run's at a time."""
        if self.calls is None:
            return await retrying(call)
        async with self.calls:
            return await retrying(call)

    def _arrive(self) -> None:
        if not self.arrived:
            self.arrived = True
            self.recorder.arrived += 1

    async def _away(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stopping.wait(), seconds)

    async def _login(self) -> None:
        assert self.client is not None
        client = self.client
        try:
            await self._call(lambda: client.login(self.player_id))
        except grpc.aio.AioRpcError as err:
            self.recorder.error("login", err.code().name, err.details() or "")
            raise

    async def _balance(self) -> int | None:
        assert self.client is not None
        client = self.client
        try:
            reply = await self._call(client.balances)
        except grpc.aio.AioRpcError as err:
            self.recorder.error("balance", err.code().name, err.details() or "")
            return None
        return sum(b.balance for b in reply.balances if b.currency == self.table.config.currency)

    @property
    def buy_in(self) -> int:
        return self.table.max_buy_in or self.table.min_buy_in * 5

    async def _join(self) -> None:
        assert self.client is not None
        client = self.client
        join_id = f"{self.player_id}-join-{uuid.uuid4().hex[:12]}"  # one id per sit-down: retries are the same
        try:
            await self._call(lambda: client.join(self.table.table_id, self.buy_in, request_id=join_id))
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.ALREADY_EXISTS:
                self.recorder.error("join", err.code().name, err.details() or "")
                raise
        self.seated = True
        self.recorder.seated += 1
        self.recorder.event("join")

    def _stood_up(self) -> None:
        if self.seated:
            self.seated = False
            self.recorder.seated -= 1
            self.recorder.event("leave")

    async def _leave_call(self) -> g.LeaveResponse | None:
        """Ask to stand up: None when it failed; ``pending`` when the stand-up comes after the hand."""
        assert self.client is not None
        client = self.client
        try:
            reply = await self._call(lambda: client.leave(self.table.table_id))
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.NOT_FOUND:  # not seated any more
                self._stood_up()
                return g.LeaveResponse()
            self.recorder.error("leave", err.code().name, err.details() or "")
            return None
        if not reply.pending:
            self._stood_up()
        return reply

    async def _leave(self) -> None:
        """Stand up outside a Play stream; when dealt in, follow the table until the stand-up."""
        reply = await self._leave_call()
        if reply is not None and reply.pending:
            self.leaving = True
            await self._session(reopened=False)
            self._stood_up()

    # ------------------------------------------------------------------ one Play stream
    async def _session(self, reopened: bool) -> str:
        assert self.client is not None
        if reopened:  # a new connection, as a player's client after a network drop
            await self.client.close()
            self.client = GatewayClient(self.settings.gateway)
            self.client.token, self.client.player_id = await self._token()
        self.drop.clear()
        opened = time.perf_counter()
        stream = self.client.play(self.table.table_id)
        self.recorder.connected += 1
        watcher = asyncio.create_task(self._watch(stream))
        try:
            return await self._play(stream, opened, reopened)
        except grpc.aio.AioRpcError as err:
            if self.drop.is_set() or self.stopping.is_set():
                # ended by the storm or the run's end: CANCELLED, or UNAVAILABLE when the cancel came as a
                # request was being written (grpc.aio loses the status then: cardroom.runtime.lost_status)
                return DROPPED if self.drop.is_set() else STOPPED
            self.recorder.error("play stream", err.code().name, err.details() or "")
            await self._away(0.5)
            return BROKEN  # open the stream again
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # the run itself is cancelling this player
                raise
            return DROPPED if self.drop.is_set() else STOPPED  # the stream was cancelled (grpc.aio raises this)
        finally:
            self.recorder.connected -= 1
            watcher.cancel()
            stream.cancel()

    async def _token(self) -> tuple[str, str]:
        assert self.client is not None
        client = self.client
        reply = await self._call(lambda: client.login(self.player_id))
        return reply.token, reply.player_id

    async def _watch(self, stream: PlayStream) -> None:
        """A storm drops the stream (cancel it); the end of the run stands the player up while the
        stream is still open, so the hand it is dealt in goes on being played."""
        waits = [asyncio.create_task(self.drop.wait()), asyncio.create_task(self.stopping.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()
        if self.drop.is_set():
            self.recorder.event("dropped")
            stream.cancel()
            return
        if self.leaving:
            return  # a stand-up is pending: _play ends with it
        if self.seated:
            # the players stand up over a few seconds (not 6,000 Leave calls in the same millisecond)
            await asyncio.sleep(self.rng.uniform(0, self.settings.stop_spread))
            self.leaving = True
            reply = await self._leave_call()
            if reply is None or reply.pending:
                return  # _play ends at the stand-up (or the run's stop timeout)
        stream.cancel()

    async def _play(self, stream: PlayStream, opened: float, reopened: bool) -> str:
        s, view = self.settings, TableView(me=self.player_id)
        think, folding = s.effective_think(), s.effective_folding()
        fixed = self.table.config.variant.startswith("F")
        sent: dict[str, tuple[float, int, d.LegalActionsView]] = {}
        acted: tuple[int, int] | None = None
        stay = self._churn_hands() if s.scenario is Scenario.CHURN else None
        played = 0
        first = True
        topped_up = came_back = -1
        # The seat commands sent between hands (add chips, come back), as `cardroom bots` sends them: one
        # refused as UNAVAILABLE is sent again with its request id (client/seat_commands.py). Each is tried
        # once per hand number, and no hand starts while the player is short or sitting out, so no new hand
        # would bring a second try.
        seats = SeatCommands(stream.send, retry_seconds=SEAT_RETRY_SECONDS)
        last_sequence = -1
        progress = 0  # the sequence of the last event that moved the hand on: a turn after it is a new one
        busy: set[tuple[int, int]] = set()  # turns being thought about or answered
        in_flight: dict[str, tuple[int, int]] = {}  # request id -> its turn, until the answer

        def release(key: tuple[int, int], _task: asyncio.Task[None]) -> None:
            """The act task is over: the turn is free again unless its action awaits an answer."""
            if key not in in_flight.values():
                busy.discard(key)

        async def act(key: tuple[int, int], legal: d.LegalActionsView) -> None:
            if self.leaving:  # a stand-up during the hand: the dealer folds the hand at the player's turn
                return
            pause = think.sample(self.rng)
            if pause:
                await asyncio.sleep(pause)
            if self.leaving:
                return
            if (
                view.hand_number,
                progress,
            ) != key or not view.my_turn():  # the turn went by (the clock acted) meanwhile
                self.recorder.event("turn_gone_while_thinking")
                return
            mine = view.my_seat()
            fold_share = folding.share(view.board) if folding is not None else None
            move = choose(legal, self.rng, mine.cards if mine else [], fixed, fold_share)
            move.hand_number = key[0]
            rid = f"{self.player_id}-{key[0]}-{key[1]}"
            sent[rid] = (time.perf_counter(), key[0], legal)
            in_flight[rid] = key
            await stream.send(g.PlayRequest(request_id=rid, act=move))

        try:
            async for kind, message in stream.items():  # no PlayEvent made per table event
                if kind in ("result", "error"):
                    rid = message.request_id
                    busy.discard(in_flight.pop(rid, (-1, -1)))
                    entry = sent.pop(rid, None)
                    if entry is None:
                        # a seat command's answer (an UNAVAILABLE one is sent again), or a stray one
                        answer = g.PlayEvent(**{kind: message})
                        if (seats.answered(answer) or rid.startswith("seat-")) and kind == "error":
                            self.recorder.refused(0.0, message.code, message.reason)
                            self.recorder.example(
                                f"{self.player_id} {rid}: {message.message}", refusal_kind(message.code, message.reason)
                            )
                        continue
                    latency = time.perf_counter() - entry[0]
                    if kind == "result":
                        self.recorder.action(latency)
                        continue
                    self.recorder.refused(latency, message.code, message.reason)
                    self.recorder.example(
                        f"{self.player_id} act {rid} (hand {view.hand_number}, to act "
                        f"{view.to_act.player_id if view.to_act else '-'}): {message.message}",
                        refusal_kind(message.code, message.reason),
                    )
                    if view.my_turn() and view.hand_number == entry[1] and not rid.endswith("-again"):
                        move = passive(entry[2])  # rejected (e.g. an amount): play safe, once
                        move.hand_number = entry[1]
                        sent[rid + "-again"] = (time.perf_counter(), entry[1], entry[2])
                        await stream.send(g.PlayRequest(request_id=rid + "-again", act=move))
                    continue
                if kind != "table":
                    continue
                table_event = message
                if table_event.sequence <= last_sequence and table_event.WhichOneof("event") != "snapshot":
                    self.recorder.event("stale_event")  # already in the snapshot (or a repeat): applied once only
                    continue
                last_sequence = table_event.sequence
                view.apply(table_event)
                what = table_event.WhichOneof("event")
                if what not in SAME_TURN:
                    progress = table_event.sequence
                if first and what == "snapshot":
                    first = False
                    if reopened:
                        self.recorder.event("reconnect", time.perf_counter() - opened)
                    if view.my_seat() is None:  # stood up while away (e.g. a table rule)
                        self._stood_up()
                        return STOPPED if self.leaving else CHURN
                if what == "hand_finished":
                    self.hands.finished(self.table.table_id, table_event.hand_number)
                    played += 1
                if stay is not None and played >= stay and what == "hand_finished" and not self.leaving:
                    self.leaving = True  # churn: stand up now, or after the hand when dealt in
                    reply = await self._leave_call()
                    if reply is None or not reply.pending:
                        return CHURN
                if what in ("hand_finished", "snapshot", "seat_changed") and not (
                    self.leaving or self.stopping.is_set()
                ):
                    mine = view.my_seat()
                    if mine is not None and not (view.in_hand and mine.in_hand):
                        if (
                            mine.stack < self.table.min_buy_in
                            and topped_up != view.hand_number
                            and not view.in_hand
                            and what == "hand_finished"
                            and not seats.awaiting(g.SeatCommand.KIND_ADD_CHIPS)
                        ):
                            # once between two hands, the minimum buy-in (stack + it stays under the maximum
                            # even when the view's stack lags a pot just won)
                            topped_up = view.hand_number
                            await seats.send(g.SeatCommand.KIND_ADD_CHIPS, self.table.min_buy_in)
                        if (
                            mine.sitting_out
                            and came_back != view.hand_number
                            and not seats.awaiting(g.SeatCommand.KIND_COME_BACK)
                        ):
                            came_back = view.hand_number
                            await seats.send(g.SeatCommand.KIND_COME_BACK)
                if (
                    what == "seat_changed"
                    and table_event.seat_changed.seat.player_id == self.player_id
                    and table_event.seat_changed.change == "stood_up"
                ):
                    self._stood_up()
                    return STOPPED if self.stopping.is_set() else CHURN
                if (turn := view.turn_shown(table_event)) is not None:
                    # A TurnStarted repeated for the same turn (the time bank started) has the key of the
                    # first: one action per turn. A turn after an event that moved the hand on is a new
                    # one, even before the answer to the last act came: the table applied that act (it is
                    # what moved the hand on), and its answer may come after the burst it brought.
                    key = (view.hand_number, progress)
                    if acted != key:
                        if busy:
                            self.recorder.event("new_turn_before_the_answer")
                        acted = key
                        busy.add(key)
                        task = asyncio.create_task(act(key, turn))
                        task.add_done_callback(functools.partial(release, key))
            return BROKEN  # the gateway ended the stream: open it again
        finally:
            seats.close()  # a retry still waiting for this stream goes no more

    def _churn_hands(self) -> int:
        """Hands to stay: geometric with mean ``churn_hands`` (at least 1)."""
        p = 1 / max(1.0, self.settings.churn_hands)
        n = 1
        while self.rng.random() > p:
            n += 1
        return n


def currency_of(name: str) -> common_pb2.Currency:
    return common_pb2.CURRENCY_CASH if name == "cash" else common_pb2.CURRENCY_PLAY
