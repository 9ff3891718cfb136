"""Fast tier: the gateway's table feeds (gateway.feeds; docs/capacity.md, "One feed per table") with
Play sessions on a real in-process dealer: the sessions at a table share one dealer stream, and each
session's player gets exactly what a Watch of his own gives him; a session joining mid-hand starts from
its snapshot; a closed table ends every session; a broken feed is opened again with new snapshots, or
given up with the dealer's status; a session too slow for the feed is left out while the others play
on; a dealer without the feed (a rolling upgrade) is watched per session as before."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import grpc
import pytest

from cardroom.runtime.clock import ManualClock
from cardroom.v1 import dealer_pb2 as d, dealer_pb2_grpc, gateway_pb2 as g
from dealer.actor import TableActor
from dealer.feed import FeedWatcher
from gateway import play, streams
from gateway.clients import Backends
from gateway.feeds import Ending, TableFeeds, View
from gateway.presence import Presence
from gateway.tokens import Claims
from tests.fast.dealer.fakes import FakePublisher
from tests.fast.dealer.inproc_dealer import dealer_server
from tests.fast.gateway.fakes import FakeDealer, FakeWallet, backends, rpc_error
from tests.fast.gateway.test_play_session import Session

TABLE = "fast-1"


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 30))


def on(stub: Any) -> Backends:
    return Backends(dealer=stub, wallet=FakeWallet(), monitor=None, channels=[])  # type: ignore[arg-type]


def table_events(events: list[g.PlayEvent]) -> list[d.TableEvent]:
    out: list[d.TableEvent] = []
    for event in events:
        if event.HasField("table_burst"):
            out.extend(event.table_burst.events)
        elif event.HasField("table"):
            out.append(event.table)
    return out


async def gather(session: Session, into: list[g.PlayEvent], until: Callable[[list[d.TableEvent]], bool]) -> None:
    while not until(table_events(into)):
        event = await session.next()
        assert event is not None, "the session ended"
        into.append(event)


def reached(sequence: int) -> Callable[[list[d.TableEvent]], bool]:
    return lambda events: bool(events) and events[-1].sequence >= sequence


async def deal(stub: dealer_pb2_grpc.DealerStub, actor: TableActor, clock: ManualClock) -> None:
    for player in ("ann", "bob"):
        await stub.SitDown(d.SitDownRequest(table_id=TABLE, player_id=player, buy_in=1000, request_id=player))
    clock.advance(1.0)
    while actor.table.hand is None:
        await asyncio.sleep(0.01)


async def fold(stub: dealer_pb2_grpc.DealerStub, actor: TableActor) -> None:
    legal = actor.table.legal_actions()
    assert legal is not None
    player = actor.table.seating.seats[legal.seat].player
    await stub.Act(d.ActRequest(table_id=TABLE, player_id=player, action=d.ACTION_TYPE_FOLD))


def feeds_of(actor: TableActor) -> list[FeedWatcher]:
    return [w for w in actor.watchers if isinstance(w, FeedWatcher)]


def test_the_sessions_at_a_table_share_one_dealer_stream_and_each_sees_what_his_own_watch_shows() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            gateway = on(stub)
            own = {p: stub.WatchBursts(d.WatchRequest(table_id=TABLE, viewer_player_id=p)) for p in ("ann", "bob")}
            watched = {p: list((await w.read()).events) for p, w in own.items()}
            sessions = {"ann": Session(gateway, player="ann"), "bob": Session(gateway, player="bob")}
            sessions["ann"].send("o", open=g.OpenTable(table_id=TABLE, bursts=True))
            sessions["bob"].send("o", open=g.OpenTable(table_id=TABLE))  # one event per message
            got: dict[str, list[g.PlayEvent]] = {"ann": [], "bob": []}
            for player, session in sessions.items():
                await gather(session, got[player], lambda events: bool(events))
            assert len(actor.watchers) == 3  # the two Watches above, and one feed for both sessions
            assert len(feeds_of(actor)) == 1 and dict(feeds_of(actor)[0].joined) == {"ann": 1, "bob": 1}
            assert gateway.feeds is not None and list(gateway.feeds.feeds) == [TABLE]
            await deal(stub, actor, clock)
            await fold(stub, actor)
            end = actor.sequence
            for player, session in sessions.items():
                await gather(session, got[player], reached(end))
                while watched[player][-1].sequence < end:
                    watched[player].extend((await asyncio.wait_for(own[player].read(), 5)).events)
                own[player].cancel()
            assert any(e.HasField("table_burst") for e in got["ann"])
            assert not any(e.HasField("table_burst") for e in got["bob"])
            for player in ("ann", "bob"):
                assert table_events(got[player]) == watched[player], player
                assert any(e.HasField("cards_dealt") and "??" not in e.cards_dealt.cards for e in watched[player])
            for session in sessions.values():
                await session.close()
            for _ in range(100):  # the last session out closes the dealer stream
                if not actor.watchers:
                    break
                await asyncio.sleep(0.02)
            assert not actor.watchers and not gateway.feeds.feeds

    run(body)


def test_a_session_joining_mid_hand_starts_from_its_snapshot_and_its_events_follow_it() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            gateway = on(stub)
            first = Session(gateway, player="ann")
            first.send("o", open=g.OpenTable(table_id=TABLE, bursts=True))
            seen: list[g.PlayEvent] = []
            await gather(first, seen, lambda events: bool(events))
            await deal(stub, actor, clock)
            late = Session(gateway, player="bob")
            late.send("o", open=g.OpenTable(table_id=TABLE, bursts=True))
            got: list[g.PlayEvent] = []
            await gather(late, got, lambda events: bool(events))
            await fold(stub, actor)
            await gather(late, got, reached(actor.sequence))
            assert len(feeds_of(actor)) == 1
            await first.close()
            await late.close()
        events = table_events(got)
        snapshot = events[0]
        assert snapshot.HasField("snapshot") and snapshot.snapshot.in_hand
        bob = [s for s in snapshot.snapshot.seats if s.player_id == "bob"]
        assert bob and bob[0].cards and "??" not in bob[0].cards
        after = events[1:]
        assert [e.sequence for e in after] == list(range(snapshot.sequence + 1, snapshot.sequence + 1 + len(after)))

    run(body)


def test_a_closed_table_ends_every_session_after_its_table_closed() -> None:
    async def body() -> None:
        async with dealer_server(FakePublisher(), ManualClock()) as (stub, actor):
            gateway = on(stub)
            sessions = [Session(gateway, player=p) for p in ("ann", "bob")]
            got: list[list[g.PlayEvent]] = [[], []]
            for session, into in zip(sessions, got, strict=True):
                session.send("o", open=g.OpenTable(table_id=TABLE, bursts=True))
                await gather(session, into, lambda events: bool(events))
            await stub.CloseTable(d.CloseTableRequest(table_id=TABLE))
            for session, into in zip(sessions, got, strict=True):
                while (event := await session.next()) is not None:
                    into.append(event)
                assert table_events(into)[-1].HasField("table_closed")
                await session.close()

    run(body)


def restarting() -> grpc.aio.AioRpcError:
    return rpc_error(grpc.StatusCode.UNAVAILABLE, "the dealer is restarting; watch again")


def lost_in_a_write() -> grpc.aio.AioRpcError:
    """What grpc.aio raises in place of a stream's status when a request was being written as the
    stream ended (grpc/grpc#36066; cardroom.runtime.lost_status)."""
    debug = 'Failed "execute_batch": (<grpc._cython.cygrpc.SendMessageOperation object at 0x7f0000000000>,)'
    return grpc.aio.AioRpcError(
        grpc.StatusCode.INTERNAL, grpc.aio.Metadata(), grpc.aio.Metadata(), "Internal error from Core", debug
    )


class Breaking:
    """A dealer stub whose first ``breaks`` feed calls fail (``error``: UNAVAILABLE, the dealer
    restarting), then the real dealer's; every other call is the real dealer's."""

    def __init__(
        self, real: dealer_pb2_grpc.DealerStub, breaks: int, error: Callable[[], grpc.aio.AioRpcError] = restarting
    ) -> None:
        self.real, self.breaks, self.calls, self.error = real, breaks, 0, error

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def WatchTableFeed(self, requests: Any, timeout: float | None = None) -> Any:
        self.calls += 1
        if self.calls > self.breaks:
            return self.real.WatchTableFeed(requests, timeout=timeout)

        async def broken() -> AsyncIterator[d.TableFeed]:
            raise self.error()
            yield d.TableFeed()  # pragma: no cover - makes this a generator

        return broken()


def test_a_broken_feed_is_opened_again_and_the_session_gets_a_new_snapshot() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            breaking = Breaking(stub, breaks=2)
            session = Session(on(breaking), player="ann")
            session.send("o", open=g.OpenTable(table_id=TABLE, bursts=True))
            got: list[g.PlayEvent] = []
            await gather(session, got, lambda events: bool(events))
            assert breaking.calls == 3
            await deal(stub, actor, clock)
            await gather(session, got, reached(actor.sequence))
            await session.close()
        events = table_events(got)
        assert events[0].HasField("snapshot") and any(e.HasField("hand_started") for e in events)

    run(body)


def test_a_feed_whose_status_grpc_lost_in_a_write_is_asked_again_at_once_not_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """grpc.aio's local INTERNAL "Internal error from Core" hides the dealer's status: the feed is
    opened again at once to hear it, not logged and backed off from as the dealer failing."""

    async def body() -> None:
        async with dealer_server(FakePublisher(), ManualClock()) as (stub, _):
            breaking = Breaking(stub, breaks=1, error=lost_in_a_write)
            session = Session(on(breaking), player="ann")
            session.send("o", open=g.OpenTable(table_id=TABLE))
            got: list[g.PlayEvent] = []
            await gather(session, got, lambda events: bool(events))
            assert breaking.calls == 2 and table_events(got)[0].HasField("snapshot")
            await session.close()

    with caplog.at_level(logging.INFO, logger="gateway.feeds"):
        run(body)
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "gateway.feeds"]
    assert (logging.INFO, "dealer table feed ended as a request was sent") in said
    assert not [m for level, m in said if level >= logging.WARNING], said


