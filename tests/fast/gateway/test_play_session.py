"""Fast tier: the gateway's Play session in process, with in-memory fakes of the dealer and the
connection monitor — every failure branch (rate limit, no table, another player, dealer
rejections with their reason, Watch restarts and give-ups, the client going away) and its player
listed in the gateway's presence while it is open, without Kafka or a network. Messages and codes
are those of gateway.proto's Play."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

import grpc
import pytest

from cardroom.core.engine.errors import IllegalAction, Reason
from cardroom.runtime import errors
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g
from gateway import streams
from gateway.clients import Backends
from gateway.play import PlaySession
from gateway.presence import Presence
from gateway.ratelimit import PLAYER_LIMITED, Refusal
from gateway.tokens import Claims
from tests.fast.gateway.fakes import FakeDealer, FakeMonitor, backends, rpc_error


class Session:
    """One PlaySession driven from a queue of requests; its events collected in order."""

    def __init__(
        self,
        backends: Backends,
        limit: Callable[[], Refusal | None] = lambda: None,
        player: str = "ann",
        presence: Presence | None = None,
    ) -> None:
        self.requests: asyncio.Queue[g.PlayRequest | None] = asyncio.Queue()
        self.events: asyncio.Queue[g.PlayEvent | None] = asyncio.Queue()
        self.presence = presence or Presence(backends.monitor, 0.01)
        self.session = PlaySession(backends, Claims(player, 10**10), "peer/1", limit, self.presence)
        self.task = asyncio.create_task(self._pump())

    async def _incoming(self) -> AsyncIterator[g.PlayRequest]:
        while (request := await self.requests.get()) is not None:
            yield request

    async def _pump(self) -> None:
        try:
            async for event in self.session.run(self._incoming()):
                await self.events.put(event)
        finally:
            await self.events.put(None)

    def send(self, request_id: str = "", **kind: Any) -> None:
        self.requests.put_nowait(g.PlayRequest(request_id=request_id, **kind))

    async def next(self, timeout: float = 5) -> g.PlayEvent | None:
        return await asyncio.wait_for(self.events.get(), timeout)

    async def error(self) -> g.PlayError:
        event = await self.next()
        assert event is not None and event.WhichOneof("kind") == "error", event
        return event.error

    async def close(self) -> None:
        self.requests.put_nowait(None)
        await asyncio.wait_for(self.task, 5)


def run(scenario: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 30))


def _event(**kind: Any) -> d.TableEvent:
    return d.TableEvent(table_id="t1", **kind)


SNAPSHOT = _event(snapshot=d.TableState(info=d.TableInfo(table_id="t1")))


def test_ping_and_the_checks_before_any_table() -> None:
    async def scenario() -> None:
        s = Session(backends())
        s.send("p", ping=g.Ping())
        pong = await s.next()
        assert pong is not None and pong.WhichOneof("kind") == "pong" and pong.pong.server_time.seconds > 0
        s.send("a1", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))
        err = await s.error()
        assert (err.request_id, err.code, err.message, err.reason) == (
            "a1",
            "FAILED_PRECONDITION",
            "open a table first",
            "NO_TABLE_OPEN",
        )
        s.send("s1", seat=g.SeatCommand(kind=g.SeatCommand.KIND_SIT_OUT))
        assert (await s.error()).reason == "NO_TABLE_OPEN"
        s.send("a2", act=g.PlayAction(action=d.ACTION_TYPE_CHECK, player_id="bob"))
        err = await s.error()
        assert (err.code, err.reason) == ("PERMISSION_DENIED", "OTHER_PLAYER") and "'bob'" in err.message
        s.send("e")
        err = await s.error()
        assert (err.request_id, err.code, err.reason) == ("e", "INVALID_ARGUMENT", "EMPTY_MESSAGE")
        s.send("o", open=g.OpenTable(table_id=""))
        err = await s.error()
        assert (err.code, err.message) == ("INVALID_ARGUMENT", "open.table_id: required")
        await s.close()
        assert await s.next() is None

    run(scenario)


def test_over_the_rate_each_message_gets_an_error_and_the_stream_stays() -> None:
    """The error names the limit that refused the message and its rate, as a unary call's does."""

    async def scenario() -> None:
        budget = [2]
        per_player = Refusal(PLAYER_LIMITED, "rate limit: at most 20 calls/s per player")

        def limit() -> Refusal | None:
            budget[0] -= 1
            return None if budget[0] >= 0 else per_player

        s = Session(backends(), limit=limit)
        for i in range(4):
            s.send(f"p{i}", ping=g.Ping())
        kinds = [(await s.next()) for _ in range(4)]
        assert [e.WhichOneof("kind") for e in kinds if e] == ["pong", "pong", "error", "error"]
        assert {(e.error.code, e.error.reason, e.error.message) for e in kinds[2:] if e} == {
            ("RESOURCE_EXHAUSTED", PLAYER_LIMITED, per_player.message)
        }
        budget[0] = 5
        s.send("again", ping=g.Ping())
        again = await s.next()
        assert again is not None and again.WhichOneof("kind") == "pong"
        await s.close()

    run(scenario)


