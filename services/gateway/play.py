"""One player's session at one table: the table's events out (from the dealer's Watch, redacted for
him), his requests in (to the dealer's Act and seat commands), the player listed in the gateway's
:class:`~gateway.presence.Presence` (its one heartbeat stream to the connection monitor) while it is
open. Two fronts over the one session: the bidi Play stream (:meth:`PlaySession.run`), and for
gRPC-Web clients the WatchMyTable server stream (:meth:`PlaySession.watch`) with one unary
TableCommand per request (:meth:`PlaySession.command`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import status_pb2

from cardroom.runtime import errors
from cardroom.runtime.deadlines import DEFAULT_TIMEOUT
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g
from gateway import metrics, streams
from gateway.auth import other_player
from gateway.clients import Backends
from gateway.feeds import Ending, View
from gateway.presence import Presence
from gateway.ratelimit import Refusal
from gateway.tokens import Claims

log = logging.getLogger("gateway.play")

_END = object()
#: The reason a Play stream ends when the same player opens another one.
SESSION_TAKEN_OVER = "SESSION_TAKEN_OVER"


def error_event(request_id: str, error: errors.ServiceError) -> g.PlayEvent:
    return g.PlayEvent(
        error=g.PlayError(request_id=request_id, code=error.code.name, message=error.message, reason=error.reason)
    )


def backend_failure(err: grpc.aio.AioRpcError, default: str = "") -> errors.ServiceError:
    """A dealer failure as our own error, its reason (e.g. OUT_OF_TURN) kept; ``default`` is the
    message when the dealer gave none."""
    error = errors.error_from_call(err)
    if default and not err.details():
        error = errors.ServiceError(error.code, default, reason=error.reason)
    return error


class PlaySession:
    """State of one open session (a Play stream, or a WatchMyTable stream with its TableCommands)."""

    def __init__(
        self,
        backends: Backends,
        claims: Claims,
        session_id: str,
        limit: Callable[[], Refusal | None],
        presence: Presence,
    ) -> None:
        self.backends = backends
        self.claims = claims
        self.session_id = session_id
        """The connection monitor's session id (it holds the peer address: never sent to clients)."""
        self.public_id = uuid.uuid4().hex
        """The id a WatchMyTable client names its session by in TableCommand."""
        self.limit = limit
        """Takes a token from each of the message's buckets; the refusal when one is empty."""
        self.presence = presence
        """Where the session lists its player while open (the gateway's one heartbeat stream)."""
        self.table_id = ""
        self.bursts = False
        """The client asked for the table's events as bursts (``OpenTable.bursts``, Play only)."""
        self.results_in_bursts = False
        """With bursts, the answer to an action comes in the burst of its events
        (``OpenTable.results_in_bursts``): one message fewer per action (docs/capacity.md)."""
        self._acting: tuple[str, str] | None = None
        """The action on the table's feed awaiting its answer: the dealer's request id and the client's."""
        self._folded = ""
        """The dealer's request id of the action whose answer went in its burst."""
        self.one_table = False
        """A WatchMyTable session: it follows one table and takes unary TableCommands; a Watch it
        cannot keep ends it with the dealer's status (a Play stream reports it and stays open)."""
        self.out: asyncio.Queue[object] = asyncio.Queue(maxsize=2000)
        self.tasks: list[asyncio.Task] = []
        self.closed = False
        """Ended: no table is opened any more (a command still running finishes without one)."""
        self._commands = asyncio.Lock()

    # ---------------------------------------------------------------- the fronts

    async def run(self, requests: AsyncIterator[g.PlayRequest]) -> AsyncIterator[g.PlayEvent]:
        """The bidi Play stream: ``requests`` in (answered on the stream), events out."""
        self.tasks.append(asyncio.create_task(self._read(requests)))
        async for event in self._events():
            yield event

    async def watch(self, table_id: str) -> AsyncIterator[g.PlayEvent]:
        """The WatchMyTable server stream: :class:`SessionOpened`, then ``table_id``'s events; the
        requests come by :meth:`command`."""
        self.one_table = True
        self.table_id = table_id
        self.out.put_nowait(g.PlayEvent(session=g.SessionOpened(session_id=self.public_id, table_id=table_id)))
        self.tasks.append(asyncio.create_task(self._watch("")))
        async for event in self._events():
            yield event

    async def command(self, request: g.PlayRequest) -> g.PlayEvent | None:
        """Carry out one request (both fronts): its answer (a result or a pong; None for ``open``,
        whose answer is the table's events, and for an ``act`` whose answer went in the burst of its
        events, ``OpenTable.results_in_bursts``), or a :class:`errors.ServiceError` raised with nothing
        changed. One request at a time per session; a request begun is carried out to its end even
        when the caller stops waiting (a cancelled call, a closed stream), so the dealer never sees
        half of one."""
        return await asyncio.shield(self._one_at_a_time(request))

    def take_over(self) -> None:
        """Another session of the same player opened: this one is told why and ends (one
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

    # ---------------------------------------------------------------- the session's life

    async def _events(self) -> AsyncIterator[g.PlayEvent]:
        """The events for the client while the session is open, its player listed meanwhile."""
        metrics.PLAY_STREAMS.inc()
        self.presence.enter(self.claims.player_id, self.session_id)
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
            self.closed = True
            metrics.PLAY_STREAMS.dec()
            self.presence.leave(self.claims.player_id, self.session_id)
            for task in self.tasks:
                task.cancel()
            for task in self.tasks:
                with contextlib.suppress(BaseException):
                    await task

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
        """One Play message: over the rate it gets a PlayError (the stream stays open)."""
        rid = request.request_id
        refusal = self.limit()
        if refusal is not None:  # which limit, and its rate, as a unary call is told
            metrics.RATE_LIMITED.inc()
            await self.out.put(error_event(rid, errors.exhausted(refusal.message, reason=refusal.reason)))
            return
        try:
            event = await self.command(request)
        except errors.ServiceError as error:
            event = error_event(rid, error)
        if event is not None:
            await self.out.put(event)

    async def _one_at_a_time(self, request: g.PlayRequest) -> g.PlayEvent | None:
        async with self._commands:
            return await self._answer(request)

    async def _answer(self, request: g.PlayRequest) -> g.PlayEvent | None:
        rid = request.request_id
        kind = request.WhichOneof("kind")
        if kind == "ping":
            stamp = Timestamp()
            stamp.GetCurrentTime()
            return g.PlayEvent(pong=g.Pong(server_time=stamp))
        if kind == "open":
            self._open(rid, request.open.table_id, request.open.bursts, request.open.results_in_bursts)
            return None
        if kind == "act":
            return await self._act(rid, request.act)
        if kind == "seat":
            return await self._seat(rid, request.seat)
        raise errors.invalid("empty Play message: set open, act, seat or ping", reason="EMPTY_MESSAGE")

    def _open(self, rid: str, table_id: str, bursts: bool = False, results_in_bursts: bool = False) -> None:
        if self.closed:
            raise errors.precondition("this stream is closed", reason="STREAM_CLOSED")
        if not table_id:
            raise errors.invalid("open.table_id: required")
        if self.table_id:
            raise errors.precondition(
                f"this stream already follows table {self.table_id!r}; open another stream", reason="TABLE_ALREADY_OPEN"
            )
        self.table_id = table_id
        self.bursts = bursts
        self.results_in_bursts = bursts and results_in_bursts
        self.tasks.append(asyncio.create_task(self._watch(rid)))

    def _needs_table(self) -> None:
        if not self.table_id:
            raise errors.precondition("open a table first", reason="NO_TABLE_OPEN")

    async def _act(self, rid: str, act: g.PlayAction) -> g.PlayEvent | None:
        denied = other_player(self.claims, act.player_id)
        if denied is not None:
            raise denied
        self._needs_table()
        start = time.perf_counter()
        request = d.ActRequest(
            table_id=self.table_id,
            player_id=self.claims.player_id,
            action=act.action,
            amount=act.amount,
            discards=act.discards,
            hand_number=act.hand_number,
            request_id=rid or uuid.uuid4().hex,
        )
        try:
            reply = await self._act_on_feed(request, rid)
            if reply is None:  # no feed carries it (or it ended first): the unary Act, the same request id
                reply = await self.backends.dealers.call(request.table_id, lambda dealer: dealer.Act(request))
        except grpc.aio.AioRpcError as err:
            metrics.PLAY_ACTIONS.labels(err.code().name).inc()
            raise backend_failure(err) from None
        except errors.ServiceError as error:
            metrics.PLAY_ACTIONS.labels(error.code.name).inc()
            raise
        finally:
            metrics.ACT_SECONDS.observe(time.perf_counter() - start)
            self._acting = None
        metrics.PLAY_ACTIONS.labels("OK").inc()
        if self._folded == request.request_id:
            self._folded = ""
            return None  # the client has it, in the burst of its events
        return g.PlayEvent(result=g.PlayResult(request_id=rid, act=reply))

    async def _act_on_feed(self, request: d.ActRequest, rid: str) -> d.ActResponse | None:
        """The action sent on the table's feed (no unary call): the dealer's answer, its refusal raised
        as the ServiceError the unary Act would give; None when the feed cannot carry it or did not
        answer (a stream that ended, or no answer within the unary call's deadline). ``rid``: the
        client's request id, for an answer that goes in the burst of its events."""
        feeds = self.backends.feeds
        answer = feeds.act(request.table_id, self.claims.player_id, request) if feeds is not None else None
        if answer is None:
            return None
        self._acting, self._folded = (request.request_id, rid), ""
        try:
            async with asyncio.timeout(DEFAULT_TIMEOUT):
                result = await asyncio.shield(answer)
        except TimeoutError:
            return None
        if result is None:
            return None
        if result.refused:
            raise errors.error_from_status(status_pb2.Status.FromString(result.refused))
        return result.act if result.HasField("act") else None

    async def _seat(self, rid: str, command: g.SeatCommand) -> g.PlayEvent:
        self._needs_table()
        kinds = (
            g.SeatCommand.KIND_ADD_CHIPS,
            g.SeatCommand.KIND_POST_NOW,
            g.SeatCommand.KIND_SIT_OUT,
            g.SeatCommand.KIND_COME_BACK,
        )
        if command.kind not in kinds:
            raise errors.invalid("seat.kind: SIT_OUT, COME_BACK, ADD_CHIPS or POST_NOW")
        seat = d.SeatCommandRequest(
            table_id=self.table_id, player_id=self.claims.player_id, request_id=rid or uuid.uuid4().hex
        )
        dealers = self.backends.dealers
        try:
            if command.kind == g.SeatCommand.KIND_ADD_CHIPS:
                add = d.AddChipsRequest(
                    table_id=seat.table_id, player_id=seat.player_id, amount=command.amount, request_id=seat.request_id
                )
                added = await dealers.call(add.table_id, lambda dealer: dealer.AddChips(add))
                return g.PlayEvent(result=g.PlayResult(request_id=rid, queued=added.queued))
            if command.kind == g.SeatCommand.KIND_POST_NOW:
                seat.post_now = True
                await dealers.call(seat.table_id, lambda dealer: dealer.ComeBack(seat))
            elif command.kind == g.SeatCommand.KIND_SIT_OUT:
                await dealers.call(seat.table_id, lambda dealer: dealer.SitOut(seat))
            else:
                await dealers.call(seat.table_id, lambda dealer: dealer.ComeBack(seat))
        except grpc.aio.AioRpcError as err:
            raise backend_failure(err) from None
        return g.PlayEvent(result=g.PlayResult(request_id=rid))

    # ---------------------------------------------------------------- outgoing

    async def _watch(self, rid: str) -> None:
        """Follow the table: through its feed on this gateway (:mod:`gateway.feeds`), or with a Watch
        of its own when the feed cannot serve it."""
        feeds = self.backends.feeds
        if feeds is not None:
            ending, error = await feeds.follow(self.table_id, self.claims.player_id, self._deliver)
            if ending is Ending.ENDED:
                await self.out.put(_END)
                return
            if ending is Ending.SLOW:
                await self._failed(
                    rid, errors.exhausted("the stream fell too far behind the table; open it again", reason="TOO_SLOW")
                )
                return
            if ending is Ending.FAILED:
                assert error is not None
                await self._failed(rid, backend_failure(error, "watch failed"))
                return
        await self._watch_alone(rid)

    def _deliver(self, view: View) -> bool:
        """A burst from the table's feed into the session's queue (False: no room for it); with the
        answer to the session's action when the same dealer message brought it and the client takes
        answers in bursts."""
        folded = ""
        if not self.bursts:
            items = view.singles()
        elif self.results_in_bursts and self._acting is not None and view.answers:
            burst = view.burst()
            dealer_id, rid = self._acting
            answer = view.answers.get((self.claims.player_id, dealer_id))
            if answer is not None and not answer.refused and answer.HasField("act"):
                result = g.PlayResult(request_id=rid, act=answer.act)
                burst = g.PlayEvent(table_burst=burst.table_burst, burst_result=result)
                folded = dealer_id
            items = [burst]
        else:
            items = [view.burst()]
        if self.out.maxsize and self.out.maxsize - self.out.qsize() < len(items):
            return False
        for item in items:
            self.out.put_nowait(item)
        if folded:
            self._folded = folded
        metrics.PLAY_EVENTS.inc(len(view.events))
        return True

    async def _failed(self, rid: str, failure: errors.ServiceError) -> None:
        """The table cannot be followed any more: a WatchMyTable stream ends with ``failure``; a Play
        stream says so and stays open (another table may be opened on it)."""
        await self.out.put(failure if self.one_table else error_event(rid, failure))
        self.table_id = ""

    async def _watch_alone(self, rid: str) -> None:
        """Follow the table with a Watch of this session's own; re-open it while the dealer restarts,
        and at once on the table's new owner when the dealer directory shows it moved (the client sees
        the new Watch's snapshot)."""
        failing_since: float | None = None
        delay = 0.1
        dealers = self.backends.dealers
        bursts = True  # WatchBursts; Watch for a dealer of the version before it (a rolling upgrade)
        while True:
            route = dealers.route(self.table_id)
            request = d.WatchRequest(table_id=self.table_id, viewer_player_id=self.claims.player_id)
            try:
                if bursts:
                    stream = route.stub.WatchBursts(request, timeout=streams.STREAM_TIMEOUT)
                else:
                    stream = route.stub.Watch(request, timeout=streams.STREAM_TIMEOUT)
                async for message in stream:
                    failing_since, delay = None, 0.1
                    events = message.events if bursts else (message,)
                    metrics.PLAY_EVENTS.inc(len(events))
                    if self.bursts:
                        await self.out.put(g.PlayEvent(table_burst=d.TableEventBatch(events=events)))
                    else:
                        for event in events:
                            await self.out.put(g.PlayEvent(table=event))
                    if events and events[-1].WhichOneof("event") == "table_closed":
                        await self.out.put(_END)
                        return
                if await dealers.moved(self.table_id, route, None) is not None:
                    metrics.WATCH_RESTARTS.inc()  # the old owner ended the stream: follow the table
                    continue
                await self.out.put(_END)
                return
            except grpc.aio.AioRpcError as err:
                if bursts and err.code() == grpc.StatusCode.UNIMPLEMENTED:
                    bursts = False
                    continue
                if await dealers.moved(self.table_id, route, err.code()) is not None:
                    metrics.WATCH_RESTARTS.inc()
                    failing_since, delay = None, 0.1
                    continue
                retry = err.code() in streams.RETRIED
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
                if not retry or now - failing_since > streams.WATCH_RETRY_SECONDS:
                    await self._failed(rid, backend_failure(err, "watch failed"))
                    return
            metrics.WATCH_RESTARTS.inc()
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)