def test_a_lasting_failure_is_given_up_with_the_dealer_s_status_and_the_play_stream_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(streams, "WATCH_RETRY_SECONDS", 0.05)

    async def body() -> None:
        async with dealer_server(FakePublisher(), ManualClock()) as (stub, _):
            session = Session(on(Breaking(stub, breaks=1000)), player="ann")
            session.send("o", open=g.OpenTable(table_id=TABLE))
            error = await session.error()
            assert error.request_id == "o" and error.code == "UNAVAILABLE", error
            session.send("p", ping=g.Ping())
            pong = await session.next()
            assert pong is not None and pong.HasField("pong")
            await session.close()

    run(body)


def test_a_session_too_slow_for_the_feed_is_left_out_and_the_others_play_on() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            feeds = TableFeeds(on(stub).dealers)
            fast: list[View] = []
            slow: list[View] = []

            def full_after_one(view: View) -> bool:
                slow.append(view)
                return len(slow) < 2  # its snapshot fits, nothing more does

            def keep(view: View) -> bool:
                fast.append(view)
                return True

            following = asyncio.create_task(feeds.follow(TABLE, "ann", keep))
            left_out = asyncio.create_task(feeds.follow(TABLE, "bob", full_after_one))
            while not (fast and slow):  # both joined (a join after the first waits for the feed's first answer)
                await asyncio.sleep(0.01)
            await deal(stub, actor, clock)
            assert await asyncio.wait_for(left_out, 5) == (Ending.SLOW, None)
            await fold(stub, actor)
            while fast[-1].events[-1].sequence < actor.sequence:
                await asyncio.sleep(0.01)
            assert not following.done()
            assert dict(feeds_of(actor)[0].joined) == {"ann": 1}  # bob's join was undone
            following.cancel()
            await feeds.close()

    run(body)