def test_actions_go_to_the_dealer_as_the_token_s_player_and_rejections_keep_their_reason() -> None:
    async def scenario() -> None:
        out_of_turn = errors.from_illegal(IllegalAction(Reason.OUT_OF_TURN, "not your turn: seat 2 (bob) is to act"))
        dealer = FakeDealer(
            answers={
                "Act": [
                    d.ActResponse(hand_number=3, action=d.Action(seat=1, action=d.ACTION_TYPE_CALL, to=2)),
                    rpc_error(grpc.StatusCode.FAILED_PRECONDITION, error=out_of_turn),
                    rpc_error(grpc.StatusCode.UNAVAILABLE, "dealer restarting"),  # no rich details
                ]
            },
            watches=[[SNAPSHOT]],
        )
        s = Session(backends(dealer))
        s.send("o", open=g.OpenTable(table_id="t1"))
        first = await s.next()
        assert first is not None and first.table.WhichOneof("event") == "snapshot"
        assert dealer.watch_requests[0].viewer_player_id == "ann"
        s.send("a1", act=g.PlayAction(action=d.ACTION_TYPE_CALL, hand_number=3, player_id="ann"))
        result = await s.next()
        assert result is not None and result.result.request_id == "a1" and result.result.act.hand_number == 3
        method, request = dealer.calls[0]
        assert (method, request.table_id, request.player_id, request.request_id, request.hand_number) == (
            "Act",
            "t1",
            "ann",
            "a1",
            3,
        )
        s.send("a2", act=g.PlayAction(action=d.ACTION_TYPE_RAISE, amount=10))
        err = await s.error()
        assert (err.request_id, err.code, err.reason) == ("a2", "FAILED_PRECONDITION", "OUT_OF_TURN")
        assert err.message == "not your turn: seat 2 (bob) is to act"
        assert errors.describe(err.code, err.reason, err.message).startswith("out of turn (FAILED_PRECONDITION): ")
        s.send("", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))  # no request id: one is made up
        err = await s.error()
        assert (err.code, err.reason, err.message) == ("UNAVAILABLE", "UNAVAILABLE", "dealer restarting")
        assert dealer.calls[-1][1].request_id  # the dealer still got an id
        s.send("o2", open=g.OpenTable(table_id="t2"))
        err = await s.error()
        assert (err.code, err.reason) == ("FAILED_PRECONDITION", "TABLE_ALREADY_OPEN") and "'t1'" in err.message
        await s.close()

    run(scenario)


