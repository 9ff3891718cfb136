"""Fast tier: the gateway's calls for gRPC-Web clients (issue 18, "Transport": "the gateway gains a
server stream of the player's table events and unary calls for actions (same auth, rate limits and
validation as the bidi Play, sharing its code)") — WatchMyTable and TableCommand on an in-process
gateway with in-memory fakes of the dealer and the connection monitor: the session they open,
events asked for the token's player only, heartbeats while open, a second session taking over,
acting for oneself only, bad input refused with its status and nothing sent to the dealer, the
rate limits and stream cap, the Watch re-opened across a dealer restart, and a caller cancelling
mid-call."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from cardroom.core import ids
from cardroom.core.engine.errors import IllegalAction, Reason
from cardroom.runtime import errors
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from tests.fast.gateway.fakes import FakeDealer, FakeMonitor, backends, rpc_error
from tests.fast.gateway.test_gateway_service import auth, config, failure, run

SNAPSHOT = d.TableEvent(table_id="t1", snapshot=d.TableState(info=d.TableInfo(table_id="t1")))
HOLE = d.TableEvent(table_id="t1", cards_dealt=d.CardsDealt(seat=1, cards=["As", "Kd"]))
CLOSED = d.TableEvent(table_id="t1", table_closed=d.TableClosed(reason="closed by operator"))


class Watching:
    """One WatchMyTable stream: its SessionOpened read first."""

    def __init__(self, stub: g_grpc.GatewayStub, player: str, table_id: str = "t1") -> None:
        self.stub, self.player, self.table_id = stub, player, table_id
        self.call = stub.WatchMyTable(g.WatchMyTableRequest(table_id=table_id), metadata=auth(player))
        self.session_id = ""

    async def opened(self) -> Watching:
        first = await self.next()
        assert first is not None and first.WhichOneof("kind") == "session", first
        assert first.session.table_id == self.table_id and first.session.session_id
        self.session_id = first.session.session_id
        return self

    async def next(self) -> g.PlayEvent | None:
        event = await asyncio.wait_for(self.call.read(), 5)
        return None if event is grpc.aio.EOF else event

    def command(self, request_id: str = "", session_id: str | None = None, **kind: Any) -> Any:
        return command(
            self.stub, self.player, self.session_id if session_id is None else session_id, request_id, **kind
        )


def command(stub: g_grpc.GatewayStub, player: str, session_id: str, request_id: str = "", **kind: Any) -> Any:
    """A TableCommand call by ``player`` in ``session_id``."""
    request = g.TableCommandRequest(session_id=session_id, request_id=request_id, **kind)
    return stub.TableCommand(request, metadata=auth(player))


def _stream_ends_with(call: Any) -> Any:
    async def code() -> grpc.StatusCode:
        return await asyncio.wait_for(call.code(), 5)

    return code()


def test_the_stream_opens_a_session_then_the_player_s_own_view_with_heartbeats_while_open() -> None:
    monitor = FakeMonitor()
    dealer = FakeDealer(watches=[[SNAPSHOT, HOLE]])

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await Watching(stub, "ann").opened()
        assert "127.0.0.1" not in ann.session_id  # opaque: not the monitor's session id (the peer)
        kinds = [(await ann.next()).table.WhichOneof("event") for _ in range(2)]  # type: ignore[union-attr]
        assert kinds == ["snapshot", "cards_dealt"]
        # the dealer redacts for the viewer it is given: the token's player, never anyone else
        assert [(w.table_id, w.viewer_player_id) for w in dealer.watch_requests] == [("t1", "ann")]
        while len(monitor.beats) < 2:
            await asyncio.sleep(0.05)
        assert {b.player_id for b in monitor.beats} == {"ann"}
        assert ann.session_id not in {b.session_id for b in monitor.beats}
        ann.call.cancel()
        await asyncio.sleep(0.3)
        count = len(monitor.beats)
        await asyncio.sleep(0.3)
        assert len(monitor.beats) == count  # closing the stream stops the beats
        err = await failure(command(stub, "ann", ann.session_id, "p", ping=g.Ping()))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.FAILED_PRECONDITION, "SESSION_NOT_OPEN")

    run(backends(dealer=dealer, monitor=monitor), scenario, dataclasses.replace(config(), heartbeat_seconds=0.05))


def test_commands_act_for_the_token_s_player_only_and_a_refusal_changes_nothing() -> None:
    out_of_turn = errors.from_illegal(IllegalAction(Reason.OUT_OF_TURN, "not your turn: seat 2 (bob) is to act"))
    dealer = FakeDealer(
        answers={
            "Act": [
                d.ActResponse(hand_number=3, action=d.Action(seat=1, action=d.ACTION_TYPE_CALL, to=2)),
                rpc_error(grpc.StatusCode.FAILED_PRECONDITION, error=out_of_turn),
            ],
            "SitOut": [d.SeatResponse()],
            "ComeBack": [d.SeatResponse()],
            "AddChips": [d.SeatResponse(queued=True)],
        },
        watches=[[SNAPSHOT]],
    )

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await Watching(stub, "ann").opened()
        done = await ann.command("a1", act=g.PlayAction(action=d.ACTION_TYPE_CALL, hand_number=3, player_id="ann"))
        assert done.WhichOneof("kind") == "result" and done.result.request_id == "a1"
        assert done.result.act.hand_number == 3
        method, request = dealer.calls[-1]
        assert (method, request.table_id, request.player_id, request.request_id) == ("Act", "t1", "ann", "a1")
        err = await failure(ann.command("a2", act=g.PlayAction(action=d.ACTION_TYPE_RAISE, amount=10)))
        assert (err.code(), errors.reason_of(err), err.details()) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "OUT_OF_TURN",
            "not your turn: seat 2 (bob) is to act",
        )
        for kind in (g.SeatCommand.KIND_SIT_OUT, g.SeatCommand.KIND_COME_BACK, g.SeatCommand.KIND_POST_NOW):
            answered = await ann.command(f"s{kind}", seat=g.SeatCommand(kind=kind))
            assert answered.result.request_id == f"s{kind}"
        added = await ann.command("add", seat=g.SeatCommand(kind=g.SeatCommand.KIND_ADD_CHIPS, amount=300))
        assert added.result.queued
        assert [(m, r.player_id) for m, r in dealer.calls[2:]] == [
            ("SitOut", "ann"),
            ("ComeBack", "ann"),
            ("ComeBack", "ann"),
            ("AddChips", "ann"),
        ]
        assert dealer.calls[4][1].post_now and dealer.calls[5][1].amount == 300
        pong = await ann.command("p", ping=g.Ping())
        assert pong.WhichOneof("kind") == "pong" and pong.pong.server_time.seconds > 0

        sent = len(dealer.calls)
        err = await failure(ann.command("x", act=g.PlayAction(action=d.ACTION_TYPE_FOLD, player_id="bob")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.PERMISSION_DENIED, "OTHER_PLAYER")
        # bob naming ann's session: not his, so not open for him
        err = await failure(command(stub, "bob", ann.session_id, "x", act=g.PlayAction(action=d.ACTION_TYPE_FOLD)))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.FAILED_PRECONDITION, "SESSION_NOT_OPEN")
        err = await failure(ann.command("x", session_id="", act=g.PlayAction(action=d.ACTION_TYPE_FOLD)))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in errors.violations_of(err)] == ["session_id"]
        err = await failure(ann.command("x"))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.INVALID_ARGUMENT, "EMPTY_MESSAGE")
        err = await failure(ann.command("x", seat=g.SeatCommand()))
        assert (err.code(), err.details()) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "seat.kind: SIT_OUT, COME_BACK, ADD_CHIPS or POST_NOW",
        )
        assert [v.field for v in errors.violations_of(err)] == ["seat.kind"]
        err = await failure(stub.TableCommand(g.TableCommandRequest(session_id=ann.session_id, ping=g.Ping())))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
        assert len(dealer.calls) == sent  # no refusal reached the dealer
        assert (await ann.command("p2", ping=g.Ping())).WhichOneof("kind") == "pong"  # the session is still open
        ann.call.cancel()

    run(backends(dealer=dealer), scenario)


def test_a_bad_table_id_is_refused_before_anything_is_opened_or_taken_over() -> None:
    missing = rpc_error(grpc.StatusCode.NOT_FOUND, error=errors.not_found("no table 'tx'"))
    dealer = FakeDealer(watches=[[SNAPSHOT], missing])

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await Watching(stub, "ann").opened()
        for table_id, reason in (("", "INVALID_ARGUMENT"), ("no such table!", "INVALID_ID")):
            bad = Watching(stub, "ann", table_id)
            err = await failure(bad.next())
            assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
            assert [v.field for v in errors.violations_of(err)] == ["table_id"]
        assert len(dealer.watch_requests) == 1
        assert (await ann.command("p", ping=g.Ping())).WhichOneof("kind") == "pong"  # not taken over
        # a table the dealer does not have: the stream ends with the dealer's status
        gone = Watching(stub, "bob", "tx")
        await gone.opened()
        err = await failure(gone.next())
        assert (err.code(), err.details()) == (grpc.StatusCode.NOT_FOUND, "no table 'tx'")
        ann.call.cancel()

    run(backends(dealer=dealer), scenario)


def test_a_second_session_takes_over_and_the_first_one_s_commands_are_refused() -> None:
    """As a second Play stream (issue 13 bug 4: never two sessions of one player getting the turn),
    whichever front opens it."""
    dealer = FakeDealer(answers={"Act": [d.ActResponse(hand_number=1)]}, watches=[[SNAPSHOT]])

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        first = await Watching(stub, "ann").opened()
        await first.next()
        second = await Watching(stub, "ann").opened()
        told = await first.next()
        assert (
            told is not None and told.error.reason == "SESSION_TAKEN_OVER" and "another session" in told.error.message
        )
        assert await first.next() is None and await _stream_ends_with(first.call) == grpc.StatusCode.OK
        err = await failure(first.command("a", act=g.PlayAction(action=d.ACTION_TYPE_CHECK)))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.FAILED_PRECONDITION, "SESSION_NOT_OPEN")
        assert [m for m, _ in dealer.calls] == []
        assert (await second.command("a", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))).result.request_id == "a"

        requests: asyncio.Queue[g.PlayRequest | None] = asyncio.Queue()

        async def incoming() -> AsyncIterator[g.PlayRequest]:
            while (request := await requests.get()) is not None:
                yield request

        play = stub.Play(incoming(), metadata=auth("ann"))  # a Play stream takes over from the watch
        await requests.put(g.PlayRequest(request_id="p", ping=g.Ping()))
        assert (await play.read()).WhichOneof("kind") == "pong"
        await second.next()  # its snapshot
        told = await second.next()
        assert told is not None and told.error.reason == "SESSION_TAKEN_OVER"
        err = await failure(second.command("b", act=g.PlayAction(action=d.ACTION_TYPE_CHECK)))
        assert errors.reason_of(err) == "SESSION_NOT_OPEN"
        third = await Watching(stub, "ann").opened()  # and a watch takes over from Play
        told = await play.read()
        assert told.error.reason == "SESSION_TAKEN_OVER"
        assert await play.read() is grpc.aio.EOF
        assert (await third.command("p", ping=g.Ping())).WhichOneof("kind") == "pong"
        await requests.put(None)
        third.call.cancel()

    run(backends(dealer=dealer), scenario)


def test_commands_share_the_player_s_rate_limit_and_watches_the_stream_cap() -> None:
    dealer = FakeDealer(answers={"Act": [d.ActResponse(hand_number=1)]}, watches=[[SNAPSHOT]])
    cfg = dataclasses.replace(config(), player_rate=0.001, player_burst=4, max_play_streams=1)

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await Watching(stub, "ann").opened()  # one token: the stream's opening
        over = Watching(stub, "ann")  # beyond the cap: refused before it takes over
        err = await failure(over.next())
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "PLAY_STREAM_LIMIT")
        codes = []
        for i in range(4):
            try:
                await ann.command(f"a{i}", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))
                codes.append("OK")
            except grpc.aio.AioRpcError as failed:
                codes.append(errors.reason_of(failed))
        # 4 tokens: the refused stream took one before its cap was checked, as a Play stream's opening
        assert codes == ["OK", "OK", "PLAYER_RATE_LIMITED", "PLAYER_RATE_LIMITED"]
        assert [m for m, _ in dealer.calls] == ["Act", "Act"]  # the refused ones never reached the dealer
        ann.call.cancel()

    run(backends(dealer=dealer), scenario, cfg)


def test_the_watch_is_reopened_while_the_dealer_restarts_and_the_stream_ends_with_the_table() -> None:
    down = rpc_error(grpc.StatusCode.UNAVAILABLE, "connection refused")
    dealer = FakeDealer(watches=[down, [SNAPSHOT, down], [SNAPSHOT, CLOSED]])

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await Watching(stub, "ann").opened()
        seen = [await ann.next() for _ in range(3)]
        assert [e.table.WhichOneof("event") for e in seen if e] == ["snapshot", "snapshot", "table_closed"]
        assert await ann.next() is None and await _stream_ends_with(ann.call) == grpc.StatusCode.OK
        assert len(dealer.watch_requests) == 3

    run(backends(dealer=dealer), scenario)


@dataclasses.dataclass
class SlowDealer(FakeDealer):
    """Act waits for ``gate``; records when it started and when it finished."""

    gate: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    started: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    finished: list[str] = dataclasses.field(default_factory=list)

    async def Act(self, request: d.ActRequest, **_: Any) -> d.ActResponse:
        self.calls.append(("Act", request))
        self.started.set()
        await self.gate.wait()
        self.finished.append(request.request_id)
        return d.ActResponse(hand_number=1)


def test_a_caller_cancelling_mid_command_leaves_the_request_carried_out_and_the_session_working() -> None:
    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await Watching(stub, "ann").opened()
        call = ann.command("a1", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))
        await asyncio.wait_for(dealer.started.wait(), 5)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        queued = ann.command("p", ping=g.Ping())  # waits for the one in flight: one request at a time
        await asyncio.sleep(0.2)
        assert not queued.done() and dealer.finished == []
        dealer.gate.set()
        assert (await queued).WhichOneof("kind") == "pong"
        assert dealer.finished == ["a1"]  # the dealer got the whole request, not half of one
        again = await ann.command("a1", act=g.PlayAction(action=d.ACTION_TYPE_CHECK))  # the retry, same id
        assert again.result.request_id == "a1" and dealer.calls[-1][1].request_id == "a1"
        assert (await ann.next()).table.WhichOneof("event") == "snapshot"  # type: ignore[union-attr]
        ann.call.cancel()

    dealer = SlowDealer(watches=[[SNAPSHOT]])
    run(backends(dealer=dealer), scenario)


def test_a_tournament_table_is_watched_and_played_with_the_player_s_own_identity() -> None:
    """Issue 15: players act on a tournament's tables on the dealer through the gateway, by the
    table id of :func:`cardroom.core.ids.tournament_table_id`, as themselves."""
    table_id = ids.tournament_table_id("sng-15", 2)
    snapshot = d.TableEvent(table_id=table_id, snapshot=d.TableState(info=d.TableInfo(table_id=table_id)))
    dealer = FakeDealer(
        answers={"Act": [d.ActResponse(hand_number=1, action=d.Action(seat=2, action=d.ACTION_TYPE_FOLD))]},
        watches=[[snapshot]],
    )

    async def scenario(stub: g_grpc.GatewayStub, _: Any) -> None:
        ann = await Watching(stub, "ann", table_id).opened()
        first = await ann.next()
        assert first is not None and first.table.table_id == table_id
        done = await ann.command("f1", act=g.PlayAction(action=d.ACTION_TYPE_FOLD, hand_number=1))
        assert done.WhichOneof("kind") == "result"
        method, request = dealer.calls[-1]
        assert (method, request.table_id, request.player_id) == ("Act", table_id, "ann")
        assert [(w.table_id, w.viewer_player_id) for w in dealer.watch_requests] == [(table_id, "ann")]

    run(backends(dealer=dealer), scenario)
