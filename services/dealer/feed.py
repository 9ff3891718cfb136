"""A gateway's feed of one table (``Dealer.WatchTableFeed``; docs/capacity.md, "One feed per table").

One watcher per table per gateway instead of one per player: each event is queued once as an observer
sees it, with the full event for each joined viewer whose seat may see its hidden cards (his hole
cards, his draw), and each viewer's snapshot is queued at its place among the events when he joins.
:func:`feed_messages` cuts the queue into ``TableFeed`` messages: a burst's events, then the snapshots
that came after them (a joined viewer's events start with the next message).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from cardroom.core.table import Table
from cardroom.runtime.errors import ServiceError
from cardroom.v1 import dealer_pb2
from dealer import redact, views
from dealer.deps import Watcher


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One table event as an observer sees it, and in full for each joined viewer who may see it."""

    public: dealer_pb2.TableEvent
    private: tuple[tuple[str, dealer_pb2.TableEvent], ...] = ()


@dataclass(frozen=True, slots=True)
class FeedSnapshot:
    """A viewer joined: the table as he sees it, at the table's sequence then."""

    player: str
    snapshot: dealer_pb2.TableEvent


@dataclass(frozen=True, slots=True)
class FeedAnswer:
    """The answer to an action sent on the feed, queued once the action was carried out (after the
    events it brought) or refused."""

    result: dealer_pb2.FeedResult


@dataclass(eq=False)
class FeedWatcher(Watcher):
    """The watcher of one WatchTableFeed stream (its ``viewer`` is empty: the events are an observer's)."""

    error: ServiceError | None = None
    """Why a bad request ended the feed (its status), else None."""
    acting: set[asyncio.Task[None]] = field(default_factory=set)
    """The actions sent on the feed and not yet answered (each carried out to its end, even when the
    feed ends meanwhile: its answer is then dropped, and a repeat of its request id answers it)."""
    joined: Counter[str] = field(default_factory=Counter)
    """The viewers joined, with how many joins each (a player's two sessions on one gateway join twice)."""

    def offer(self, item: redact.Outgoing, table: Table) -> None:
        private: tuple[tuple[str, dealer_pb2.TableEvent], ...] = ()
        if item.owner is not None:
            private = tuple((p, item.event) for p in self.joined if views.seat_of(table, p) == item.owner)
        self.queue.put_nowait(FeedEvent(redact.for_viewer(item, None), private))

    def join(self, player: str, snapshot: dealer_pb2.TableEvent) -> None:
        """``player`` joins with ``snapshot`` (made inside the table's actor, between two steps); a
        full queue ends the feed as too slow."""
        if self.ended:
            return
        self.joined[player] += 1
        try:
            self.queue.put_nowait(FeedSnapshot(player, snapshot))
        except asyncio.QueueFull:
            self.end("slow")

    def answer(self, result: dealer_pb2.FeedResult) -> None:
        """The answer to an action, behind what is queued (nothing once the feed ended)."""
        if self.ended:
            return
        try:
            self.queue.put_nowait(FeedAnswer(result))
        except asyncio.QueueFull:
            self.end("slow")

    def leave(self, player: str) -> None:
        """One join of ``player`` ends (his full events stop with his last)."""
        if self.joined[player] > 1:
            self.joined[player] -= 1
        else:
            self.joined.pop(player, None)


Entry = FeedEvent | FeedSnapshot | FeedAnswer


async def feed_messages(queue: asyncio.Queue[Entry | None], most: int) -> AsyncIterator[dealer_pb2.TableFeed]:
    """The feed's messages as its queue fills: each time the stream wakes, every entry queued by then
    (at most ``most``), cut after snapshots and answers so that no event follows them in one message;
    ends at the None the watcher's end puts last."""
    held: Entry | None = None
    ended = False
    while not ended:
        item = held if held is not None else await queue.get()
        held = None
        message = dealer_pb2.TableFeed()
        count = 0
        while True:
            if item is None:
                ended = True
                break
            if isinstance(item, FeedSnapshot):
                if message.results:  # a snapshot after an answer: the next message
                    held = item
                    break
                message.snapshots.append(dealer_pb2.ViewerSnapshot(player_id=item.player, snapshot=item.snapshot))
            elif isinstance(item, FeedAnswer):
                message.results.append(item.result)
            elif message.snapshots or message.results:
                held = item
                break
            else:
                index = len(message.events)
                message.events.append(item.public)
                for player, event in item.private:
                    message.private.append(dealer_pb2.PrivateTableEvent(index=index, player_id=player, event=event))
            count += 1
            if queue.empty() or count >= most:
                break
            item = queue.get_nowait()
        if message.events or message.snapshots or message.results:
            yield message