def test_seat_commands() -> None:
    async def scenario() -> None:
        dealer = FakeDealer(
            answers={
                "AddChips": [
                    d.SeatResponse(),
                    rpc_error(
                        grpc.StatusCode.FAILED_PRECONDITION, error=errors.precondition("add chips between hands only")
                    ),
                ],
                "SitOut": [d.SeatResponse()],
                "ComeBack": [d.SeatResponse()],
            },
            watches=[[SNAPSHOT]],
        )
        s = Session(backends(dealer))
        s.send("o", open=g.OpenTable(table_id="t1"))
        await s.next()
        s.send("c1", seat=g.SeatCommand(kind=g.SeatCommand.KIND_ADD_CHIPS, amount=50))
        s.send("c2", seat=g.SeatCommand(kind=g.SeatCommand.KIND_SIT_OUT))
        s.send("c3", seat=g.SeatCommand(kind=g.SeatCommand.KIND_COME_BACK))
        for rid in ("c1", "c2", "c3"):
            event = await s.next()
            assert event is not None and event.result.request_id == rid
        assert [(m, r.table_id, r.player_id) for m, r in dealer.calls] == [
            ("AddChips", "t1", "ann"),
            ("SitOut", "t1", "ann"),
            ("ComeBack", "t1", "ann"),
        ]
        assert dealer.calls[0][1].amount == 50
        s.send("c4", seat=g.SeatCommand(kind=g.SeatCommand.KIND_ADD_CHIPS, amount=50))
        err = await s.error()
        assert (err.request_id, err.code, err.message) == ("c4", "FAILED_PRECONDITION", "add chips between hands only")
        s.send("c5", seat=g.SeatCommand())
        err = await s.error()
        assert (err.code, err.message) == ("INVALID_ARGUMENT", "seat.kind: SIT_OUT, COME_BACK, ADD_CHIPS or POST_NOW")
        assert len(dealer.calls) == 4  # the bad kind never reached the dealer
        await s.close()

    run(scenario)


def test_watch_is_reopened_while_the_dealer_restarts_and_ends_with_the_table() -> None:
    async def scenario() -> None:
        down = rpc_error(grpc.StatusCode.UNAVAILABLE, "connection refused")
        closed = _event(table_closed=d.TableClosed(reason="closed by operator"))
        dealer = FakeDealer(watches=[down, [SNAPSHOT, down], [SNAPSHOT, closed]])
        s = Session(backends(dealer))
        s.send("o", open=g.OpenTable(table_id="t1"))
        seen = [await s.next() for _ in range(3)]
        assert [e.table.WhichOneof("event") for e in seen if e] == ["snapshot", "snapshot", "table_closed"]
        assert await s.next() is None  # table closed: the stream ends
        assert len(dealer.watch_requests) == 3

    run(scenario)


def test_a_burst_of_the_dealer_s_watch_reaches_the_player_as_its_events_in_order() -> None:
    """docs/capacity.md: the gateway follows a table with WatchBursts, one dealer message per burst
    (an action, the pots, the next turn); the player still gets each event, in sequence order."""

    async def scenario() -> None:
        burst = [
            _event(sequence=5, action=d.Action(seat=1)),
            _event(sequence=6, pots_changed=d.PotsChanged()),
            _event(sequence=7, turn_started=d.TurnStarted()),
        ]
        dealer = FakeDealer(watches=[[SNAPSHOT, burst]])
        s = Session(backends(dealer))
        s.send("o", open=g.OpenTable(table_id="t1"))
        seen = [await s.next() for _ in range(4)]
        assert [e.table.WhichOneof("event") for e in seen if e] == [
            "snapshot",
            "action",
            "pots_changed",
            "turn_started",
        ]
        assert [e.table.sequence for e in seen[1:] if e] == [5, 6, 7]
        assert dealer.watch_methods == ["WatchBursts"]
        await s.close()

    run(scenario)


def test_a_client_asking_for_bursts_gets_each_burst_as_one_message() -> None:
    """gateway.proto OpenTable.bursts: the burst the dealer sent is one PlayEvent.table_burst, its
    events in order; the snapshot is a burst of one."""

    async def scenario() -> None:
        burst = [_event(sequence=5, action=d.Action(seat=1)), _event(sequence=6, turn_started=d.TurnStarted())]
        s = Session(backends(FakeDealer(watches=[[SNAPSHOT, burst]])))
        s.send("o", open=g.OpenTable(table_id="t1", bursts=True))
        first, second = await s.next(), await s.next()
        assert first is not None and second is not None
        assert [e.WhichOneof("event") for e in first.table_burst.events] == ["snapshot"]
        assert [e.sequence for e in second.table_burst.events] == [5, 6]
        await s.close()

    run(scenario)


