"""One Play stream: the player's table events out (from the dealer's Watch, redacted for him),
actions in (to the dealer's Act), heartbeats to the connection monitor while it is open."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from cardroom.runtime import errors
from cardroom.v1 import connection_monitor_pb2 as cm, dealer_pb2 as d, gateway_pb2 as g
from gateway import metrics
from gateway.auth import other_player
from gateway.clients import STREAM_TIMEOUT, Backends
from gateway.tokens import Claims

log = logging.getLogger("gateway.play")

#: How long a broken Watch is retried (the dealer restarting) before the stream gives up.
WATCH_RETRY_SECONDS = 60.0
_END = object()
#: The reason a Play stream ends when the same player opens another one.
SESSION_TAKEN_OVER = "SESSION_TAKEN_OVER"


def error_event(request_id: str, error: errors.ServiceError) -> g.PlayEvent:
    return g.PlayEvent(
        error=g.PlayError(request_id=request_id, code=error.code.name, message=error.message, reason=error.reason)
    )


def backend_error(request_id: str, err: grpc.aio.AioRpcError, default: str = "") -> g.PlayEvent:
    """A dealer failure as a PlayError, its reason (e.g. OUT_OF_TURN) kept."""
    error = errors.error_from_call(err)
    if default and not err.details():
        error = errors.ServiceError(error.code, default, reason=error.reason)
    return error_event(request_id, error)


class PlaySession:
    """State of one open Play stream."""

    def __init__(
        self, backends: Backends, claims: Claims, session_id: str, allow: Callable[[], bool], heartbeat_seconds: float
    ) -> None:
        self.backends = backends
        self.claims = claims
        self.session_id = session_id
        self.allow = allow
        self.heartbeat_seconds = heartbeat_seconds
        self.table_id = ""
        self.out: asyncio.Queue[object] = asyncio.Queue(maxsize=2000)
        self.tasks: list[asyncio.Task] = []

    async def run(self, requests: AsyncIterator[g.PlayRequest]) -> AsyncIterator[g.PlayEvent]:
        metrics.PLAY_STREAMS.inc()
        self.tasks.append(asyncio.create_task(self._read(requests)))
        if self.backends.monitor is not None:
            self.tasks.append(asyncio.create_task(self._heartbeats()))
        try:
            while True:
                item = await self.out.get()
                if item is _END:
                    return
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, g.PlayEvent)
                yield item
        finally:
            metrics.PLAY_STREAMS.dec()
            for task in self.tasks:
                task.cancel()
            for task in self.tasks:
                with contextlib.suppress(BaseException):
                    await task

    def take_over(self) -> None:
        """Another Play stream of the same player opened: this one is told why and ends (one
        session per player — never two getting the turn)."""
        while not self.out.empty():
            self.out.get_nowait()
        self.out.put_nowait(
            error_event(
                "",
                errors.ServiceError(
                    grpc.StatusCode.ABORTED,
                    "you opened the game in another session; this one is closed",
                    reason=SESSION_TAKEN_OVER,
                ),
            )
        )
        self.out.put_nowait(_END)

    # ---------------------------------------------------------------- incoming

    async def _read(self, requests: AsyncIterator[g.PlayRequest]) -> None:
        try:
            async for request in requests:
                await self._handle(request)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the client went away mid-read
            log.debug("play stream read ended", extra={"error": str(exc)})
        await self.out.put(_END)

    async def _handle(self, request: g.PlayRequest) -> None:
        rid = request.request_id
        if not self.allow():
            metrics.RATE_LIMITED.inc()
            await self.out.put(error_event(rid, errors.exhausted("rate limit: slow down", reason=errors.RATE_LIMITED)))
            return
        kind = request.WhichOneof("kind")
        if kind == "ping":
            stamp = Timestamp()
            stamp.GetCurrentTime()
            await self.out.put(g.PlayEvent(pong=g.Pong(server_time=stamp)))
        elif kind == "open":
            await self._open(rid, request.open.table_id)
        elif kind == "act":
            await self._act(rid, request.act)
        elif kind == "seat":
            await self._seat(rid, request.seat)
        else:
            await self.out.put(
                error_event(
                    rid, errors.invalid("empty Play message: set open, act, seat or ping", reason="EMPTY_MESSAGE")
                )
            )

    async def _open(self, rid: str, table_id: str) -> None:
        if not table_id:
            await self.out.put(error_event(rid, errors.invalid("open.table_id: required")))
        elif self.table_id:
            await self.out.put(
                error_event(
                    rid,
                    errors.precondition(
                        f"this stream already follows table {self.table_id!r}; open another stream",
                        reason="TABLE_ALREADY_OPEN",
                    ),
                )
            )
        else:
            self.table_id = table_id
            self.tasks.append(asyncio.create_task(self._watch(rid)))

    async def _needs_table(self, rid: str) -> bool:
        if not self.table_id:
            await self.out.put(error_event(rid, errors.precondition("open a table first", reason="NO_TABLE_OPEN")))
            return False
        return True

    async def _act(self, rid: str, act: g.PlayAction) -> None:
        denied = other_player(self.claims, act.player_id)
        if denied is not None:
            await self.out.put(error_event(rid, denied))
            return
        if not await self._needs_table(rid):
            return
        start = time.perf_counter()
        try:
            reply = await self.backends.dealer.Act(
                d.ActRequest(
                    table_id=self.table_id,
                    player_id=self.claims.player_id,
                    action=act.action,
                    amount=act.amount,
                    discards=act.discards,
                    hand_number=act.hand_number,
                    request_id=rid or uuid.uuid4().hex,
                )
            )
        except grpc.aio.AioRpcError as err:
            metrics.PLAY_ACTIONS.labels(err.code().name).inc()
            await self.out.put(backend_error(rid, err))
            return
        finally:
            metrics.ACT_SECONDS.observe(time.perf_counter() - start)
        metrics.PLAY_ACTIONS.labels("OK").inc()
        await self.out.put(g.PlayEvent(result=g.PlayResult(request_id=rid, act=reply)))

    async def _seat(self, rid: str, command: g.SeatCommand) -> None:
        if not await self._needs_table(rid):
            return
        request_id = rid or uuid.uuid4().hex
        dealer = self.backends.dealer
        try:
            if command.kind == g.SeatCommand.KIND_ADD_CHIPS:
                added = await dealer.AddChips(
                    d.AddChipsRequest(
                        table_id=self.table_id,
                        player_id=self.claims.player_id,
                        amount=command.amount,
                        request_id=request_id,
                    )
                )
                await self.out.put(g.PlayEvent(result=g.PlayResult(request_id=rid, queued=added.queued)))
                return
            elif command.kind == g.SeatCommand.KIND_POST_NOW:
                await dealer.ComeBack(
                    d.SeatCommandRequest(
                        table_id=self.table_id, player_id=self.claims.player_id, request_id=request_id, post_now=True
                    )
                )
            elif command.kind in (g.SeatCommand.KIND_SIT_OUT, g.SeatCommand.KIND_COME_BACK):
                call = dealer.SitOut if command.kind == g.SeatCommand.KIND_SIT_OUT else dealer.ComeBack
                await call(
                    d.SeatCommandRequest(table_id=self.table_id, player_id=self.claims.player_id, request_id=request_id)
                )
            else:
                await self.out.put(
                    error_event(rid, errors.invalid("seat.kind: SIT_OUT, COME_BACK, ADD_CHIPS or POST_NOW"))
                )
                return
        except grpc.aio.AioRpcError as err:
            await self.out.put(backend_error(rid, err))
            return
        await self.out.put(g.PlayEvent(result=g.PlayResult(request_id=rid)))

    # ---------------------------------------------------------------- outgoing

    async def _watch(self, rid: str) -> None:
        """Follow the table; re-open the Watch while the dealer restarts."""
        failing_since: float | None = None
        delay = 0.1
        while True:
            try:
                stream = self.backends.dealer.Watch(
                    d.WatchRequest(table_id=self.table_id, viewer_player_id=self.claims.player_id),
                    timeout=STREAM_TIMEOUT,
                )
                async for event in stream:
                    failing_since, delay = None, 0.1
                    metrics.PLAY_EVENTS.inc()
                    await self.out.put(g.PlayEvent(table=event))
                    if event.WhichOneof("event") == "table_closed":
                        break
                await self.out.put(_END)
                return
            except grpc.aio.AioRpcError as err:
                retry = err.code() in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    grpc.StatusCode.INTERNAL,
                    grpc.StatusCode.UNKNOWN,
                    grpc.StatusCode.CANCELLED,
                )
                log.warning(
                    "dealer watch failed",
                    extra={
                        "player_id": self.claims.player_id,
                        "table_id": self.table_id,
                        "code": err.code().name,
                        "retry": retry,
                    },
                )
                now = time.monotonic()
                failing_since = failing_since if failing_since is not None else now
                if not retry or now - failing_since > WATCH_RETRY_SECONDS:
                    await self.out.put(backend_error(rid, err, "watch failed"))
                    self.table_id = ""
                    return
            metrics.WATCH_RESTARTS.inc()
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)

    async def _heartbeats(self) -> None:
        """Beat every ``heartbeat_seconds`` while the stream is open (re-opening on failure)."""
        assert self.backends.monitor is not None

        async def beats() -> AsyncIterator[cm.Heartbeat]:
            while True:
                yield cm.Heartbeat(player_id=self.claims.player_id, session_id=self.session_id)
                await asyncio.sleep(self.heartbeat_seconds)

        while True:
            try:
                await self.backends.monitor.Heartbeats(beats())
            except grpc.aio.AioRpcError as err:
                log.warning(
                    "heartbeat stream failed", extra={"player_id": self.claims.player_id, "code": err.code().name}
                )
            await asyncio.sleep(self.heartbeat_seconds)