def test_a_dealer_without_the_feed_is_watched_by_each_session_as_before() -> None:
    async def body() -> None:
        snapshot = d.TableEvent(table_id="t1", snapshot=d.TableState(info=d.TableInfo(table_id="t1")))
        dealer = FakeDealer(watches=[[snapshot]])
        session = Session(backends(dealer), player="ann")
        session.send("o", open=g.OpenTable(table_id="t1"))
        event = await session.next()
        assert event is not None and event.table == snapshot
        assert dealer.watch_methods == ["WatchBursts"]
        await session.close()

    run(body)


class Counting:
    """The real dealer stub, counting its unary Act calls."""

    def __init__(self, real: dealer_pb2_grpc.DealerStub) -> None:
        self.real, self.acts = real, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def Act(self, request: d.ActRequest, **kw: Any) -> Any:
        self.acts += 1
        return self.real.Act(request, **kw)


async def my_turn(session: Session, got: list[g.PlayEvent], player: str) -> d.LegalActionsView:
    """Read ``session`` until its player's turn."""
    while True:
        turns = [
            e.turn_started.to_act if e.HasField("turn_started") else e.snapshot.to_act
            for e in table_events(got)
            if e.HasField("turn_started") or e.HasField("snapshot")
        ]
        if turns and turns[-1].player_id == player:
            return turns[-1]
        event = await session.next()
        assert event is not None
        got.append(event)