def test_a_dealer_without_watch_bursts_is_watched_event_by_event() -> None:
    """A rolling upgrade: a gateway of this version in front of a dealer of the one before
    (UNIMPLEMENTED for WatchBursts) follows the table with Watch; the player sees no difference."""

    async def scenario() -> None:
        closed = _event(table_closed=d.TableClosed(reason="closed by operator"))
        dealer = FakeDealer(watches=[[SNAPSHOT, _event(sequence=2, action=d.Action(seat=1)), closed]], bursts=False)
        s = Session(backends(dealer))
        s.send("o", open=g.OpenTable(table_id="t1"))
        seen = [await s.next() for _ in range(3)]
        assert [e.table.WhichOneof("event") for e in seen if e] == ["snapshot", "action", "table_closed"]
        assert await s.next() is None
        assert dealer.watch_methods == ["WatchBursts", "Watch"]

    run(scenario)


def test_watch_gives_up_on_a_lasting_or_final_failure_and_the_table_can_be_opened_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def scenario() -> None:
        monkeypatch.setattr(streams, "WATCH_RETRY_SECONDS", 0.05)
        down = rpc_error(grpc.StatusCode.UNAVAILABLE, "")
        missing = rpc_error(grpc.StatusCode.NOT_FOUND, "", errors.not_found("no table 'tx'"))
        dealer = FakeDealer(watches=[missing, down, down, [SNAPSHOT]])
        s = Session(backends(dealer))
        s.send("o1", open=g.OpenTable(table_id="tx"))
        err = await s.error()
        assert (err.request_id, err.code, err.message) == ("o1", "NOT_FOUND", "no table 'tx'")
        assert len(dealer.watch_requests) == 1  # NOT_FOUND is final: no retry
        s.send("o2", open=g.OpenTable(table_id="t1"))  # the stream follows no table again
        err = await s.error()
        assert (err.request_id, err.code, err.message) == ("o2", "UNAVAILABLE", "watch failed")
        assert len(dealer.watch_requests) == 3  # retried once, then gave up
        s.send("o3", open=g.OpenTable(table_id="t1"))
        event = await s.next()
        assert event is not None and event.table.WhichOneof("event") == "snapshot"
        await s.close()

    run(scenario)


def test_the_session_lists_its_player_while_open_and_opens_no_heartbeat_stream_of_its_own() -> None:
    async def scenario() -> None:
        monitor = FakeMonitor()
        s = Session(backends(monitor=monitor), player="ann")  # the presence not started: no beats at all
        s.send("p", ping=g.Ping())
        assert (await s.next()) is not None
        assert [(b.player_id, b.session_id) for b in s.presence.alive()] == [("ann", "peer/1")]
        assert len(s.session.tasks) == 1 and monitor.streams == 0  # the reader only: the gateway's stream beats
        await s.close()
        assert s.presence.alive() == []  # closing the stream takes the player off

    run(scenario)


def test_the_client_going_away_ends_the_session_quietly() -> None:
    async def scenario() -> None:
        async def broken() -> AsyncIterator[g.PlayRequest]:
            yield g.PlayRequest(request_id="p", ping=g.Ping())
            raise rpc_error(grpc.StatusCode.CANCELLED, "client went away")

        back, presence = backends(FakeDealer(watches=[[SNAPSHOT]])), Presence(None, 0.01)
        session = PlaySession(back, Claims("ann", 10**10), "peer/2", lambda: None, presence)
        events = [event async for event in session.run(broken())]
        assert [e.WhichOneof("kind") for e in events] == ["pong"]
        assert all(task.done() for task in session.tasks)
        assert presence.alive() == []

    run(scenario)
