"""The Dealer gRPC servicer: routes each request to its table's actor, maps errors to statuses.

Identity: the dealer is not client-facing. The gateway authenticates players and passes
the authenticated ``player_id``; the dealer trusts it (see dealer.proto).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from cardroom.core import ids
from cardroom.core.engine import ActionKind
from cardroom.runtime.errors import abort, abort_refused, as_service_error
from cardroom.v1 import dealer_pb2, dealer_pb2_grpc
from dealer import metrics, money
from dealer.actor import TableActor
from dealer.commands import check_player
from dealer.deps import Deps, Watcher
from dealer.errors import DealerError, exists, invalid, not_found, unavailable
from dealer.feed import FeedWatcher, feed_messages
from dealer.retired import Retired, actor_from_snapshot
from dealer.tablespec import build

log = logging.getLogger("dealer.service")
T = TypeVar("T")
#: At most this many events in one WatchBursts message (a watcher catching up sends several).
MAX_BURST = 500
#: A table feed's queue: the events of every viewer joined on one gateway (WATCH_BUFFER is one viewer's).
FEED_BUFFER = 20000


def _fingerprint(request: Any) -> bytes:
    return hashlib.sha256(request.SerializeToString(deterministic=True)).digest()


class Tables:
    """The registry of table actors (a plain dict: creation happens on the event loop)."""

    def __init__(self, deps: Deps) -> None:
        self.deps = deps
        self.actors: dict[str, TableActor] = {}
        #: connection events not applied yet, in the order they came (:meth:`connection_changed`)
        self._presence: list[tuple[str, bool]] = []
        #: closed tables whose actor left memory, their snapshots (:mod:`dealer.retired`)
        self.retired = Retired()

    def get(self, table_id: str) -> TableActor:
        if not table_id:
            raise invalid("table_id: required")
        self.deps.fences.verify_held(table_id)
        actor = self.lookup(table_id)
        if actor is None:
            raise not_found(f"no table {table_id!r}")
        return actor

    def lookup(self, table_id: str) -> TableActor | None:
        """The table's actor (None: no such table here); a retired one is back from its snapshot, as a
        restart would build it, and started."""
        actor = self.actors.get(table_id)
        if actor is None:
            snap = self.retired.take(table_id)
            if snap is not None:
                actor = actor_from_snapshot(table_id, snap, self.deps, self.lookup)
                actor.reconcile_due = ""  # retired owing nothing (dealer.retired): no reconciliation to make
                self.add(actor)
                metrics.TABLES_REVIVED.inc()
        return actor

    def add(self, actor: TableActor) -> None:
        self.actors[actor.table_id] = actor
        self.retired.discard(actor.table_id)  # (a partition restored again: the actor its snapshot made)
        actor.start()

    def retire_idle(self) -> list[str]:
        """Every closed table with nothing left in memory only (:meth:`TableActor.retirable`) leaves its
        actor for its snapshot (:mod:`dealer.retired`); returns their ids."""
        gone: list[str] = []
        for table_id, actor in list(self.actors.items()):
            try:  # one table's failure never stops the pass (nor the gauges after it)
                if not actor.retirable():
                    continue
                self.retired.keep(table_id, actor.snapshot())
            except Exception:
                log.exception("closed table not retired", extra={"table_id": table_id})
                continue
            del self.actors[table_id]
            gone.append(table_id)
            actor.mailbox.close(unavailable(f"table {table_id!r} is closed and was put away; retry"))
            task = asyncio.create_task(actor.stop("closed"))  # its loop waits for a command: ends at once
            self.deps.background.add(task)
            task.add_done_callback(self.deps.background.discard)
        return gone

    def in_partition(self, partition: int) -> list[TableActor]:
        return [a for t, a in self.actors.items() if self.deps.fences.partition(t) == partition]

    async def release(self, partition: int) -> list[str]:
        """This replica lost ``partition`` (docs/sharding.md): its tables stop at once — no action,
        no timeout, no write; a hand in progress is left to the next owner, who cancels it from the
        snapshot — and are forgotten here. Returns their ids.

        The hold and the partition's transactional writer end before the first await, so nothing of the
        partition goes out from here on, and a later hold of it (the partition back here) is never
        touched by this release: only these actors are forgotten, and they stop together (one slow
        table does not keep the others dealing)."""
        self.deps.fences.release(partition)
        if self.deps.writers is not None:
            self.deps.writers.close(partition)
        gone = self.in_partition(partition)
        stops = await asyncio.gather(*(actor.stop("moved") for actor in gone), return_exceptions=True)
        for actor, stopped in zip(gone, stops, strict=True):
            if isinstance(stopped, BaseException):
                log.error("table stop failed", extra={"table_id": actor.table_id, "error": repr(stopped)})
            actor.mailbox.close(
                unavailable(f"table {actor.table_id!r} moved to another dealer; look its owner up and retry")
            )
            if self.actors.get(actor.table_id) is actor:
                del self.actors[actor.table_id]
        self.retired.drop(lambda table_id: self.deps.fences.partition(table_id) == partition)
        self.refresh_gauges()
        return [a.table_id for a in gone]

    def connection_changed(self, player: str, up: bool) -> None:
        """A connection event: update the player's seats (each in its actor). The events that come
        before the loop runs again are applied together, in their order, with one look through every
        table's seats: a gateway lost with its players sends thousands at once (the load test's
        reconnect storm), and a look per event cost tables × seats each."""
        if not up:
            for allowance in self.deps.allowances.values():
                allowance.refresh(player)
        self._presence.append((player, up))
        if len(self._presence) == 1:
            asyncio.get_running_loop().call_soon(self._apply_presence)

    def _apply_presence(self) -> None:
        changes, self._presence = self._presence, []
        by_player: dict[str, list[bool]] = {}
        for player, up in changes:
            by_player.setdefault(player, []).append(up)
        for actor in self.actors.values():
            if actor.closed:
                continue
            for state in actor.table.seating.seats.values():
                for up in by_player.get(state.player, ()):
                    task = asyncio.create_task(actor.submit(functools.partial(actor.set_connected, state.player, up)))
                    self.deps.background.add(task)
                    task.add_done_callback(self.deps.background.discard)

    def refresh_gauges(self) -> None:
        """The table gauges, read from every table: once a second (``server._gauges``) and after
        partitions move, never per request (a sit-down at 1,000 tables would read all 1,000)."""
        tables: dict[str, int] = {}
        seated: dict[str, int] = {}
        waiting: dict[str, int] = {}
        off = 0
        chips = {currency: 0 for currency in money.CURRENCY_SLUG.values()}
        for actor in self.actors.values():
            tables.setdefault(actor.variant, 0)
            seated.setdefault(actor.variant, 0)
            if actor.variant not in waiting:
                metrics.known_variant(actor.variant, tuple(kind.value for kind in ActionKind))
            waiting.setdefault(actor.variant, 0)
            if actor.closed:
                continue
            tables[actor.variant] += 1
            seated[actor.variant] += len(actor.table.seating.seats)
            # seated but not yet dealt in: new players waiting for the big blind (rules/002)
            waiting[actor.variant] += sum(
                1 for st in actor.table.seating.seats.values() if st.new and not st.post_now and not st.sitting_out
            )
            on_table = actor.chips()  # counted once for both gauges
            off += abs(actor.imbalance(on_table))
            if actor.holds_money:
                chips[money.CURRENCY_SLUG[actor.currency]] += on_table
        metrics.TABLES_RETIRED.set(len(self.retired))
        for variant, n in tables.items():
            metrics.TABLES.labels(variant).set(n)
            metrics.SEATED.labels(variant).set(seated[variant])
            metrics.WAITING.labels(variant).set(waiting[variant])
        metrics.IMBALANCE.set(off)
        for currency, total in chips.items():
            metrics.TABLE_CHIPS.labels(currency).set(total)

    async def drain(self, bound: float) -> None:
        """Deal no new hand anywhere, wait up to ``bound`` seconds for the hands in progress to end,
        then write every table's snapshot. A table still in a hand at the bound is left to recovery
        (its hand is cancelled on restore, as after a crash) and named in the log."""
        actors = list(self.actors.values())
        for actor in actors:
            try:
                async with asyncio.timeout(5):
                    await actor.submit(actor.drain)
            except Exception:
                log.exception("table did not take the drain", extra={"table_id": actor.table_id})
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline and not all(a.drained or a.closed for a in actors):
            await asyncio.sleep(0.1)
        unfinished = [a.table_id for a in actors if not (a.drained or a.closed)]
        log.info("drained", extra={"tables": len(actors), "hands_unfinished": unfinished[:50]})
        for actor in actors:
            try:
                async with asyncio.timeout(10):
                    await actor.submit(actor.write_snapshot)
            except Exception:  # one table's failure never stops the shutdown of the others
                log.exception("snapshot at shutdown failed", extra={"table_id": actor.table_id})

    async def stop(self) -> None:
        for actor in self.actors.values():
            try:
                await actor.stop()
            except Exception:
                log.exception("table stop failed", extra={"table_id": actor.table_id})


async def answered(context: grpc.aio.ServicerContext, fn: Callable[[], Awaitable[T]]) -> T:
    """``fn()``; a refusal (``DealerError``, a bad id) aborts the call with its precise status."""
    try:
        return await fn()
    except (DealerError, ids.InvalidId) as exc:
        await abort_refused(context, exc)


async def _subscribed(actor: TableActor, viewer: str) -> tuple[Watcher, dealer_pb2.TableEvent]:
    """A new watcher of ``actor`` and the snapshot event it starts from, made inside the table's actor
    between two of its steps — never while a step awaits Kafka or the wallet, when the table has
    changed (a hand dealt, a hand settled) but the events saying so are not out yet: a snapshot taken
    then would hold what its next events tell again (docs/capacity.md, failure 3). The snapshot's
    sequence is the table's at that moment: every event queued for the watcher is after it. A caller
    giving up meanwhile leaves no watcher behind."""
    gave_up = False
    made: list[Watcher] = []

    async def subscribe() -> tuple[Watcher, dealer_pb2.TableEvent] | None:
        if gave_up:
            return None
        if viewer and not actor.closed:
            await actor.set_connected(viewer, True)  # a seated viewer's connection to the table
        watcher, state = actor.subscribe(viewer)
        made.append(watcher)
        snapshot = dealer_pb2.TableEvent(
            table_id=actor.table_id, sequence=actor.sequence, hand_number=state.hand_number, snapshot=state
        )
        return watcher, snapshot

    try:
        subscribed = await actor.submit(subscribe)
    except asyncio.CancelledError:
        gave_up = True
        for watcher in made:
            actor.unsubscribe(watcher)
        raise
    assert subscribed is not None
    return subscribed


async def _feed_subscribed(actor: TableActor) -> FeedWatcher:
    """A new feed watcher of ``actor``, added inside the table's actor (a closed table's is ended)."""

    async def subscribe() -> FeedWatcher:
        feed = FeedWatcher("", asyncio.Queue(FEED_BUFFER))
        if actor.closed:
            feed.end("closed")
        else:
            actor.watchers.add(feed)
        return feed

    return await actor.submit(subscribe)


def _scoped(request: Any) -> str:
    """The player's request id, scoped to him: de-duplication (and the wallet keys made from it)
    is per player, so one player's id never answers or blocks another's (issue 14 item 5)."""
    return ids.player_request_id(request.player_id, request.request_id) if request.request_id else ""


async def _act(actor: TableActor, request: dealer_pb2.ActRequest) -> dealer_pb2.ActResponse:
    """An action inside the table's actor (the Act call and the feed's acts): a repeat of a request id
    answers the first result."""
    start = time.perf_counter()
    result = await actor.submit(lambda: actor.act(request), _scoped(request), _fingerprint(request))
    metrics.ACTION_SECONDS.labels(actor.variant).observe(time.perf_counter() - start)
    return result


async def _feed_act(actor: TableActor, feed: FeedWatcher, request: dealer_pb2.ActRequest) -> None:
    """An action sent on the feed, carried out as Act; its answer (or refusal, as the status Act would
    give) queued behind the events it brought. Queued inside the actor's step, right after them, so
    that the feed sends both in one message (and the gateway can put the answer in the player's burst);
    a repeat of the request id, answered from the first result without a step, is queued after it."""
    answer = dealer_pb2.FeedResult(request_id=request.request_id)
    queued = False

    def refused(exc: DealerError | ids.InvalidId) -> None:
        error = as_service_error(exc)
        assert error is not None
        answer.refused = error.to_status_proto().SerializeToString()

    async def act_and_answer() -> dealer_pb2.ActResponse:
        nonlocal queued
        try:
            result = await actor.act(request)
        except (DealerError, ids.InvalidId) as exc:
            refused(exc)
            queued = True
            feed.answer(answer)
            raise
        answer.act.CopyFrom(result)
        queued = True
        feed.answer(answer)
        return result

    start = time.perf_counter()
    try:
        result = await actor.submit(act_and_answer, _scoped(request), _fingerprint(request))
        metrics.ACTION_SECONDS.labels(actor.variant).observe(time.perf_counter() - start)
        if not queued:
            answer.act.CopyFrom(result)
    except (DealerError, ids.InvalidId) as exc:
        if queued:
            return
        refused(exc)
    if not queued:
        feed.answer(answer)


async def _feed_requests(
    actor: TableActor, feed: FeedWatcher, first: dealer_pb2.TableFeedRequest, rest: AsyncIterator[Any]
) -> None:
    """A feed's requests, in order: each join's snapshot is made inside the table's actor and queued
    at its place among the events; each action runs on its own (a join never waits for a hand's end).
    A bad request ends the feed with its status (``feed.error``)."""

    async def handle(request: dealer_pb2.TableFeedRequest) -> None:
        if request.table_id and request.table_id != actor.table_id:
            raise invalid(f"table_id: this feed follows {actor.table_id!r}, not {request.table_id!r}", field="table_id")
        if request.join_player_id:
            player = check_player(request.join_player_id, "join_player_id")

            async def join() -> None:
                if not actor.closed:
                    await actor.set_connected(player, True)  # a seated viewer's connection to the table
                state = actor.state(player)
                feed.join(
                    player,
                    dealer_pb2.TableEvent(
                        table_id=actor.table_id, sequence=actor.sequence, hand_number=state.hand_number, snapshot=state
                    ),
                )

            await actor.submit(join)
        if request.leave_player_id:
            feed.leave(check_player(request.leave_player_id, "leave_player_id"))
        if request.HasField("act"):
            act = request.act
            if not act.request_id:
                raise invalid("act.request_id: required on a table feed (its answer names it)", field="act.request_id")
            if act.table_id != actor.table_id:
                raise invalid(f"act.table_id: this feed follows {actor.table_id!r}", field="act.table_id")
            task = asyncio.create_task(_feed_act(actor, feed, act))
            feed.acting.add(task)
            task.add_done_callback(feed.acting.discard)

    try:
        await handle(first)
        async for request in rest:
            await handle(request)
    except (DealerError, ids.InvalidId) as exc:
        feed.error = as_service_error(exc)
        if not feed.ended:
            feed.end("refused")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the gateway went away mid-read: the stream's end cleans up
        log.debug("table feed read ended", extra={"table_id": actor.table_id, "error": str(exc)})


async def _ended(context: grpc.aio.ServicerContext, why: str) -> None:
    """A watch stream's status for why its watcher ended (a closed table's ends OK)."""
    if why == "slow":
        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "the stream fell too far behind the table; watch again")
    elif why == "moved":
        await context.abort(
            grpc.StatusCode.UNAVAILABLE, "the table moved to another dealer; look its owner up and watch again"
        )
    elif why == "stopping":
        await context.abort(grpc.StatusCode.UNAVAILABLE, "the dealer is restarting; watch again")


class DealerService(dealer_pb2_grpc.DealerServicer):
    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    async def _run(self, context: grpc.aio.ServicerContext, fn: Callable[[], Awaitable[T]]) -> T:
        return await answered(context, fn)

    @staticmethod
    def _key(request_id: str) -> str:
        return request_id or uuid.uuid4().hex

    @staticmethod
    def _scoped(request: Any) -> str:
        return _scoped(request)

    # ------------------------------------------------------------------ tables
    async def CreateTable(
        self, request: dealer_pb2.CreateTableRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.TableInfo:
        async def create() -> dealer_pb2.TableInfo:
            spec = build(request.config)
            table_id = request.table_id
            if not table_id:  # a retry (the same request id) names the same table
                table_id = ids.created_table_id(request.request_id or uuid.uuid4().hex)
            ids.verify_table_id(table_id)
            self.tables.deps.fences.verify_held(table_id)
            if ids.is_tournament_table_id(table_id):
                raise invalid(
                    f"table_id: {table_id!r}: ids starting {ids.TOURNAMENT_TABLE_PREFIX!r} are the tournaments' tables",
                    field="table_id",
                )
            existing = self.tables.lookup(table_id)
            if existing is not None:
                if existing.spec.config == spec.config and not existing.closed:
                    return existing.info()
                raise exists(
                    f"table {table_id!r} already exists"
                    + (" (closed)" if existing.closed else " with different settings")
                )
            await self.tables.deps.wallet.open_escrow(table_id, spec.currency)
            if table_id in self.tables.actors:  # created meanwhile by a concurrent retry
                return self.tables.actors[table_id].info()
            actor = TableActor(table_id, spec, self.tables.deps)
            self.tables.add(actor)
            await actor.submit(actor.write_snapshot)
            log.info("table created", extra={"table_id": table_id, "variant": spec.variant.code})
            return actor.info()

        return await self._run(context, create)

    async def CloseTable(
        self, request: dealer_pb2.CloseTableRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.CloseTableResponse:
        async def close() -> dealer_pb2.CloseTableResponse:
            actor = self.tables.get(request.table_id)
            waiter = await actor.submit(actor.close)
            cashed = await waiter
            return dealer_pb2.CloseTableResponse(cashed_out=cashed)

        return await self._run(context, close)

    async def ListTables(
        self, request: dealer_pb2.ListTablesRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.ListTablesResponse:
        reply = dealer_pb2.ListTablesResponse()
        for table_id in sorted(self.tables.actors):
            actor = self.tables.actors[table_id]
            if actor.closed or (request.variant and request.variant.upper() != actor.variant):
                continue
            reply.tables.append(actor.listing())
        return reply

    async def GetTable(
        self, request: dealer_pb2.GetTableRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.TableState:
        async def get() -> dealer_pb2.TableState:
            return self.tables.get(request.table_id).state(request.viewer_player_id)

        return await self._run(context, get)

    async def PlayerHands(
        self, request: dealer_pb2.PlayerHandsRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.PlayerHandsResponse:
        """The player's own recent hands, redacted for him when they were kept (see
        :mod:`dealer.player_hands`); the gateway passes the id of the caller's token."""

        async def run() -> dealer_pb2.PlayerHandsResponse:
            player = check_player(request.player_id)
            if request.limit < 0:
                raise invalid(f"limit: must be 0 (all kept) or positive, not {request.limit}", field="limit")
            return dealer_pb2.PlayerHandsResponse(hands=self.tables.deps.player_hands.recent(player, request.limit))

        return await self._run(context, run)

    # ------------------------------------------------------------------ seats
    async def SitDown(
        self, request: dealer_pb2.SitDownRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.SeatResponse:
        async def run() -> dealer_pb2.SeatResponse:
            actor = self.tables.get(request.table_id)
            key = f"dealer:buyin:{actor.table_id}:{self._key(self._scoped(request))}"
            return await actor.submit(
                lambda: actor.sit_down(request, key), self._scoped(request), _fingerprint(request)
            )

        return await self._run(context, run)

    async def AddChips(
        self, request: dealer_pb2.AddChipsRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.SeatResponse:
        async def run() -> dealer_pb2.SeatResponse:
            actor = self.tables.get(request.table_id)
            key = f"dealer:addchips:{actor.table_id}:{self._key(self._scoped(request))}"
            return await actor.submit(
                lambda: actor.add_chips(request, key), self._scoped(request), _fingerprint(request)
            )

        return await self._run(context, run)

    async def SitOut(
        self, request: dealer_pb2.SeatCommandRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.SeatResponse:
        async def run() -> dealer_pb2.SeatResponse:
            actor = self.tables.get(request.table_id)
            return await actor.submit(
                lambda: actor.sit_out(request), self._scoped(request), b"sitout" + _fingerprint(request)
            )

        return await self._run(context, run)

    async def ComeBack(
        self, request: dealer_pb2.SeatCommandRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.SeatResponse:
        async def run() -> dealer_pb2.SeatResponse:
            actor = self.tables.get(request.table_id)
            return await actor.submit(
                lambda: actor.come_back(request), self._scoped(request), b"comeback" + _fingerprint(request)
            )

        return await self._run(context, run)

    async def StandUp(
        self, request: dealer_pb2.SeatCommandRequest, context: grpc.aio.ServicerContext
    ) -> dealer_pb2.StandUpResponse:
        async def run() -> dealer_pb2.StandUpResponse:
            actor = self.tables.get(request.table_id)
            key = self._key(self._scoped(request))
            return await actor.submit(
                lambda: actor.stand_up(request, key), self._scoped(request), b"standup" + _fingerprint(request)
            )

        return await self._run(context, run)

    async def Act(self, request: dealer_pb2.ActRequest, context: grpc.aio.ServicerContext) -> dealer_pb2.ActResponse:
        async def run() -> dealer_pb2.ActResponse:
            return await _act(self.tables.get(request.table_id), request)

        return await self._run(context, run)

    # ------------------------------------------------------------------ stream
    async def Watch(
        self, request: dealer_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[dealer_pb2.TableEvent]:
        async for burst in self._bursts(request, context):
            for event in burst:
                yield event

    async def WatchBursts(
        self, request: dealer_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[dealer_pb2.TableEventBatch]:
        async for burst in self._bursts(request, context):
            yield dealer_pb2.TableEventBatch(events=burst)

    async def WatchTableFeed(
        self, requests: AsyncIterator[dealer_pb2.TableFeedRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[dealer_pb2.TableFeed]:
        """The gateway's one stream per table (see dealer.proto and :mod:`dealer.feed`)."""
        try:
            first = await anext(aiter(requests), None)
            if first is None or not first.table_id:
                raise invalid("table_id: required in the feed's first request", field="table_id")
            actor = self.tables.get(first.table_id)
            feed = await _feed_subscribed(actor)
        except (DealerError, ids.InvalidId) as exc:
            await abort_refused(context, exc)
            return
        metrics.FEEDS.inc()
        reader = asyncio.create_task(_feed_requests(actor, feed, first, requests))
        try:
            async for message in feed_messages(feed.queue, MAX_BURST):
                yield message
            if feed.error is not None:
                await abort(context, feed.error)
            await _ended(context, feed.ended)
        finally:
            reader.cancel()
            actor.unsubscribe(feed)
            metrics.FEEDS.dec()

    async def _bursts(
        self, request: dealer_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[list[dealer_pb2.TableEvent]]:
        """A watcher's events as they come: the snapshot, then each time the stream wakes, every
        event queued for it by then (the table emits a burst in one go, so that is the burst)."""
        try:
            actor = self.tables.get(request.table_id)
            if request.viewer_player_id:
                check_player(request.viewer_player_id, "viewer_player_id")
            watcher, snapshot = await _subscribed(actor, request.viewer_player_id)
        except (DealerError, ids.InvalidId) as exc:
            await abort_refused(context, exc)
            return
        metrics.WATCHERS.inc()
        try:
            yield [snapshot]
            queue = watcher.queue
            while True:
                event = await queue.get()
                burst: list[dealer_pb2.TableEvent] = []
                while event is not None:
                    burst.append(event)
                    if queue.empty() or len(burst) >= MAX_BURST:
                        break
                    event = queue.get_nowait()
                if burst:
                    yield burst
                if event is None:
                    break
            await _ended(context, watcher.ended)
        except asyncio.CancelledError:
            raise
        finally:
            actor.unsubscribe(watcher)
            metrics.WATCHERS.dec()