async def result_of(session: Session, got: list[g.PlayEvent], rid: str) -> g.PlayEvent:
    while True:
        event = await session.next()
        assert event is not None
        got.append(event)
        if (event.HasField("result") and event.result.request_id == rid) or (
            event.HasField("error") and event.error.request_id == rid
        ):
            return event


async def at_the_first_turn(
    stub: dealer_pb2_grpc.DealerStub, actor: TableActor, clock: ManualClock, results_in_bursts: bool = False
) -> tuple[Counting, dict[str, Session], dict[str, list[g.PlayEvent]], str]:
    """Ann's and Bob's sessions on the real dealer (its unary Acts counted), each opening the table with
    bursts (and ``results_in_bursts``); a hand dealt, the first to act's session read up to his turn:
    the counting stub, the sessions, what each got, the player to act."""
    counting = Counting(stub)
    gateway = on(counting)
    sessions = {p: Session(gateway, player=p) for p in ("ann", "bob")}
    got: dict[str, list[g.PlayEvent]] = {"ann": [], "bob": []}
    opening = g.OpenTable(table_id=TABLE, bursts=True, results_in_bursts=results_in_bursts)
    for player, session in sessions.items():
        session.send("o", open=opening)
        await gather(session, got[player], lambda events: bool(events))
    await deal(stub, actor, clock)
    legal = actor.table.legal_actions()
    assert legal is not None
    first = str(actor.table.seating.seats[legal.seat].player)
    await my_turn(sessions[first], got[first], first)
    return counting, sessions, got, first


def test_actions_go_on_the_table_feed_with_no_unary_call_and_refusals_keep_their_reason() -> None:
    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            counting, sessions, got, first = await at_the_first_turn(stub, actor, clock)
            sessions[first].send("a1", act=g.PlayAction(action=d.ACTION_TYPE_CALL))
            done = await result_of(sessions[first], got[first], "a1")
            sessions[first].send("a2", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))  # not his turn now
            refused = await result_of(sessions[first], got[first], "a2")
            for session in sessions.values():
                await session.close()
        assert done.HasField("result") and done.result.act.action.action == d.ACTION_TYPE_CALL
        # the action's events reached the player before its answer
        before = table_events(got[first][: got[first].index(done)])
        assert any(e.HasField("action") and e.action.player_id == first for e in before)
        assert refused.HasField("error") and refused.error.code == "FAILED_PRECONDITION"
        assert refused.error.reason == "OUT_OF_TURN", refused.error
        assert counting.acts == 0  # both went on the feed

    run(body)


class LosingActs:
    """The real dealer, whose first feed stream loses the actions sent on it and then breaks
    (UNAVAILABLE) once one was lost: the gateway must ask again with the unary Act."""

    def __init__(self, real: dealer_pb2_grpc.DealerStub) -> None:
        self.real, self.feeds, self.acts, self.lost = real, 0, 0, asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def Act(self, request: d.ActRequest, **kw: Any) -> Any:
        self.acts += 1
        return self.real.Act(request, **kw)

    def WatchTableFeed(self, requests: Any, timeout: float | None = None) -> Any:
        self.feeds += 1
        if self.feeds > 1:
            return self.real.WatchTableFeed(requests, timeout=timeout)
        lost = self.lost

        async def kept() -> AsyncIterator[d.TableFeedRequest]:
            async for request in requests:
                if request.HasField("act"):
                    lost.set()
                else:
                    yield request

        call = self.real.WatchTableFeed(kept(), timeout=timeout)

        async def stream() -> AsyncIterator[d.TableFeed]:
            reading = asyncio.ensure_future(call.read())
            try:
                while True:
                    breaking = asyncio.ensure_future(lost.wait())
                    await asyncio.wait({reading, breaking}, return_when=asyncio.FIRST_COMPLETED)
                    breaking.cancel()
                    if lost.is_set():
                        raise rpc_error(grpc.StatusCode.UNAVAILABLE, "the dealer is restarting")
                    message = reading.result()
                    yield message
                    reading = asyncio.ensure_future(call.read())
            finally:
                reading.cancel()
                call.cancel()

        return stream()


