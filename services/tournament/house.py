"""Every tournament of the service (:class:`TournamentHouse`): creating them, the paid commands
(register, re-buy, add-on: the wallet first, then the core, idempotent by request id), the
unpaid ones (unregister, cancel), the in-process tables' play (auto policy), the money owed to
the wallet, and rebuilding it all from the store after a kill -9. A tournament over leaves the house
once its retention window passed and all its money is paid (:mod:`tournament.forgotten`). Time
comes from the injected clock; the core gets it as ``now``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import random
import zlib
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import grpc

from cardroom.core import ids
from cardroom.core.engine import ActionKind, IllegalAction
from cardroom.core.tournament import Status, TournamentError
from cardroom.core.tournament.tournament import PlayerStatus
from cardroom.runtime import errors
from cardroom.runtime.clock import Clock
from cardroom.runtime.errors import ServiceError
from cardroom.v1 import tournament_pb2 as pb
from tournament import bots, forgotten, listing, lobby, metrics
from tournament.bank import AK, Bank, Refused, Unavailable
from tournament.config import DEFAULT_RETENTION_SECONDS
from tournament.dealer_tables import DealerTables, TableShape
from tournament.inprocess import InProcessTables
from tournament.money import FEES_OWNER, cash_account, entry_legs, undo
from tournament.refusals import refusal
from tournament.runner import Runner
from tournament.settings import FORMATS, config_from_request
from tournament.store import MoneyOp, RequestRow, TournamentStore
from tournament.tables import HandEnded

log = logging.getLogger("tournament")
DEFAULT_HAND_INTERVAL = 0.05
#: On the dealer the turn clocks are the dealer's: the core's own never run out (it replays the
#: dealer's actions, timeouts included, as they were taken).
DEALER_CLOCK = 1e9
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
#: Payments (registrations, re-buys, add-ons) side by side at once: their wallet calls stay far under the
#: ~1,100 unary calls in flight at which one grpc.aio process cancels some of its own (docs/capacity.md);
#: the others wait a turn.
PAYING_AT_ONCE = 100
#: How long a stopping service waits for the payments in flight (their intents are completed at the next
#: start otherwise).
STOP_PAYMENTS_SECONDS = 5.0


def _leg(d: dict[str, Any]) -> MoneyOp:
    return MoneyOp(**d)


def _ended_otherwise(runner: Runner, hand: HandEnded) -> bool:
    """A dealer's hand the core does not replay is still checked when it is the core's last hand at
    that table: one all in on its blinds ends inside the core's deal, before the dealer's result
    comes (the last hand of a sit & go, the table gone with the event)."""
    number, ending = runner.last_finish.get(hand.table, (0, {}))
    return number == hand.number and ending != hand.ending


def _disagrees(runner: Runner, hand: HandEnded) -> None:
    metrics.DEALER_DISAGREES.labels("result").inc()
    log.error(
        "a dealer's hand ended otherwise in the core",
        extra={"tournament_id": runner.tournament_id, "table": hand.table, "hand": hand.number, "dealer": hand.ending},
    )


class TournamentHouse:
    def __init__(
        self,
        store: TournamentStore,
        bank: Bank,
        clock: Clock,
        *,
        overlay_account: str,
        tick_seconds: float = 0.05,
        tick_log_seconds: float = 1.0,
        tables: InProcessTables | None = None,
        retention_seconds: float = DEFAULT_RETENTION_SECONDS,
    ) -> None:
        self.store = store
        self.bank = bank
        self.clock = clock
        self.overlay_account = overlay_account
        self.tick_seconds = tick_seconds
        self.tick_log_seconds = tick_log_seconds
        self.tables = tables if tables is not None else InProcessTables()
        if isinstance(self.tables, DealerTables):
            self.tables.skip = store.tables_acked()
            self.tables.on_acked = store.set_tables_acked
        self.runners: dict[str, Runner] = {}
        #: how long a tournament over stays here (answered from its runner, visited by the periodic pass: a
        #: late dealer's result is still checked) before it is forgotten (``TOURNAMENT_RETENTION_SECONDS``)
        self.retention_seconds = retention_seconds
        self._over_since: dict[str, float] = {}  # tournament id -> when the house first saw it over
        self._seating: set[str] = set()  # satellites whose winners are being registered in the target
        self.money_wakeup = asyncio.Event()
        self._last_tick: dict[str, float] = {}
        self._tasks: list[asyncio.Task[None]] = []
        #: paid commands paying side by side (registrations, re-buys, add-ons), by (tournament id, request id):
        #: (op, player, the answer's future); a registration's holds a seat
        self._paying: dict[tuple[str, str], tuple[str, str, asyncio.Future[dict[str, Any]]]] = {}
        self._pay_turns = asyncio.Semaphore(PAYING_AT_ONCE)
        #: the payments in flight (each runs to its end even when its caller gave up)
        self._payments: set[asyncio.Task[dict[str, Any]]] = set()

    # ------------------------------------------------------------------ lifecycle
    def _runner(self, request: pb.CreateTournamentRequest, seed: int, created: float) -> Runner:
        config = config_from_request(request, created)
        if isinstance(self.tables, DealerTables):
            self.tables.configure(
                request.tournament_id,
                TableShape(
                    config.variant.code,
                    config.seat_count,
                    config.action_seconds,
                    config.extra_time_seconds,
                    time_bank_when_disconnected=config.extra_time_when_disconnected,
                    deal_on_request=True,
                ),
            )
            config = dataclasses.replace(config, action_seconds=DEALER_CLOCK, extra_time_seconds=0.0)
        return Runner(
            request.tournament_id, request, config, seed, created, self.store, self.tables, self.overlay_account
        )

    async def recover(self) -> None:
        """Rebuild every tournament from the store (replay), roll back hands in progress, then
        finish the payments that were in flight. The forgotten tournaments are not replayed nor
        loaded: they are counted in the metrics, their records stay in the store."""
        self._remember()
        for tid, raw, seed, created in self.store.tournaments():
            request = pb.CreateTournamentRequest.FromString(raw)
            runner = self._runner(request, seed, created)
            runner.replay(self.store.commands(tid))
            runner.roll_back_hands()
            runner.flush()
            self.runners[tid] = runner
            log.info(
                "tournament rebuilt",
                extra={
                    "tournament_id": tid,
                    "commands": runner.command_seq,
                    "events": runner.event_seq,
                    "status": runner.t.status.value,
                },
            )
        for tid, request_id, row in self.store.paying():
            owner = self.runners.get(tid)
            if owner is None:
                continue
            async with owner.lock:
                with contextlib.suppress(ServiceError):
                    await self._complete(owner, request_id, row)
        for runner in self.runners.values():
            metrics.observe(runner, self.clock.now())
            self._after_end(runner)  # a satellite's winners not yet seated in the target (idempotent)
            if runner.finished:  # over before the restart: its retention window starts again
                self._over_since[runner.tournament_id] = self.clock.now()
        self.money_wakeup.set()

    def start(self) -> None:
        self._tasks.extend([asyncio.create_task(self._play_loop()), asyncio.create_task(self._money_loop())])

    async def stop(self) -> None:
        if (
            self._payments
        ):  # the payments in flight end (each a few wallet calls), else their intents wait for the next start
            await asyncio.wait(set(self._payments), timeout=STOP_PAYMENTS_SECONDS)
        for task in [*self._tasks, *self._payments]:
            task.cancel()
        for task in [*self._tasks, *self._payments]:
            with contextlib.suppress(BaseException):
                await task

    def get(self, tournament_id: str) -> Runner:
        """The runner of a tournament in the house (a forgotten one has none: NOT_FOUND here; the
        lobby's and the player's answers come from :meth:`info` and :meth:`status_of`)."""
        ids.verify_tournament_id(tournament_id)
        runner = self.runners.get(tournament_id)
        if runner is None:
            raise errors.not_found(f"tournament_id: no tournament {tournament_id!r}", "TOURNAMENT_NOT_FOUND")
        return runner

    # ------------------------------------------------------------------ answers (the house's or the record's)
    def is_forgotten(self, tournament_id: str) -> bool:
        """Whether ``tournament_id`` left the house (its record in the store). One in the house is
        answered without asking the store."""
        return tournament_id not in self.runners and self.store.is_forgotten(tournament_id)

    def forgotten_count(self) -> int:
        """How many tournaments left the house: the store counts its rows at each call (the start's log)."""
        return self.store.forgotten_count()

    def _record(self, tournament_id: str) -> pb.TournamentInfo | None:
        """A forgotten tournament's last lobby answer, read from the store (None: not a forgotten one)."""
        if tournament_id in self.runners:
            return None
        record = self.store.forgotten_info(tournament_id)
        return None if record is None else pb.TournamentInfo.FromString(record)

    def info(self, tournament_id: str, *, standings: bool = True) -> pb.TournamentInfo:
        """The lobby's answer about a tournament: its runner's now, or a forgotten one's last."""
        ids.verify_tournament_id(tournament_id)
        runner = self.runners.get(tournament_id)
        if runner is not None:
            return lobby.info(runner, self.clock.now(), standings=standings)
        record = self._record(tournament_id)
        if record is None:
            raise errors.not_found(f"tournament_id: no tournament {tournament_id!r}", "TOURNAMENT_NOT_FOUND")
        return record

    def infos(self, status: int = pb.TOURNAMENT_STATUS_UNSPECIFIED) -> list[pb.TournamentInfo]:
        """The lobby's answers (no standings) of the house's tournaments with ``status`` (unspecified:
        every one, open, running, or over within the retention window): the lobby a player polls stays
        the size of what is in play, not of every tournament ever run. The forgotten ones are the
        store's: :meth:`listing` lists them in pages when their status is asked for."""
        now = self.clock.now()
        live = [lobby.info(runner, now, standings=False) for runner in list(self.runners.values())]
        return [info for info in live if status in (pb.TOURNAMENT_STATUS_UNSPECIFIED, info.status)]

    def listing(
        self, status: int = pb.TOURNAMENT_STATUS_UNSPECIFIED, size: int = 0, token: str = ""
    ) -> tuple[list[pb.TournamentInfo], str]:
        """ListTournaments: :meth:`infos`, or a page of them by id and the next page's token
        (:mod:`tournament.listing`): the house's after the token, merged by id with the store's page of
        the forgotten ones when a status over is asked for (all over: never read otherwise)."""
        per_page = listing.page_size(status, size, token)
        if per_page is None:
            return self.infos(status), ""
        start, now = listing.after(token), self.clock.now()

        def held() -> Iterator[pb.TournamentInfo]:
            for tid in sorted(t for t in self.runners if t > start):
                info = lobby.info(self.runners[tid], now, standings=False)
                if status in (pb.TOURNAMENT_STATUS_UNSPECIFIED, info.status):
                    yield info

        if status in listing.IN_PLAY:
            return listing.page(held(), per_page)
        kept = (pb.TournamentInfo.FromString(r) for r in self.store.forgotten_page(status, start, per_page + 1))
        return listing.page(listing.merged(kept, held()), per_page)

    def status_of(self, tournament_id: str, player: str) -> dict[str, Any] | None:
        """``player``'s status (:func:`player_status`) in a tournament of the house or forgotten; None
        when he is not an entrant; NOT_FOUND for no such tournament."""
        if self.is_forgotten(tournament_id):
            status: dict[str, Any] | None = self.store.forgotten_detail(tournament_id).get("players", {}).get(player)
            return status
        runner = self.get(tournament_id)
        return player_status(runner, player) if player in runner.t.entrants else None

    def created_before(self, request: pb.CreateTournamentRequest) -> pb.TournamentInfo | None:
        """CreateTournament again for a forgotten tournament: its answer when the settings are the
        same (as for one in the house), ALREADY_EXISTS otherwise; None: not a forgotten one."""
        record = self._record(request.tournament_id)
        if record is None:
            return None
        if self.store.request_of(request.tournament_id) == self._normalised(request).SerializeToString():
            return record
        raise errors.exists(f"tournament_id: {request.tournament_id!r} exists with other settings", "TOURNAMENT_EXISTS")

    def _answer_over(self, tournament_id: str, op: str, player: str, request_id: str) -> dict[str, Any]:
        """A command about a forgotten tournament: the answer given to the same request id, else the
        refusal the tournament gave when it was in the house (its status, reason and message)."""
        if op != "cancel":
            ids.verify_player_id(player)
        row = self._replay_request(tournament_id, request_id, op, player)
        if row is not None and row.state == "done":
            return {**row.body, "replayed": True}
        info = self.info(tournament_id)  # its record
        if op == "cancel":
            raise forgotten.over(info)
        raise forgotten.refused(self.store.forgotten_detail(tournament_id), info, op, player)

    # ------------------------------------------------------------------ create
    async def create(self, request: pb.CreateTournamentRequest) -> Runner:
        if self.is_forgotten(request.tournament_id):
            raise errors.exists(f"tournament_id: {request.tournament_id!r} exists", "TOURNAMENT_EXISTS")
        existing = self.runners.get(request.tournament_id)
        if existing is not None:
            if existing.request.SerializeToString() == self._normalised(request).SerializeToString():
                return existing
            raise errors.exists(
                f"tournament_id: {request.tournament_id!r} exists with other settings", "TOURNAMENT_EXISTS"
            )
        request = self._normalised(request)
        now = self.clock.now()
        runner = self._runner(request, 0, now)  # validates (INVALID_ARGUMENT) before anything is stored
        seed = request.seed or zlib.crc32(request.tournament_id.encode())
        await self.bank.open_account(AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, request.tournament_id)
        await self.bank.open_account(AK.ACCOUNT_KIND_TOURNAMENT_FEES, FEES_OWNER)
        runner = self._runner(request, seed, now)
        if not self.store.add_tournament(request.tournament_id, request.SerializeToString(), seed, now):
            raise errors.exists(f"tournament_id: {request.tournament_id!r} exists", "TOURNAMENT_EXISTS")
        self.runners[request.tournament_id] = runner
        log.info(
            "tournament created",
            extra={"tournament_id": request.tournament_id, "format": pb.TournamentFormat.Name(request.format)},
        )
        return runner

    def _normalised(self, request: pb.CreateTournamentRequest) -> pb.CreateTournamentRequest:
        """A satellite's seat value fixed at creation (the target's buy-in + fee when it is here)."""
        out = pb.CreateTournamentRequest()
        out.CopyFrom(request)
        out.request_id = ""
        if out.format == pb.TOURNAMENT_FORMAT_SATELLITE and not out.satellite_seat_value:
            target = self.runners.get(out.satellite_target)
            if target is not None:
                out.satellite_seat_value = target.config.buy_in + target.config.fee
            elif (over := self._record(out.satellite_target)) is not None:
                out.satellite_seat_value = over.buy_in + over.fee
        return out

    # ------------------------------------------------------------------ paid commands
    def _replay_request(self, tournament_id: str, request_id: str, op: str, player: str) -> RequestRow | None:
        if not request_id:
            raise errors.invalid("request_id: required (the same id again returns the first answer)")
        if len(request_id) > 120:
            raise errors.invalid("request_id: at most 120 characters")
        row = self.store.request(tournament_id, request_id)
        if row is not None and (row.op != op or row.player != player):
            raise errors.exists(
                f"request_id: {request_id!r} was used for {row.op} of {row.player}", "REQUEST_ID_REUSED"
            )
        return row

    def _checked(self, runner: Runner, op: str, verify: Callable[[float], None]) -> float:
        """The tournament brought up to now, then ``verify`` (the core's refusal as the service's):
        the time it was checked at."""
        now = self.clock.now()
        self._tick(runner, now)
        try:
            verify(now)
        except TournamentError as exc:
            runner.flush()
            raise refusal(exc, op) from None
        return now

    def _tick(self, runner: Runner, now: float) -> None:
        if runner.t.status in (Status.REGISTRATION, Status.RUNNING):
            runner.do({"op": "tick", "now": now})
            self._last_tick[runner.tournament_id] = now

    async def register(
        self, tournament_id: str, player: str, request_id: str, *, via_satellite: bool = False
    ) -> dict[str, Any]:
        """Register ``player``. Before the start, registrations pay side by side (:meth:`_pay_side_by_side`)
        and each payment in flight holds a seat, so that a full event is not oversold. Late and satellite
        registrations pay under the lock (docs/capacity.md, the registration burst)."""
        if self.is_forgotten(tournament_id):
            return self._answer_over(tournament_id, "register", player, request_id)
        runner = self.get(tournament_id)
        ids.verify_player_id(player)
        return await self._pay_side_by_side(
            runner, request_id, lambda: self._register_step(runner, player, request_id, via_satellite)
        )

    async def _pay_side_by_side(
        self, runner: Runner, request_id: str, step: Callable[[], Awaitable[tuple[str, Any]]]
    ) -> dict[str, Any]:
        """A paid command whose payment does not hold the tournament's lock: the lock is held to check,
        to record the payment's intent and to apply it, never across the wallet's calls, so the
        tournament's other players (and its hands) do not wait for them. ``step`` runs under the lock
        and says what to do: ``("answered", answer)``, ``("repeat", the first call's future)`` for a
        request id in flight (its answer is this one's), ``("wait", futures)`` until one of those
        payments ends, or ``("pay", (its future, op, player, legs, command))``. A caller giving up leaves
        the payment to finish by itself (its intent is stored first); a repeat of its request id gets its
        answer."""
        key = (runner.tournament_id, request_id)
        while True:
            async with runner.lock:
                kind, value = await step()
            if kind == "answered":
                return value  # type: ignore[no-any-return]
            if kind == "wait":  # e.g. every free seat is held by a payment in flight: the next to end decides
                await asyncio.wait(value, return_when=asyncio.FIRST_COMPLETED)
                continue
            if kind == "repeat":
                try:
                    return {**(await asyncio.shield(value)), "replayed": True}
                except asyncio.CancelledError:
                    if not value.cancelled():
                        raise
                    continue  # its caller gave up mid-payment: this one completes it
            break
        mine, op, player, legs, cmd = value
        payment = asyncio.create_task(self._payment(runner, key, mine, op, player, legs, cmd))
        self._payments.add(payment)
        payment.add_done_callback(self._payments.discard)
        payment.add_done_callback(lambda f: f.cancelled() or f.exception())  # its caller may be gone
        body = await asyncio.shield(payment)  # a caller giving up leaves the payment to finish
        return {**body, "replayed": False}

    async def _payment(
        self,
        runner: Runner,
        key: tuple[str, str],
        mine: asyncio.Future[dict[str, Any]],
        op: str,
        player: str,
        legs: list[MoneyOp],
        cmd: dict[str, Any],
    ) -> dict[str, Any]:
        """One payment in flight, to its end whether or not its caller still waits (its answer is
        stored: a repeat of the request id gets it)."""
        try:
            async with self._pay_turns:
                body = await self._paid_outside_the_lock(runner, key[1], op, player, legs, cmd)
        except asyncio.CancelledError:
            mine.cancel()  # the service stopping: the stored intent is completed at the next start
            raise
        except BaseException as exc:
            mine.set_exception(exc)
            raise
        finally:
            self._paying.pop(key, None)
        mine.set_result(body)
        return body

    def _hold(self, runner: Runner, request_id: str, op: str, player: str) -> asyncio.Future[dict[str, Any]]:
        """Under the lock: a payment in flight for ``request_id`` (what a repeat of it waits for)."""
        mine: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        mine.add_done_callback(lambda f: f.cancelled() or f.exception())  # no "never retrieved" warning
        self._paying[(runner.tournament_id, request_id)] = (op, player, mine)
        return mine

    def _paying_for(self, runner: Runner, op: str, player: str) -> bool:
        """A payment of ``op`` by ``player`` is in flight (side by side)."""
        return any(
            tid == runner.tournament_id and (o, p) == (op, player) for (tid, _), (o, p, _) in self._paying.items()
        )

    async def _in_flight(self, runner: Runner, request_id: str, op: str, player: str) -> tuple[str, Any] | None:
        """Under the lock, the first part of every paid command's step: the answer already given, the
        payment in flight for the same request id, or one left unfinished (completed now); None: a new one."""
        row = self._replay_request(runner.tournament_id, request_id, op, player)
        if row is not None and row.state == "done":
            return "answered", {**row.body, "replayed": True}
        first = self._paying.get((runner.tournament_id, request_id))
        if first is not None:
            return "repeat", first[2]
        if row is not None:  # a payment left by a crash, a wallet outage or a caller who gave up
            return "answered", await self._complete(runner, request_id, row)
        return None

    async def _register_step(self, runner: Runner, player: str, request_id: str, via_satellite: bool) -> Any:
        """Under the lock: what :meth:`_pay_side_by_side` does next — a seat held while paying."""
        tournament_id = runner.tournament_id
        seen = await self._in_flight(runner, request_id, "register", player)
        if seen is not None:
            return seen
        now = self._checked(
            runner, "register", lambda at: runner.t.verify_register(player, at, via_satellite=via_satellite)
        )
        cfg = runner.config
        legs = entry_legs(tournament_id, player, f"{tournament_id}:{request_id}", cfg.buy_in, cfg.fee, "entry")
        cmd = {"op": "register", "player": player, "via_satellite": via_satellite}
        if via_satellite or runner.t.status is not Status.REGISTRATION:
            return "answered", await self._pay_and_apply(runner, request_id, "register", player, legs, cmd, now)
        held = [f for (tid, _), (op, _, f) in self._paying.items() if tid == tournament_id and op == "register"]
        if cfg.max_entrants is not None and len(runner.t.entrants) + len(held) >= cfg.max_entrants:
            return "wait", held
        return "pay", (self._hold(runner, request_id, "register", player), "register", player, legs, cmd)

    async def _paid_outside_the_lock(
        self, runner: Runner, request_id: str, op: str, player: str, legs: list[MoneyOp], cmd: dict[str, Any]
    ) -> dict[str, Any]:
        """A payment in flight: its funds read and its legs taken outside the lock, its intent stored
        and the core's command applied under it."""
        total = sum(leg.amount for leg in legs)
        if total:
            self._afford(player, op, await self._balance(cash_account(player)), total)
        row = RequestRow(op, player, "paying", {"legs": [dataclasses.asdict(leg) for leg in legs], "cmd": cmd})
        async with runner.lock:
            runner.flush([(request_id, row)])  # the durable intent before any money moves
        taken = await self._take(runner, request_id, legs, locked=False)
        async with runner.lock:
            body = await self._apply_paid(runner, request_id, row, legs, taken, None)
        return body

    async def rebuy(self, tournament_id: str, player: str, request_id: str, *, double: bool = False) -> dict[str, Any]:
        """A re-buy, paid side by side with the others (:meth:`_pay_side_by_side`): many players re-buy at
        once when the period ends or a level goes up."""
        if self.is_forgotten(tournament_id):
            return self._answer_over(tournament_id, "rebuy", player, request_id)
        runner = self.get(tournament_id)
        ids.verify_player_id(player)

        async def step() -> tuple[str, Any]:
            seen = await self._in_flight(runner, request_id, "rebuy", player)
            if seen is not None:
                return seen
            legs, cmd, _ = self._rebuy_order(runner, player, request_id, double)
            return "pay", (self._hold(runner, request_id, "rebuy", player), "rebuy", player, legs, cmd)

        return await self._pay_side_by_side(runner, request_id, step)

    def _rebuy_order(
        self, runner: Runner, player: str, request_id: str, double: bool
    ) -> tuple[list[MoneyOp], dict[str, Any], float]:
        """Under the lock: the re-buy checked now, its payment's legs, its command and the time checked."""
        now = self._checked(runner, "rebuy", lambda at: runner.t.verify_rebuy(player, at, double=double))
        cost = runner.config.rebuy_cost * (2 if double else 1)
        legs = entry_legs(runner.tournament_id, player, f"{runner.tournament_id}:{request_id}", cost, 0, "rebuy")
        return legs, {"op": "rebuy", "player": player, "double": double}, now

    async def add_on(self, tournament_id: str, player: str, request_id: str) -> dict[str, Any]:
        """The add-on, paid side by side with the others (:meth:`_pay_side_by_side`): every player may
        take it in the same break."""
        if self.is_forgotten(tournament_id):
            return self._answer_over(tournament_id, "add_on", player, request_id)
        runner = self.get(tournament_id)
        ids.verify_player_id(player)

        async def step() -> tuple[str, Any]:
            seen = await self._in_flight(runner, request_id, "add_on", player)
            if seen is not None:
                return seen
            legs, cmd, _ = self._add_on_order(runner, player, request_id)
            return "pay", (self._hold(runner, request_id, "add_on", player), "add_on", player, legs, cmd)

        return await self._pay_side_by_side(runner, request_id, step)

    def _add_on_order(
        self, runner: Runner, player: str, request_id: str
    ) -> tuple[list[MoneyOp], dict[str, Any], float]:
        """Under the lock: the add-on checked now, its payment's legs, its command and the time checked."""
        now = self._checked(runner, "add_on", lambda at: runner.t.verify_add_on(player, at))
        cost = runner.config.add_on_cost
        legs = entry_legs(runner.tournament_id, player, f"{runner.tournament_id}:{request_id}", cost, 0, "add-on")
        return legs, {"op": "add_on", "player": player}, now

    async def _bought_under_the_lock(self, runner: Runner, request_id: str, op: str, player: str) -> dict[str, Any]:
        """The auto policy's re-buy or add-on, between hands under the tournament's lock (its own
        request ids, never in flight elsewhere)."""
        seen = await self._in_flight(runner, request_id, op, player)
        if seen is not None:
            kind, value = seen
            if kind == "answered":
                return value  # type: ignore[no-any-return]
            raise errors.unavailable(f"request_id: {request_id!r} is being paid; try again", "IN_FLIGHT")
        if op == "rebuy":
            legs, cmd, now = self._rebuy_order(runner, player, request_id, False)
        else:
            legs, cmd, now = self._add_on_order(runner, player, request_id)
        return await self._pay_and_apply(runner, request_id, op, player, legs, cmd, now)

    async def _pay_and_apply(
        self,
        runner: Runner,
        request_id: str,
        op: str,
        player: str,
        legs: list[MoneyOp],
        cmd: dict[str, Any],
        now: float,
    ) -> dict[str, Any]:
        total = sum(leg.amount for leg in legs)
        if total:
            balance = await self._balance(cash_account(player))
            try:
                self._afford(player, op, balance, total)
            except ServiceError:
                runner.flush()
                raise
        row = RequestRow(op, player, "paying", {"legs": [dataclasses.asdict(leg) for leg in legs], "cmd": cmd})
        runner.flush([(request_id, row)])
        return await self._complete(runner, request_id, row, now)

    @staticmethod
    def _afford(player: str, op: str, balance: int | None, total: int) -> None:
        if balance is None or balance < total:
            raise errors.precondition(
                f"player_id: {player} has {balance or 0} cents in {cash_account(player)}, "
                f"the {op.replace('_', '-')} costs {total}",
                INSUFFICIENT_FUNDS,
            )

    async def _balance(self, account: str) -> int | None:
        try:
            return await self.bank.balance(account)
        except Unavailable as exc:
            raise errors.unavailable(str(exc), errors.BACKEND_UNAVAILABLE) from None
        except Refused:
            return None

    async def _complete(
        self, runner: Runner, request_id: str, row: RequestRow, now: float | None = None
    ) -> dict[str, Any]:
        """Take the payment's legs (again: idempotent), then apply the command — or, when the
        wallet refuses or the rules no longer allow it, give back what was taken (under the lock)."""
        legs = [_leg(d) for d in row.body["legs"]]
        taken = await self._take(runner, request_id, legs, locked=True)
        return await self._apply_paid(runner, request_id, row, legs, taken, now)

    async def _take(self, runner: Runner, request_id: str, legs: list[MoneyOp], *, locked: bool) -> list[MoneyOp]:
        """The payment's legs (idempotent by their keys); a refusal gives back what was taken."""
        taken: list[MoneyOp] = []
        try:
            for leg in legs:
                await self.bank.transfer(leg)
                taken.append(leg)
        except Unavailable as exc:
            raise errors.unavailable(f"{exc} (retry with the same request_id)", errors.BACKEND_UNAVAILABLE) from None
        except Refused as exc:
            if locked:
                await self._give_back(runner, request_id, taken)
            else:
                async with runner.lock:
                    await self._give_back(runner, request_id, taken)
            code = exc.code if exc.code != grpc.StatusCode.FAILED_PRECONDITION else None
            if code is None:
                raise errors.precondition(exc.message, INSUFFICIENT_FUNDS) from None
            raise ServiceError(code, exc.message) from None
        return taken

    async def _apply_paid(
        self,
        runner: Runner,
        request_id: str,
        row: RequestRow,
        legs: list[MoneyOp],
        taken: list[MoneyOp],
        now: float | None,
    ) -> dict[str, Any]:
        """Under the lock: the paid command applied (or what was taken given back), its answer stored."""
        cmd = dict(row.body["cmd"])
        now = self.clock.now() if now is None else now
        try:
            self._tick(runner, now)
            runner.do({**cmd, "now": now})
        except TournamentError as exc:
            runner.flush()
            await self._give_back(runner, request_id, taken)
            raise refusal(exc, row.op) from None
        metrics.registration(runner, row.op)
        player = row.player
        e = runner.t.entrants.get(player)
        body = {
            "tournament_id": runner.tournament_id,
            "player_id": player,
            "paid": sum(x.amount for x in legs),
            "chips": self._chips_added(runner, cmd),
            "status": player_status(runner, player) if e is not None else {},
        }
        runner.flush([(request_id, RequestRow(row.op, player, "done", body))])
        self.money_wakeup.set()
        return {**body, "replayed": False}

    @staticmethod
    def _chips_added(runner: Runner, cmd: dict[str, Any]) -> int:
        cfg = runner.config
        if cmd["op"] == "rebuy":
            return cfg.rebuy_chips * (2 if cmd.get("double") else 1)
        if cmd["op"] == "add_on":
            return cfg.add_on_chips
        return cfg.starting_stack

    async def _give_back(self, runner: Runner, request_id: str, taken: list[MoneyOp]) -> None:
        for leg in taken:
            try:
                await self.bank.transfer(undo(leg))
            except (Unavailable, Refused):
                # owed: the money worker pays it (same key) once the wallet answers
                runner._money.append(undo(leg))  # noqa: SLF001 - the runner's step buffer
        runner.flush()
        self.store.drop_request(runner.tournament_id, request_id)

    # ------------------------------------------------------------------ unpaid commands
    async def unregister(self, tournament_id: str, player: str, request_id: str) -> dict[str, Any]:
        if self.is_forgotten(tournament_id):
            return self._answer_over(tournament_id, "unregister", player, request_id)
        runner = self.get(tournament_id)
        ids.verify_player_id(player)
        async with runner.lock:
            row = self._replay_request(runner.tournament_id, request_id, "unregister", player)
            if row is not None:
                return {**row.body, "replayed": True}
            now = self.clock.now()
            self._tick(runner, now)
            try:
                runner.t.verify_unregister(player, now)
                runner.do({"op": "unregister", "player": player, "now": now})
            except TournamentError as exc:
                runner.flush()
                raise refusal(exc, "unregister") from None
            metrics.registration(runner, "unregister")
            cfg = runner.config
            body = {
                "tournament_id": tournament_id,
                "player_id": player,
                "paid": cfg.buy_in + cfg.fee,
                "chips": 0,
                "status": {},
            }
            runner.flush([(request_id, RequestRow("unregister", player, "done", body))])
            self.money_wakeup.set()
            return {**body, "replayed": False}

    async def cancel(self, tournament_id: str, request_id: str) -> dict[str, Any]:
        if self.is_forgotten(tournament_id):
            return self._answer_over(tournament_id, "cancel", "", request_id or "cancel")
        runner = self.get(tournament_id)
        async with runner.lock:
            key = request_id or "cancel"
            row = self._replay_request(runner.tournament_id, key, "cancel", "")
            if row is not None:
                return {**row.body, "replayed": True}
            now = self.clock.now()
            self._tick(runner, now)
            if runner.finished:
                runner.flush()
                raise errors.precondition(
                    f"tournament_id: {tournament_id} is {runner.t.status.value}", "TOURNAMENT_OVER"
                )
            try:
                payout = runner.do({"op": "cancel", "now": now})
            except TournamentError as exc:
                runner.flush()
                raise refusal(exc, "cancel") from None
            players = sorted(set(payout.awards) | set(payout.fees) | set(payout.refunds))
            body = {
                "policy": payout.policy.value,
                "payouts": [[p, payout.total_to(p)] for p in players],
                "distributed": payout.distributed,
                "house_kept": payout.house_kept,
            }
            runner.flush([(key, RequestRow("cancel", "", "done", body))])
            self._over_since.setdefault(tournament_id, now)  # its retention window starts
            self.money_wakeup.set()
            metrics.observe(runner, now)
            log.info("tournament cancelled", extra={"tournament_id": tournament_id, "policy": payout.policy.value})
            return {**body, "replayed": False}

    # ------------------------------------------------------------------ the tables' play
    async def _play_loop(self) -> None:
        while True:
            await self.clock.sleep(self.tick_seconds)
            try:
                await self.step()
            except Exception:
                log.exception("tournament step failed")

    async def step(self) -> None:
        """One pass over every tournament: time, the auto policy's decisions, hands (on the dealer:
        the hands it finished, replayed in the core); a tournament over past its retention window is
        forgotten (:meth:`_forget_when_done`)."""
        heard: dict[str, list[HandEnded]] = {}
        ended = self.tables.hands_ended()  # taken in every mode: the in-process tables' reports pile up otherwise
        for hand in ended if isinstance(self.tables, DealerTables) else []:
            heard.setdefault(hand.tournament_id, []).append(hand)
        try:
            for runner in list(self.runners.values()):
                if runner.finished:  # a late result (its hand ended in the core's deal) is only checked
                    self._hands_played(runner, heard.get(runner.tournament_id, []), self.clock.now())
                    self._forget_when_done(runner, self.clock.now())
                    continue
                async with runner.lock:
                    was = runner.t.status  # before the dealer's hands: the last of them may end it
                    if heard.get(runner.tournament_id):
                        self._hands_played(runner, heard[runner.tournament_id], self.clock.now())
                    await self._step(runner, was)  # stores the step (Runner.flush)
                metrics.observe(runner, self.clock.now())
        finally:
            if isinstance(self.tables, DealerTables):
                self.tables.applied()  # their offsets may be committed now

    def _hands_played(self, runner: Runner, hands: list[HandEnded], now: float) -> None:
        """Hands the dealer finished, each replayed in the core (same deck, same actions: the same
        stacks; each seat's Extra Time left as the dealer counted it); one the core does not play (a
        past one read again, a table gone) is skipped. A hand rolled back by a dealer restart is
        rolled back here too, at its table only, and dealt again: the dealer says so table by table
        (and with shards only the dead replica's tables roll back), while the other tables' hands go
        on there and their results come back to replay. A rollback word applied already (read again
        after a restart of this service) is skipped."""
        t = runner.t
        for hand in hands:
            table = t.tables.get(hand.table)
            if table is None or hand.table not in t.playing or table.hand_number != hand.number:
                if not hand.rolled_back and _ended_otherwise(runner, hand):
                    _disagrees(runner, hand)  # the core's last hand there (ended in its deal) ended otherwise
                continue
            if hand.rolled_back:
                if not runner.rollback_heard_already(hand):
                    runner.do({"op": "roll_back", "table": hand.table, "word": hand.sequence, "now": now})
                continue
            if hand.time_banks:  # before the last action: it may end the round and seat the winners anew
                banks = {str(seat): left for seat, left in sorted(hand.time_banks.items())}
                runner.do({"op": "time_banks", "table": hand.table, "banks": banks, "now": now})
            try:
                for a in hand.actions:
                    if hand.table not in t.playing:
                        break
                    runner.do(
                        {
                            "op": "act",
                            "table": hand.table,
                            "seat": a.seat,
                            "kind": a.kind,
                            "amount": a.amount,
                            "discards": list(a.discards),
                            "now": now,
                        }
                    )
            except (ValueError, IllegalAction) as exc:  # the table's and tournament's errors, the engine's
                metrics.DEALER_DISAGREES.labels("replay").inc()
                log.error(
                    "a dealer's hand does not replay in the core",
                    extra={"tournament_id": runner.tournament_id, "table": hand.table, "error": str(exc)},
                )
                continue
            if hand.table in t.playing or runner.last_finish.get(hand.table) != (hand.number, hand.ending):
                _disagrees(runner, hand)

    async def _step(self, runner: Runner, was: Status) -> None:
        """Time, decisions, deals; when the tournament ended in this step (``was``: its status
        before it), the money worker is woken and a satellite's winners go to the target event."""
        t, now = runner.t, self.clock.now()
        last = self._last_tick.get(runner.tournament_id, 0.0)
        due_start = t.status is Status.REGISTRATION and t.config.start_at is not None and now >= t.config.start_at
        if due_start or (t.status is Status.RUNNING and now - last >= self.tick_log_seconds):
            self._tick(runner, now)
        if t.status is Status.RUNNING:
            await self._decide(runner, now)
            self._deal(runner, now)
        runner.flush()
        if runner.finished and was is not t.status:
            self._over_since.setdefault(runner.tournament_id, now)  # its retention window starts
            self.money_wakeup.set()
            self._after_end(runner)

    async def _decide(self, runner: Runner, now: float) -> None:
        """The auto policy between hands: re-buy after a bust (up to ``bot_rebuys``), else out;
        the add-on when ``bot_add_on``."""
        t, req = runner.t, runner.request
        window = req.hand_interval_seconds or DEFAULT_HAND_INTERVAL
        for player in runner.pending_rebuys():
            e = t.entrants[player]
            if e.rebuys < req.bot_rebuys and t.can_rebuy(player, now):
                with contextlib.suppress(ServiceError):
                    await self._bought_under_the_lock(runner, f"auto-rebuy-{player}-{e.rebuys + 1}", "rebuy", player)
                    continue
            if (
                t.entrants[player].status is PlayerStatus.PENDING_REBUY
                and now - runner.pending_since.get(player, now) >= window
                and not self._paying_for(runner, "rebuy", player)  # asked in time: its payment decides
            ):
                runner.do({"op": "decline_rebuy", "player": player, "now": now})
            if t.status is not Status.RUNNING:
                return
        if req.bot_add_on:
            for player, e in list(t.entrants.items()):
                if e.status is PlayerStatus.ACTIVE and e.add_ons == 0 and t.can_add_on(player, now):
                    with contextlib.suppress(ServiceError):
                        await self._bought_under_the_lock(runner, f"auto-add-on-{player}", "add_on", player)

    def _deal(self, runner: Runner, now: float) -> None:
        t, req = runner.t, runner.request
        interval = req.hand_interval_seconds or DEFAULT_HAND_INTERVAL
        for tid in sorted(t.tables):
            if t.status is not Status.RUNNING:
                return
            if tid not in t.tables or now - runner.last_hand_end.get(tid, 0.0) < interval:
                continue
            waiting = t.reserved.get(tid, {}).values()
            if any(now - runner.pending_since.get(p, now) < interval for p in waiting):
                continue  # a player there may still re-buy
            if any(self._paying_for(runner, "rebuy", p) for p in waiting):
                continue  # his re-buy, asked in time, is paying: the next hand waits for it
            if not t.can_deal(tid, now):  # now: a break due since the last tick refuses
                continue
            plan = runner.do({"op": "deal", "table": tid, "now": now})
            if plan is None:
                runner.last_hand_end[tid] = now
                continue
            if runner.on_the_dealer:
                continue  # played there: its actions come back with its result
            rng = random.Random(runner.next_deck_seed() ^ 0x5EED)
            self._play_hand(runner, tid, rng, now)

    @staticmethod
    def _play_hand(runner: Runner, tid: int, rng: random.Random, now: float) -> None:
        t = runner.t
        while tid in t.playing and t.status is Status.RUNNING:
            table = t.tables[tid]
            for attempt in range(6):
                if attempt < 5:
                    decision = bots.decide(table, t.variant.structure, rng)
                else:
                    la = table.legal_actions()
                    assert la is not None
                    kind = ActionKind.CHECK if ActionKind.CHECK in la.kinds else ActionKind.FOLD
                    decision = {"seat": la.seat, "kind": kind.name, "amount": None, "discards": []}
                try:
                    runner.do({"op": "act", "table": tid, "now": now, **decision})
                    break
                except (ValueError, IllegalAction):  # refused (the engine's own refusals too): decide again
                    if attempt == 5:
                        raise

    def _after_end(self, runner: Runner) -> None:
        """A satellite's seat winners are registered in the target event when it is here."""
        sat = runner.config.satellite
        if runner.t.status is not Status.FINISHED or sat is None or sat.target not in self.runners:
            if sat is not None and runner.t.status is Status.FINISHED and self.is_forgotten(sat.target):
                log.warning(  # a target over (its registration long closed) takes no winner
                    "satellite seats not registered: the target is over",
                    extra={"tournament_id": runner.tournament_id, "target": sat.target},
                )
            return
        winners = [r.player for r in runner.results if r.seat]
        self._seating.add(runner.tournament_id)  # kept in the house until they are registered there
        seating = asyncio.create_task(self._seat_winners(runner, sat.target, winners))
        self._tasks.append(seating)
        seating.add_done_callback(self._tasks.remove)  # the house's loops stay; a seating's task goes when done

    async def _seat_winners(self, runner: Runner, target: str, winners: list[str]) -> None:
        try:
            while self.store.money_pending_count(runner.tournament_id):
                await self.clock.sleep(0.05)
            for player in winners:
                try:
                    await self.register(
                        target, player, f"satellite-{runner.tournament_id}-{player}", via_satellite=True
                    )
                except ServiceError as exc:
                    log.warning(
                        "satellite seat not registered",
                        extra={"player_id": player, "target": target, "error": exc.message},
                    )
        finally:
            self._seating.discard(runner.tournament_id)

    # ------------------------------------------------------------------ tournaments over, forgotten
    def _forget_when_done(self, runner: Runner, now: float) -> None:
        """A tournament over leaves the house :attr:`retention_seconds` after it ended here (a restart
        starts the window again: when it is first seen over), once nothing of it is left to do."""
        since = self._over_since.setdefault(runner.tournament_id, now)
        if now - since < self.retention_seconds or not self._done_with(runner):
            return
        try:
            self._forget(runner, now)
        except Exception:  # the other tournaments' play goes on; tried again a window later
            self._over_since[runner.tournament_id] = now
            log.exception("tournament not forgotten", extra={"tournament_id": runner.tournament_id})

    def _done_with(self, runner: Runner) -> bool:
        """Nothing of the tournament is left to do: no command running (its lock free), no payment in
        flight or left unfinished, every owed transfer paid (prizes, refunds, overlay: the money is
        never forgotten), a satellite's winners registered in the target, every table command
        answered by the dealer."""
        tid = runner.tournament_id
        return not (
            runner.lock.locked()
            or tid in self._seating
            or any(key[0] == tid for key in self._paying)
            or not self.tables.settled(tid)
            or self.store.money_pending_count(tid)
            or self.store.paying_count(tid)
        )

    def _forget(self, runner: Runner, now: float) -> None:
        """Its record stored (the lobby's last answer, every entrant's status, its refusals), then the
        runner and everything the house, the tables and the metrics keep by its id let go."""
        tid = runner.tournament_id
        players = {p: player_status(runner, p) for p in runner.t.entrants}
        info, detail = forgotten.record(runner, now, players)
        self.store.forget(tid, now, info, detail)
        del self.runners[tid]
        self._over_since.pop(tid, None)
        self._last_tick.pop(tid, None)
        self.tables.forget(tid)
        metrics.forgotten(tid)
        log.info("tournament forgotten", extra={"tournament_id": tid, "status": runner.t.status.value})

    def _remember(self) -> None:
        """The forgotten tournaments at a start: counted in their state, a group at a time (the store
        counts them; none is loaded or replayed)."""
        for fmt, status, count in self.store.forgotten_counts():
            metrics.remembered(FORMATS[fmt].value, lobby.status_name(status), count)

    # ------------------------------------------------------------------ money owed
    async def _money_loop(self) -> None:
        while True:
            await self.pay_owed()
            self.money_wakeup.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                async with asyncio.timeout(0.5):
                    await self.money_wakeup.wait()

    async def pay_owed(self) -> int:
        """Send the owed transfers to the wallet (same keys on every try), wave after wave until none is
        left or the wallet fails one; returns how many are left. A wave pays side by side the transfers
        in order up to the first whose source an earlier one of the wave credits (it may need that
        money: a guarantee's overlay before the prizes), at most :data:`PAYING_AT_ONCE`."""
        while True:
            wave = owed_wave(self.store.pending_money())
            if not wave or not all(await asyncio.gather(*(self._pay(op) for op in wave))):
                return self.store.money_pending_count()

    async def _pay(self, op: MoneyOp) -> bool:
        try:
            await self.bank.transfer(op)
        except Unavailable:
            metrics.MONEY_RETRIES.inc()
            return False
        except Refused as exc:
            metrics.MONEY_REFUSED.inc()
            log.error("owed transfer refused", extra={"key": op.key, "error": exc.message})
            return False
        self.store.money_done(op.key)
        metrics.MONEY_PAID.inc(op.amount)
        return True


def owed_wave(owed: list[MoneyOp]) -> list[MoneyOp]:
    """The owed transfers (in order) that may be paid side by side: up to the first whose source an
    earlier one credits, at most :data:`PAYING_AT_ONCE`."""
    credited: set[str] = set()
    wave: list[MoneyOp] = []
    for op in owed[:PAYING_AT_ONCE]:
        if op.source in credited:
            break
        wave.append(op)
        credited.add(op.target)
    return wave


def player_status(runner: Runner, player: str) -> dict[str, Any]:
    t = runner.t
    e = t.entrants[player]
    prize = 0
    place = 0
    if e.placement is not None:
        place = e.placement.first
        if t.pool_final:
            prize = e.placement.prizes(t.prize_table)[player]
    seated = not isinstance(runner.tables, DealerTables) or runner.tables.placed(runner.tournament_id, player)
    return {
        "status": e.status.value,
        "table": (e.table or 0) if seated else 0,  # on the dealer: once he is at that table there
        "seat": (e.seat or 0) if seated else 0,
        "chips": t.chips(player),
        "place": place,
        "prize": prize,
        "rebuys": e.rebuys,
        "add_ons": e.add_ons,
    }


__all__ = ["TournamentHouse", "player_status"]
