"""One dealer feed per table for all of this gateway's sessions at it (``Dealer.WatchTableFeed``;
docs/capacity.md, "One feed per table").

Each session (:class:`~gateway.play.PlaySession`) follows its table with :meth:`TableFeeds.follow`:
the first session at a table opens the table's feed on its dealer, the others join it, the last one
leaving closes it. A session's viewer joins the feed and gets his snapshot at its place in the stream;
from the next message on he gets each burst's events, the full ones in place of the redacted for him.
Each distinct view of a burst is built once and handed to every session that sees it (the sessions of
players who see nothing more than an observer share one).

A feed that breaks is opened again like a Watch (a dealer restarting, the table moved to another
replica: :meth:`~gateway.dealers.DealerRouter.moved`) and every session gets a new snapshot. A feed
opens with its first session's join and sends the others once the dealer answered it (:func:`_sent`),
so a dealer refusing it is heard with its own status. What a
session's follow ends with (:class:`Ending`) tells it what to do: end with the table, report the
failure, or watch alone as before the feed (a dealer without the feed, during a rolling upgrade; or
a feed that ended before the session's snapshot, e.g. a table closed meanwhile).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import grpc

from cardroom.runtime.lost_status import lost_in_a_write
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g
from gateway import metrics, streams
from gateway.dealers import DealerRouter

log = logging.getLogger("gateway.feeds")


class Ending(enum.Enum):
    """How a session's follow of a table ended."""

    ENDED = "ended"
    """The table closed (its TableClosed delivered) or its stream ended: the session ends."""
    ALONE = "alone"
    """The feed cannot serve this session: it watches the table on its own."""
    SLOW = "slow"
    """The session's queue was full: it was left out of the feed."""
    FAILED = "failed"
    """The dealer's stream failed for good (``Follow.error``)."""


#: The answers to actions a feed message carries, by (player, request id).
Answers = Mapping[tuple[str, str], d.FeedResult]
NO_ANSWERS: Answers = MappingProxyType({})


class View:
    """One burst's events as some viewers see them, and their Play messages, each made once; with the
    answers to the actions sent on the feed that the same dealer message brought (by player and request
    id), for a session that takes its answer in the burst (``OpenTable.results_in_bursts``)."""

    __slots__ = ("events", "answers", "_burst", "_singles")

    def __init__(self, events: Sequence[d.TableEvent], answers: Answers | None = None) -> None:
        self.events = events
        self.answers: Answers = answers if answers is not None else NO_ANSWERS
        self._burst: g.PlayEvent | None = None
        self._singles: list[g.PlayEvent] | None = None

    def burst(self) -> g.PlayEvent:
        """One Play message with all of them (``OpenTable.bursts``)."""
        if self._burst is None:
            self._burst = g.PlayEvent(table_burst=d.TableEventBatch(events=self.events))
        return self._burst

    def singles(self) -> list[g.PlayEvent]:
        """One Play message each."""
        if self._singles is None:
            self._singles = [g.PlayEvent(table=event) for event in self.events]
        return self._singles


@dataclass(eq=False)
class Follower:
    """One session following a table: ``deliver`` takes a :class:`View` (False: no room, the session
    is too slow); ``done`` is set once, with how it ended."""

    player: str
    deliver: Callable[[View], bool]
    done: asyncio.Future[tuple[Ending, grpc.aio.AioRpcError | None]]
    live: bool = False
    """It had its snapshot on the current stream: the bursts after it are its."""
    stream: int = -1
    """The stream (:attr:`TableFeed.streams`) it joined on; -1: none yet."""

    def finish(self, ending: Ending, error: grpc.aio.AioRpcError | None = None) -> None:
        if not self.done.done():
            self.done.set_result((ending, error))


