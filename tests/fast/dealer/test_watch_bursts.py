"""Fast tier: the dealer's Watch and WatchBursts over a real in-process gRPC server — the same events
for the same viewer, a burst (an action, the pots it changed, the next turn) in one message
(docs/capacity.md: the gateway reads a third of the messages it read with Watch); and a watch opened
while the table is in the middle of a step starts from a snapshot its events do not repeat."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc

from cardroom.runtime.clock import ManualClock
from cardroom.v1 import dealer_pb2 as d
from dealer.service import _subscribed
from tests.fast.dealer.fakes import FakePublisher, harness
from tests.fast.dealer.inproc_dealer import dealer_server


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


async def _collect(stream: grpc.aio.UnaryStreamCall, into: list, until: Callable[[], bool]) -> None:
    while not until():
        message = await stream.read()
        assert message is not grpc.aio.EOF
        into.append(message)


def test_watch_bursts_sends_the_events_of_watch_one_burst_per_message() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            request = d.WatchRequest(table_id="fast-1", viewer_player_id="ann")
            singles: list[d.TableEvent] = []
            bursts: list[d.TableEventBatch] = []
            one = stub.Watch(request)
            many = stub.WatchBursts(request)
            await one.read()  # both watchers are subscribed once their snapshots came
            await many.read()
            for player in ("ann", "bob"):
                sit = d.SitDownRequest(table_id="fast-1", player_id=player, buy_in=1000, request_id=player)
                await stub.SitDown(sit)
            clock.advance(1.0)  # the hand starts after the pause
            # the hand dealt: its first turn announced
            await asyncio.wait_for(
                _collect(one, singles, lambda: bool(singles) and singles[-1].HasField("turn_started")), 5
            )
            table = actor.table
            legal = table.legal_actions()
            assert legal is not None
            player = table.seating.seats[legal.seat].player
            dealt = len(singles)
            await stub.Act(d.ActRequest(table_id="fast-1", player_id=player, action=d.ACTION_TYPE_FOLD))
            n_sent = actor.sequence

            await asyncio.wait_for(_collect(one, singles, lambda: singles[-1].sequence >= n_sent), 5)
            await asyncio.wait_for(
                _collect(many, bursts, lambda: bool(bursts) and bursts[-1].events[-1].sequence >= n_sent), 5
            )
            one.cancel()
            many.cancel()
        assert dealt < len(singles)
        flat = [e for b in bursts for e in b.events]
        assert flat == singles[: len(flat)] and flat[-1].sequence == n_sent
        assert len(bursts) < len(flat)  # bursts, not one message per event
        fold = next(b for b in bursts if any(e.WhichOneof("event") == "action" for e in b.events))
        # the fold and what it brought (the hand's end) came in one message
        assert len(fold.events) >= 2, [e.WhichOneof("event") for e in fold.events]

    run(body)


class GatedPublisher(FakePublisher):
    """The hand-start snapshot (hand in progress) waits for ``gate``: the table is caught inside the
    step that deals a hand, after the deal and before the hand's events go out."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def publish(self, topic: str, **kw) -> None:  # type: ignore[override]
        payload = kw["payload"]
        if isinstance(payload, d.TableSnapshot) and payload.hand_in_progress:
            self.waiting.set()
            await self.gate.wait()
        await super().publish(topic, **kw)


def test_a_watch_opened_while_a_hand_is_being_dealt_starts_from_a_snapshot_its_events_do_not_repeat() -> None:
    """docs/capacity.md failure 3: a Watch opened while the table awaited the hand-start snapshot got
    the dealt hand in its snapshot, with a sequence from before the hand: its next events (the hand
    started, the blinds, the turn) told it again, and a player acted twice on one turn (OUT_OF_TURN)."""

    async def body() -> None:
        clock = ManualClock()
        publisher = GatedPublisher()
        async with dealer_server(publisher, clock) as (stub, actor):
            for player in ("ann", "bob"):
                sit = d.SitDownRequest(table_id="fast-1", player_id=player, buy_in=1000, request_id=player)
                await stub.SitDown(sit)
            clock.advance(1.0)  # the hand is dealt; its snapshot waits at the gate
            await asyncio.wait_for(publisher.waiting.wait(), 5)
            assert actor.table.hand is not None
            watch = stub.WatchBursts(d.WatchRequest(table_id="fast-1", viewer_player_id="ann"))
            await asyncio.sleep(0.2)  # the watch reached the dealer while the step is still on
            publisher.gate.set()
            first = await asyncio.wait_for(watch.read(), 5)
            snapshot = first.events[0]
            later: list[d.TableEvent] = []
            while True:  # the events that follow, until the table is quiet (waiting for a player)
                try:
                    later.extend((await asyncio.wait_for(watch.read(), 0.5)).events)
                except TimeoutError:
                    break
            watch.cancel()
        assert snapshot.HasField("snapshot")
        started = [e for e in later if e.HasField("hand_started")]
        if snapshot.snapshot.in_hand:  # the hand is in the snapshot: its start is not told again
            assert not [e for e in started if e.hand_started.hand_number == snapshot.snapshot.hand_number], (
                snapshot.sequence,
                [(e.sequence, e.WhichOneof("event")) for e in later],
            )
        else:  # or the snapshot is from before the deal, and the events tell it
            assert started
        assert all(e.sequence > snapshot.sequence for e in later)

    run(body)


def test_the_snapshot_s_sequence_is_the_table_s_when_the_watcher_was_made() -> None:
    """Every event a new watcher gets is after its snapshot, and none is left out: an action the
    table carried out right after the subscription (before the Watch's handler ran again) is in the
    watcher's queue with the next sequence, not hidden behind a later snapshot sequence."""

    async def body() -> None:
        h = harness(balances={"ann": 5000, "bob": 5000})
        await h.sit("ann", 1000)
        await h.sit("bob", 1000)
        await h.advance(1.0)
        table = h.actor.table
        legal = table.legal_actions()
        assert legal is not None
        player = table.seating.seats[legal.seat].player
        fold = d.ActRequest(table_id=h.actor.table_id, player_id=player, action=d.ACTION_TYPE_FOLD)
        subscribing = asyncio.create_task(_subscribed(h.actor, "ann"))
        acting = asyncio.create_task(h.actor.submit(lambda: h.actor.act(fold)))  # queued right behind it
        watcher, snapshot = await subscribing
        await acting
        queued = []
        while not watcher.queue.empty():
            queued.append(watcher.queue.get_nowait())
        assert queued and queued[0].HasField("action"), [e.WhichOneof("event") for e in queued if e]
        assert [e.sequence for e in queued] == list(range(snapshot.sequence + 1, snapshot.sequence + 1 + len(queued)))
        await h.stop()

    run(body)
