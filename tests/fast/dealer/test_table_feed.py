"""Fast tier: the dealer's WatchTableFeed over a real in-process gRPC server (docs/capacity.md, "One
feed per table"). A joined viewer rebuilds from the feed exactly what his own Watch gives him; a viewer
who did not join (or left) never has his hidden cards in it; a viewer joining mid-hand starts from a
snapshot its next events do not repeat; bad requests get precise statuses; a closed table's feed ends
with its TableClosed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc
import pytest
from google.rpc import status_pb2

from cardroom.runtime import errors
from cardroom.runtime.clock import ManualClock
from cardroom.v1 import dealer_pb2 as d
from dealer.feed import FeedWatcher
from dealer.redact import HIDDEN
from dealer.service import _feed_subscribed
from tests.fast.dealer.fakes import FakePublisher, harness
from tests.fast.dealer.inproc_dealer import dealer_server

TABLE = "fast-1"


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def view_of(messages: list[d.TableFeed], player: str) -> list[d.TableEvent]:
    """What ``player``'s session gets from the feed: his first snapshot, then every later message's
    events with his full ones in place of the redacted ones (the gateway's reading)."""
    seen: list[d.TableEvent] = []
    joined = False
    for message in messages:
        if joined:
            mine = {p.index: p.event for p in message.private if p.player_id == player}
            seen.extend(mine.get(i, event) for i, event in enumerate(message.events))
        for snapshot in message.snapshots:
            if snapshot.player_id == player and not joined:
                seen.append(snapshot.snapshot)
                joined = True
    return seen


def last_sequence(messages: list[d.TableFeed]) -> int:
    sequences = [e.sequence for m in messages for e in m.events] + [
        s.snapshot.sequence for m in messages for s in m.snapshots
    ]
    return max(sequences, default=-1)


async def read_until(stream: grpc.aio.Call, into: list, sequence: int, last: Callable[[object], int]) -> None:
    while not into or last(into) < sequence:
        message = await asyncio.wait_for(stream.read(), 5)  # type: ignore[attr-defined]
        assert message is not grpc.aio.EOF
        into.append(message)


def burst_last(bursts: object) -> int:
    return bursts[-1].events[-1].sequence  # type: ignore[index]


async def deal(stub, actor, clock: ManualClock) -> str:  # type: ignore[no-untyped-def]
    """Ann and Bob sit and a hand is dealt: the player to act first."""
    for player in ("ann", "bob"):
        await stub.SitDown(d.SitDownRequest(table_id=TABLE, player_id=player, buy_in=1000, request_id=player))
    clock.advance(1.0)
    while actor.table.hand is None:
        await asyncio.sleep(0.01)
    legal = actor.table.legal_actions()
    assert legal is not None
    return str(actor.table.seating.seats[legal.seat].player)


async def deal_and_fold(stub, actor, clock: ManualClock) -> None:  # type: ignore[no-untyped-def]
    """Ann and Bob sit, a hand is dealt, the first to act folds (the hand ends)."""
    player = await deal(stub, actor, clock)
    await stub.Act(d.ActRequest(table_id=TABLE, player_id=player, action=d.ACTION_TYPE_FOLD))


def test_each_joined_viewer_rebuilds_from_the_feed_what_his_own_watch_gives_him() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            watches = {
                v: stub.WatchBursts(d.WatchRequest(table_id=TABLE, viewer_player_id=v)) for v in ("ann", "bob", "")
            }
            watched: dict[str, list[d.TableEventBatch]] = {v: [await w.read()] for v, w in watches.items()}
            feed = stub.WatchTableFeed()
            await feed.write(d.TableFeedRequest(table_id=TABLE, join_player_id="ann"))
            await feed.write(d.TableFeedRequest(join_player_id="bob"))
            fed: list[d.TableFeed] = []
            while len([s for m in fed for s in m.snapshots]) < 2:
                fed.append(await asyncio.wait_for(feed.read(), 5))
            assert [s.player_id for m in fed for s in m.snapshots] == ["ann", "bob"]
            await deal_and_fold(stub, actor, clock)
            end = actor.sequence
            await read_until(feed, fed, end, last_sequence)
            for viewer, stream in watches.items():
                await read_until(stream, watched[viewer], end, burst_last)
                stream.cancel()
            feed.cancel()
        events = {v: [e for b in bursts for e in b.events] for v, bursts in watched.items()}
        assert any(e.HasField("cards_dealt") for e in events["ann"])
        for player in ("ann", "bob"):
            assert view_of(fed, player) == events[player], player
        # the feed's own events are an observer's: no hidden card in them
        public = [e for m in fed for e in m.events]
        assert public == [e for e in events[""] if not e.HasField("snapshot")]
        dealt = [e.cards_dealt for e in public if e.HasField("cards_dealt")]
        assert dealt and all(set(c.cards) == {HIDDEN} for c in dealt)
        assert {p.player_id for m in fed for p in m.private} == {"ann", "bob"}

    run(body)


def test_a_viewer_who_did_not_join_or_left_never_has_his_cards_in_the_feed() -> None:
    """Hole cards only to their owner: the feed carries a player's full events only while a session
    of his on that gateway is joined."""

    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            feed = stub.WatchTableFeed()
            await feed.write(d.TableFeedRequest(table_id=TABLE, join_player_id="ann"))
            fed: list[d.TableFeed] = []
            await read_until(feed, fed, actor.sequence, last_sequence)
            await deal_and_fold(stub, actor, clock)
            await read_until(feed, fed, actor.sequence, last_sequence)
            first_hand = list(fed)
            await feed.write(d.TableFeedRequest(leave_player_id="ann"))
            await asyncio.sleep(0.1)  # the leave is read before the next hand is dealt
            clock.advance(2.0)
            while actor.table.hand_number < 2 or actor.table.hand is None:
                await asyncio.sleep(0.01)
            await read_until(feed, fed, actor.sequence, last_sequence)
            feed.cancel()
        assert {p.player_id for m in first_hand for p in m.private} == {"ann"}
        later = fed[len(first_hand) :]
        assert any(e.HasField("cards_dealt") for m in later for e in m.events)
        assert not [p for m in later for p in m.private]

    run(body)


def test_a_viewer_joining_mid_hand_starts_from_a_snapshot_its_next_events_follow() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            feed = stub.WatchTableFeed()
            await feed.write(d.TableFeedRequest(table_id=TABLE))
            to_act = await deal(stub, actor, clock)
            await feed.write(d.TableFeedRequest(join_player_id="bob"))
            await stub.Act(d.ActRequest(table_id=TABLE, player_id=to_act, action=d.ACTION_TYPE_CALL))
            fed: list[d.TableFeed] = []
            await read_until(feed, fed, actor.sequence, last_sequence)
            feed.cancel()
        seen = view_of(fed, "bob")
        snapshot = seen[0].snapshot
        assert snapshot.in_hand and [c for s in snapshot.seats if s.player_id == "bob" for c in s.cards]
        assert HIDDEN not in [c for s in snapshot.seats if s.player_id == "bob" for c in s.cards]
        after = seen[1:]
        assert after and [e.sequence for e in after] == list(
            range(seen[0].sequence + 1, seen[0].sequence + 1 + len(after))
        )
        assert not [e for e in after if e.HasField("hand_started")]

    run(body)


@pytest.mark.parametrize(
    ("requests", "code"),
    [
        ([d.TableFeedRequest()], grpc.StatusCode.INVALID_ARGUMENT),
        ([d.TableFeedRequest(table_id="no-such")], grpc.StatusCode.NOT_FOUND),
        ([d.TableFeedRequest(table_id=TABLE, join_player_id="not a player id!")], grpc.StatusCode.INVALID_ARGUMENT),
        ([d.TableFeedRequest(table_id=TABLE, leave_player_id="not a player id!")], grpc.StatusCode.INVALID_ARGUMENT),
        (
            [d.TableFeedRequest(table_id=TABLE), d.TableFeedRequest(table_id="other-1")],
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    ],
)
def test_a_bad_feed_request_gets_its_status_and_leaves_no_feed(requests: list[d.TableFeedRequest], code) -> None:  # type: ignore[no-untyped-def]
    async def body() -> None:
        async with dealer_server(FakePublisher(), ManualClock()) as (stub, actor):
            feed = stub.WatchTableFeed()
            for request in requests:
                await feed.write(request)
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                while (await asyncio.wait_for(feed.read(), 5)) is not grpc.aio.EOF:
                    pass
            assert failed.value.code() == code, failed.value.details()
            for _ in range(50):
                if not actor.watchers:
                    break
                await asyncio.sleep(0.02)
            assert not actor.watchers

    run(body)


def test_a_closed_table_s_feed_ends_with_its_table_closed() -> None:
    async def body() -> None:
        async with dealer_server(FakePublisher(), ManualClock()) as (stub, actor):
            feed = stub.WatchTableFeed()
            await feed.write(d.TableFeedRequest(table_id=TABLE, join_player_id="ann"))
            fed = [await asyncio.wait_for(feed.read(), 5)]
            await stub.CloseTable(d.CloseTableRequest(table_id=TABLE))
            while (message := await asyncio.wait_for(feed.read(), 5)) is not grpc.aio.EOF:
                fed.append(message)
            assert await feed.code() == grpc.StatusCode.OK
        assert fed[-1].events[-1].HasField("table_closed")

    run(body)


def answers(messages: list[d.TableFeed]) -> dict[str, tuple[int, d.FeedResult]]:
    """Each answer by request id, with the position in the feed of the last event before it."""
    out: dict[str, tuple[int, d.FeedResult]] = {}
    seen = -1
    for message in messages:
        if message.events:
            seen = message.events[-1].sequence
        for result in message.results:
            out[result.request_id] = (seen, result)
    return out


async def a_feed_and_a_call(stub, actor, clock: ManualClock):  # type: ignore[no-untyped-def]
    """A feed Ann joined, a hand dealt: the feed, the player to act first, and his call (request id r1)."""
    feed = stub.WatchTableFeed()
    await feed.write(d.TableFeedRequest(table_id=TABLE, join_player_id="ann"))
    to_act = await deal(stub, actor, clock)
    return feed, to_act, d.ActRequest(table_id=TABLE, player_id=to_act, action=d.ACTION_TYPE_CALL, request_id="r1")


def test_an_action_on_the_feed_is_answered_after_the_events_it_brought_and_a_repeat_answers_the_same() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            feed, to_act, act = await a_feed_and_a_call(stub, actor, clock)
            # after his call it is the other player's turn: the same player again is out of turn
            out_of_turn = d.ActRequest(table_id=TABLE, player_id=to_act, action=d.ACTION_TYPE_CHECK, request_id="r2")
            before = actor.sequence
            await feed.write(d.TableFeedRequest(act=act))
            fed: list[d.TableFeed] = []
            while "r1" not in answers(fed):
                fed.append(await asyncio.wait_for(feed.read(), 5))
            after_act = actor.sequence
            await feed.write(d.TableFeedRequest(act=out_of_turn))
            while "r2" not in answers(fed):
                fed.append(await asyncio.wait_for(feed.read(), 5))
            unchanged = actor.sequence
            again = await stub.Act(act)  # the unary fallback with the same request id: the first result
            feed.cancel()
        seen, done = answers(fed)["r1"]
        assert done.HasField("act") and not done.refused and again == done.act
        assert done.act.action.action == d.ACTION_TYPE_CALL and done.act.action.player_id == to_act
        # the answer comes after every event the action brought (its action, the next turn ...)
        assert before < after_act and seen == after_act
        _, refused = answers(fed)["r2"]
        error = errors.error_from_status(status_pb2.Status.FromString(refused.refused))
        assert not refused.HasField("act")
        assert error.code == grpc.StatusCode.FAILED_PRECONDITION and error.reason == "OUT_OF_TURN", error
        assert unchanged == after_act  # a refusal changes nothing

    run(body)


@pytest.mark.parametrize(
    "act",
    [
        d.ActRequest(table_id=TABLE, player_id="ann", action=d.ACTION_TYPE_CALL),  # no request id
        d.ActRequest(table_id="other-1", player_id="ann", action=d.ACTION_TYPE_CALL, request_id="r"),
    ],
)
def test_an_action_the_feed_cannot_answer_ends_it_invalid_argument(act: d.ActRequest) -> None:
    async def body() -> None:
        async with dealer_server(FakePublisher(), ManualClock()) as (stub, _):
            feed = stub.WatchTableFeed()
            await feed.write(d.TableFeedRequest(table_id=TABLE, act=act))
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                while (await asyncio.wait_for(feed.read(), 5)) is not grpc.aio.EOF:
                    pass
            assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT, failed.value.details()

    run(body)


def test_a_gateway_giving_up_while_its_feed_is_being_made_leaves_no_watcher() -> None:
    """A caller giving up never breaks a server's state: the feed's watcher is made inside the table's
    actor, behind a step still running; cancelled meanwhile (the mailbox skips a command whose caller
    is gone), none is left at the table to fill up unread."""

    async def body() -> None:
        h = harness()
        release = asyncio.Event()

        async def busy() -> None:
            await release.wait()

        step = asyncio.create_task(h.actor.submit(busy))
        await asyncio.sleep(0)
        making = asyncio.create_task(_feed_subscribed(h.actor))
        await asyncio.sleep(0.05)
        making.cancel()
        release.set()
        await step
        with pytest.raises(asyncio.CancelledError):
            await making
        await h.actor.submit(_nothing)  # whatever was queued behind the step has run
        assert not [w for w in h.actor.watchers if isinstance(w, FeedWatcher)]
        await h.stop()

    run(body)


async def _nothing() -> None:
    return None


def test_an_action_s_answer_rides_in_the_message_of_the_events_it_brought_a_repeat_s_after_them() -> None:
    """One feed message for an action and its answer (not one for the events, one for the answer:
    docs/capacity.md), so the gateway can put the answer in the player's burst; a repeat of the
    request id, answered from the first result, comes on its own with the same answer."""

    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            feed, to_act, act = await a_feed_and_a_call(stub, actor, clock)
            fed: list[d.TableFeed] = []
            await feed.write(d.TableFeedRequest(act=act))
            while "r1" not in answers(fed):
                fed.append(await asyncio.wait_for(feed.read(), 5))
            answered = fed[-1]
            await feed.write(d.TableFeedRequest(act=act))
            repeat = await asyncio.wait_for(feed.read(), 5)
            feed.cancel()
        assert [r.request_id for r in answered.results] == ["r1"]
        assert any(e.HasField("action") and e.action.player_id == to_act for e in answered.events)
        assert answered.events[-1].sequence == actor.sequence  # everything it brought, the next turn too
        assert not repeat.events and list(repeat.results) == list(answered.results)

    run(body)