@dataclass(eq=False)
class TableFeed:
    """The feed of one table: its followers and the task that keeps its dealer stream open."""

    table_id: str
    dealers: DealerRouter
    gone: Callable[[TableFeed], None]
    followers: list[Follower] = field(default_factory=list)
    streams: int = 0
    """How many dealer streams it opened (the current one's number)."""
    requests: asyncio.Queue[d.TableFeedRequest] | None = None
    """The current stream's requests; None between streams."""
    task: asyncio.Task[None] | None = None
    acts: dict[str, tuple[str, asyncio.Future[d.FeedResult | None]]] = field(default_factory=dict)
    """The actions sent on the current stream, by request id, until answered: their player and answer."""

    def add(self, follower: Follower) -> None:
        self.followers.append(follower)
        if self.task is None:
            self.task = asyncio.create_task(self._run())
        elif self.requests is not None:
            self._join(follower)

    def remove(self, follower: Follower) -> None:
        if follower not in self.followers:
            return
        self.followers.remove(follower)
        if follower.stream == self.streams and self.requests is not None:
            self.requests.put_nowait(d.TableFeedRequest(leave_player_id=follower.player))
        if not self.followers:
            self.close()

    def close(self) -> None:
        self.gone(self)
        if self.task is not None and self.task is not asyncio.current_task():
            self.task.cancel()

    def act(self, player: str, request: d.ActRequest) -> asyncio.Future[d.FeedResult | None] | None:
        """Send ``request`` on the current stream if a session of ``player`` follows the table on it:
        the future gets the dealer's answer, or None if the stream ended first (the caller asks again
        with the unary Act and the same request id: the dealer answers a repeat with the first result).
        None: the feed cannot carry it now."""
        if self.requests is None or not request.request_id or request.request_id in self.acts:
            return None
        if not any(f.live and f.player == player and f.stream == self.streams for f in self.followers):
            return None
        answer: asyncio.Future[d.FeedResult | None] = asyncio.get_running_loop().create_future()
        self.acts[request.request_id] = (player, answer)
        self.requests.put_nowait(d.TableFeedRequest(act=request))
        return answer

    def _unanswered(self) -> None:
        """The stream ended: its actions not answered are asked again by their callers."""
        acts, self.acts = self.acts, {}
        for _, answer in acts.values():
            if not answer.done():
                answer.set_result(None)

    def _join(self, follower: Follower) -> None:
        assert self.requests is not None
        follower.live, follower.stream = False, self.streams
        self.requests.put_nowait(d.TableFeedRequest(join_player_id=follower.player))

    async def _run(self) -> None:
        failing_since: float | None = None
        delay = 0.1
        lost = False  # the last stream's status was lost in a write
        try:
            while self.followers:
                route = self.dealers.route(self.table_id)
                self.streams += 1
                self.requests = asyncio.Queue()
                for follower in self.followers:
                    self._join(follower)
                opening = self.requests.get_nowait()  # the first follower's join opens the feed
                opening.table_id = self.table_id
                answered = asyncio.Event()
                stream = None
                try:
                    sent = _sent(opening, answered, self.requests)
                    stream = route.stub.WatchTableFeed(sent, timeout=streams.STREAM_TIMEOUT)
                    async for message in stream:
                        answered.set()
                        failing_since, delay, lost = None, 0.1, False
                        if self._dispatch(message):
                            self._finish(Ending.ENDED)
                            return
                        if not self.followers:  # the last one was left out as too slow
                            return
                    self.requests = None  # the stream is over: what comes meanwhile waits for the next
                    if await self.dealers.moved(self.table_id, route, None) is not None:
                        metrics.WATCH_RESTARTS.inc()  # the old owner ended the stream: follow the table
                        continue
                    self._finish(Ending.ENDED)
                    return
                except grpc.aio.AioRpcError as err:
                    self.requests = None
                    if err.code() == grpc.StatusCode.UNIMPLEMENTED:
                        self._finish(Ending.ALONE)  # a dealer of the version before the feed
                        return
                    if await self.dealers.moved(self.table_id, route, err.code()) is not None:
                        metrics.WATCH_RESTARTS.inc()
                        failing_since, delay = None, 0.1
                        continue
                    if lost_in_a_write(err) and not lost:
                        lost = True  # ask again at once for the status a request in flight hid
                        log.info("dealer table feed ended as a request was sent", extra={"table_id": self.table_id})
                        metrics.WATCH_RESTARTS.inc()
                        continue
                    retry = err.code() in streams.RETRIED or err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    log.warning(
                        "dealer table feed failed",
                        extra={"table_id": self.table_id, "code": err.code().name, "retry": retry},
                    )
                    now = time.monotonic()
                    failing_since = failing_since if failing_since is not None else now
                    if not retry or now - failing_since > streams.WATCH_RETRY_SECONDS:
                        for follower in list(self.followers):
                            follower.finish(Ending.FAILED, err)
                        return
                finally:
                    if isinstance(stream, grpc.aio.Call):  # ended here (the table closed, no one left)
                        stream.cancel()
                    self._unanswered()
                self.requests = None
                metrics.WATCH_RESTARTS.inc()
                await asyncio.sleep(delay)
                delay = min(2.0, delay * 2)
        finally:
            self.requests = None
            self._unanswered()
            if self.task is asyncio.current_task():
                self.task = None
                if self.followers:  # ended for them all; a follower added since starts a new feed
                    self.gone(self)

    def _finish(self, ending: Ending) -> None:
        """The stream ended: a follower that had its snapshot ends with ``ending``; one still waiting
        for it watches alone (its Watch starts with a snapshot, e.g. the closed table's)."""
        for follower in list(self.followers):
            follower.finish(ending if follower.live or ending is not Ending.ENDED else Ending.ALONE)

    def _dispatch(self, message: d.TableFeed) -> bool:
        """One feed message to the followers (True: it ended with the table's TableClosed)."""
        events = message.events
        if events:
            answers: Answers = NO_ANSWERS
            if message.results:
                answers = {
                    (entry[0], result.request_id): result
                    for result in message.results
                    if (entry := self.acts.get(result.request_id)) is not None
                }
            public: View | None = None
            private: dict[str, View] = {}
            if message.private:
                mine: dict[str, dict[int, d.TableEvent]] = {}
                for item in message.private:
                    mine.setdefault(item.player_id, {})[item.index] = item.event
                for player, full in mine.items():
                    private[player] = View([full.get(i, event) for i, event in enumerate(events)], answers)
            for follower in list(self.followers):
                if not follower.live:
                    continue
                view = private.get(follower.player)
                if view is None:
                    public = public or View(list(events), answers)
                    view = public
                if not follower.deliver(view):
                    self._drop(follower)
        for snapshot in message.snapshots:
            player = snapshot.player_id
            waiting = next(
                (f for f in self.followers if not f.live and f.stream == self.streams and f.player == player), None
            )
            if waiting is None:
                continue
            waiting.live = True
            if not waiting.deliver(View([snapshot.snapshot])):
                self._drop(waiting)
        for result in message.results:  # after the events they brought, which the sessions have
            entry = self.acts.pop(result.request_id, None)
            if entry is not None and not entry[1].done():
                entry[1].set_result(result)
        return bool(events) and events[-1].WhichOneof("event") == "table_closed"

    def _drop(self, follower: Follower) -> None:
        log.warning("slow session left out of a table feed", extra={"table_id": self.table_id})
        self.remove(follower)
        follower.finish(Ending.SLOW)