def test_an_action_the_feed_did_not_answer_is_asked_again_by_the_unary_act_and_done_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # not by the wait for an answer running out: the stream's end answers it at once
    monkeypatch.setattr(play, "DEFAULT_TIMEOUT", 600.0)

    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            losing = LosingActs(stub)
            await deal(stub, actor, clock)
            legal = actor.table.legal_actions()
            assert legal is not None
            first = actor.table.seating.seats[legal.seat].player
            session = Session(on(losing), player=first)
            got: list[g.PlayEvent] = []
            session.send("o", open=g.OpenTable(table_id=TABLE, bursts=True))
            await my_turn(session, got, first)
            session.send("a1", act=g.PlayAction(action=d.ACTION_TYPE_CALL))
            done = await result_of(session, got, "a1")
            hand = actor.table.hand
            await session.close()
        assert done.HasField("result"), done
        assert losing.lost.is_set() and losing.acts == 1  # lost on the feed, then asked once by the unary Act
        assert hand is not None and len([e for e in hand.events if type(e).__name__ == "ActionTaken"]) == 1

    run(body)


def test_an_action_s_answer_comes_in_the_burst_of_its_events_for_a_session_that_asks_for_it() -> None:
    """gateway.proto OpenTable.results_in_bursts: the answer rides in the burst the action brought (one
    message fewer per action, docs/capacity.md); the others' bursts carry no answer, and a refusal
    still comes on its own with its reason."""

    async def body() -> None:
        clock = ManualClock()
        async with dealer_server(FakePublisher(), clock) as (stub, actor):
            counting, sessions, got, first = await at_the_first_turn(stub, actor, clock, results_in_bursts=True)
            other = "bob" if first == "ann" else "ann"
            sessions[first].send("a1", act=g.PlayAction(action=d.ACTION_TYPE_CALL))
            while not (got[first][-1].HasField("burst_result") or got[first][-1].HasField("result")):
                event = await sessions[first].next()
                assert event is not None
                got[first].append(event)
            done = got[first][-1]
            sessions[first].send("a2", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))  # not his turn now
            refused = await result_of(sessions[first], got[first], "a2")
            await gather(sessions[other], got[other], reached(actor.sequence))
            for session in sessions.values():
                await session.close()
        assert done.HasField("table_burst") and done.burst_result.request_id == "a1"
        assert done.burst_result.act.action.action == d.ACTION_TYPE_CALL
        assert any(e.HasField("action") and e.action.player_id == first for e in done.table_burst.events)
        assert not any(e.HasField("result") and e.result.request_id == "a1" for e in got[first])  # not twice
        assert not any(e.HasField("burst_result") for e in got[other])
        assert refused.HasField("error") and refused.error.reason == "OUT_OF_TURN", refused
        assert counting.acts == 0

    run(body)


def test_an_answer_in_a_burst_is_only_ever_its_own_player_s() -> None:
    """Request ids are each player's own: another player's answer under the same id is not taken for
    this session's, and a session that did not ask for answers in bursts gets none."""

    async def body() -> None:
        burst = [d.TableEvent(table_id=TABLE, sequence=3, action=d.Action(seat=1))]
        answer = d.FeedResult(request_id="r1", act=d.ActResponse(hand_number=1))
        sessions = []
        for asks in (True, False):
            session = play.PlaySession(
                on(FakeDealer()), Claims("ann", 10**10), "peer/1", lambda: None, Presence(None, 1)
            )
            session.bursts, session.results_in_bursts = True, asks
            session._acting = ("r1", "client-r1")
            sessions.append(session)
        mine, not_asked = sessions
        assert mine._deliver(View(burst, {("bob", "r1"): answer}))
        assert not mine.out.get_nowait().HasField("burst_result")
        assert not_asked._deliver(View(burst, {("ann", "r1"): answer}))
        assert not not_asked.out.get_nowait().HasField("burst_result")
        assert mine._deliver(View(burst, {("ann", "r1"): answer}))
        event = mine.out.get_nowait()
        assert event.burst_result.request_id == "client-r1" and event.burst_result.act.hand_number == 1
        assert list(event.table_burst.events) == burst

    run(body)