async def _sent(
    opening: d.TableFeedRequest, answered: asyncio.Event, requests: asyncio.Queue[d.TableFeedRequest]
) -> AsyncIterator[d.TableFeedRequest]:
    """A feed's requests: its opening alone until the dealer's first message (the opening join's
    snapshot), then the rest in order. A dealer that refuses the feed (the table dealt elsewhere, a
    dealer without the feed) then ends it with at most the opening in flight, and its status reaches
    the gateway: grpc.aio replaces a stream's status with its own INTERNAL when a request is being
    written as the stream ends (:mod:`cardroom.runtime.lost_status`)."""
    yield opening
    await answered.wait()
    while True:
        yield await requests.get()


class TableFeeds:
    """This gateway's table feeds, one per table it has sessions at."""

    def __init__(self, dealers: DealerRouter) -> None:
        self.dealers = dealers
        self.feeds: dict[str, TableFeed] = {}

    async def follow(
        self, table_id: str, player: str, deliver: Callable[[View], bool]
    ) -> tuple[Ending, grpc.aio.AioRpcError | None]:
        """Follow ``table_id`` as ``player`` sees it until it ends (see :class:`Ending`); the events go
        to ``deliver``, the snapshot first. Cancelling leaves the feed (the last one out closes it)."""
        follower = Follower(player, deliver, asyncio.get_running_loop().create_future())
        feed = self.feeds.get(table_id)
        if feed is None:
            feed = self.feeds[table_id] = TableFeed(table_id, self.dealers, self._gone)
            metrics.TABLE_FEEDS.inc()
        feed.add(follower)
        try:
            return await follower.done
        finally:
            feed.remove(follower)

    def act(self, table_id: str, player: str, request: d.ActRequest) -> asyncio.Future[d.FeedResult | None] | None:
        """``request`` sent on ``table_id``'s feed (see :meth:`TableFeed.act`); None: no feed carries it."""
        feed = self.feeds.get(table_id)
        return feed.act(player, request) if feed is not None else None

    def _gone(self, feed: TableFeed) -> None:
        if self.feeds.get(feed.table_id) is feed:
            del self.feeds[feed.table_id]
            metrics.TABLE_FEEDS.dec()

    async def close(self) -> None:
        for feed in list(self.feeds.values()):
            feed.close()
