"""Fast tier: the gateway's tournament calls (issue 15: "The gateway exposes the tournament lobby,
registration and the player's tournament tables to clients") against an in-memory tournament
service: the lobby's lines, entries for the token's own player only with request ids scoped to him,
bad input refused before any backend call, the tournament service's refusals passed on, the same
per-player rate limit as every player call, and tournaments off without ``TOURNAMENT_ADDR``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc
import pytest

from cardroom.runtime import errors
from cardroom.v1 import gateway_pb2 as g, gateway_pb2_grpc as g_grpc, tournament_pb2 as t
from gateway.clients import Backends
from gateway.config import GatewayConfig
from gateway.tournaments import lobby_line
from tests.fast.gateway.fakes import FakeTournament, backends, rpc_error
from tests.fast.gateway.test_gateway_service import auth, config, failure, run

SNG = t.TournamentInfo(
    tournament_id="sng-1",
    name="Six-max Sit & Go",
    format=t.TOURNAMENT_FORMAT_SNG,
    variant="PO",
    status=t.TOURNAMENT_STATUS_REGISTRATION,
    buy_in=1000,
    fee=100,
    entrants=2,
    remaining=2,
    prize_pool=2000,
    max_entrants=6,
    blinds=t.TournamentLevel(small_blind=10, big_blind=20, seconds=300),
)
MTT = t.TournamentInfo(
    tournament_id="mtt-1",
    name="Sunday",
    format=t.TOURNAMENT_FORMAT_MTT,
    variant="NT",
    status=t.TOURNAMENT_STATUS_RUNNING,
    buy_in=500,
    fee=50,
    entrants=30,
    remaining=12,
    prize_pool=20000,
    guarantee=20000,
    level=3,
    blinds=t.TournamentLevel(small_blind=50, big_blind=100, ante=10, seconds=600),
    seconds_to_next_level=42.5,
    starts_at=1_900_000_000.25,
)


def entered(request: t.TournamentEntryRequest) -> t.TournamentEntryResponse:
    """What the tournament service answers an entry: the request's player and tournament."""
    return t.TournamentEntryResponse(
        tournament_id=request.tournament_id,
        player_id=request.player_id,
        paid=1100,
        status=t.TournamentPlayerStatus(tournament_id=request.tournament_id, player_id=request.player_id),
    )


def test_the_lobby_lists_every_tournament_with_buy_in_fee_entrants_pool_level_and_start() -> None:
    tournaments = FakeTournament(answers={"ListTournaments": [t.ListTournamentsResponse(tournaments=[SNG, MTT])]})

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        reply = await stub.TournamentLobby(
            t.ListTournamentsRequest(status=t.TOURNAMENT_STATUS_RUNNING), metadata=auth("ann")
        )
        assert tournaments.calls == [("ListTournaments", t.ListTournamentsRequest(status=t.TOURNAMENT_STATUS_RUNNING))]
        mtt, sng = reply.tournaments  # by id
        assert (mtt.tournament_id, mtt.variant, mtt.status, mtt.buy_in, mtt.fee) == (
            "mtt-1",
            "NT",
            t.TOURNAMENT_STATUS_RUNNING,
            500,
            50,
        )
        assert (mtt.entrants, mtt.remaining, mtt.prize_pool, mtt.guarantee, mtt.level) == (30, 12, 20000, 20000, 3)
        assert (mtt.blinds.small_blind, mtt.blinds.big_blind, mtt.blinds.ante, mtt.seconds_to_next_level) == (
            50,
            100,
            10,
            42.5,
        )
        assert mtt.HasField("starts_at") and mtt.starts_at.ToNanoseconds() == 1_900_000_000_250_000_000
        assert mtt.sit_and_go_size == 0
        # a Sit & Go: no start time, the number that starts it
        assert sng.tournament_id == "sng-1" and not sng.HasField("starts_at") and sng.sit_and_go_size == 6
        assert (sng.format, sng.entrants, sng.max_entrants) == (t.TOURNAMENT_FORMAT_SNG, 2, 6)
        # no token: refused before the tournament service is asked
        err = await failure(stub.TournamentLobby(t.ListTournamentsRequest()))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
        err = await failure(stub.TournamentLobby(t.ListTournamentsRequest(status=99), metadata=auth("ann")))  # type: ignore[arg-type]
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in errors.violations_of(err)] == ["status"]
        assert len(tournaments.calls) == 1

    run(backends(tournament=tournaments), scenario)


def test_the_tournaments_over_are_asked_for_and_answered_in_pages() -> None:
    """The history of tournaments over grows with every one run: the tournament service answers it in pages
    (its listing.py); the gateway passes the page asked for and hands back the next one's token."""
    page = t.ListTournamentsResponse(tournaments=[MTT, SNG], next_page_token="sng-1")
    tournaments = FakeTournament(answers={"ListTournaments": [page]})

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        asked = t.ListTournamentsRequest(status=t.TOURNAMENT_STATUS_FINISHED, page_size=2, page_token="a-0")
        reply = await stub.TournamentLobby(asked, metadata=auth("ann"))
        assert tournaments.calls == [("ListTournaments", asked)]
        assert [x.tournament_id for x in reply.tournaments] == ["mtt-1", "sng-1"] and reply.next_page_token == "sng-1"

    run(backends(tournament=tournaments), scenario)


def test_lobby_line_keeps_the_page_s_figures() -> None:
    line = lobby_line(MTT)
    assert (line.name, line.format, line.level, line.blinds) == ("Sunday", MTT.format, 3, MTT.blinds)


def test_entries_are_the_token_s_player_s_with_his_own_request_ids() -> None:
    tournaments = FakeTournament(
        answers={
            "Register": [entered],
            "Unregister": [entered],
            "AddOn": [entered],
            "Rebuy": [entered],
            "GetPlayerStatus": [t.TournamentPlayerStatus(tournament_id="sng-1", player_id="ann", chips=1500)],
            "GetTournament": [SNG],
        }
    )

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        entry = g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="r1")
        reply = await stub.RegisterTournament(entry, metadata=auth("ann"))
        assert (reply.player_id, reply.paid) == ("ann", 1100)
        await stub.RegisterTournament(entry, metadata=auth("bob"))
        await stub.UnregisterTournament(
            g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="u1", player_id="ann"), metadata=auth("ann")
        )
        await stub.TournamentAddOn(
            g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="a"), metadata=auth("ann")
        )
        await stub.TournamentRebuy(
            g.MyTournamentRebuyRequest(tournament_id="sng-1", request_id="b", double=True), metadata=auth("ann")
        )
        # the same request id from two players is two requests: each scoped to its player
        assert [(m, r.tournament_id, r.player_id, r.request_id) for m, r in tournaments.calls] == [
            ("Register", "sng-1", "ann", "ann:r1"),
            ("Register", "sng-1", "bob", "bob:r1"),
            ("Unregister", "sng-1", "ann", "ann:u1"),
            ("AddOn", "sng-1", "ann", "ann:a"),
            ("Rebuy", "sng-1", "ann", "ann:b"),
        ]
        assert tournaments.calls[-1][1].double
        status = await stub.MyTournamentStatus(g.MyTournamentStatusRequest(tournament_id="sng-1"), metadata=auth("ann"))
        assert status.chips == 1500
        assert tournaments.calls[-1] == (
            "GetPlayerStatus",
            t.GetTournamentPlayerRequest(tournament_id="sng-1", player_id="ann"),
        )
        page = await stub.GetTournament(t.GetTournamentRequest(tournament_id="sng-1"), metadata=auth("ann"))
        assert page == SNG
        calls = len(tournaments.calls)
        # another player's entry or status: refused at the gateway, never forwarded
        for call in (
            stub.RegisterTournament(
                g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="x", player_id="ann"), metadata=auth("bob")
            ),
            stub.UnregisterTournament(
                g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="r1", player_id="ann"),
                metadata=auth("bob"),
            ),
            stub.TournamentRebuy(
                g.MyTournamentRebuyRequest(tournament_id="sng-1", request_id="x", player_id="ann"), metadata=auth("bob")
            ),
            stub.TournamentAddOn(
                g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="x", player_id="ann"), metadata=auth("bob")
            ),
            stub.MyTournamentStatus(
                g.MyTournamentStatusRequest(tournament_id="sng-1", player_id="ann"), metadata=auth("bob")
            ),
        ):
            err = await failure(call)
            assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.PERMISSION_DENIED, "OTHER_PLAYER")
        assert len(tournaments.calls) == calls

    run(backends(tournament=tournaments), scenario)


@pytest.mark.parametrize(
    ("tournament_id", "request_id", "field", "reason"),
    [
        ("", "r1", "tournament_id", "INVALID_ID"),
        ("-bad", "r1", "tournament_id", "INVALID_ID"),
        ("sng-1", "", "request_id", "INVALID_ARGUMENT"),
        ("sng-1", "x" * 65, "request_id", "INVALID_ARGUMENT"),
        ("sng-1", "two words", "request_id", "INVALID_ARGUMENT"),
    ],
)
def test_bad_input_is_invalid_argument_naming_the_field_and_reaches_no_backend(
    tournament_id: str, request_id: str, field: str, reason: str
) -> None:
    tournaments = FakeTournament(answers={"Register": [entered], "Unregister": [entered], "AddOn": [entered]})

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        entry = g.MyTournamentEntryRequest(tournament_id=tournament_id, request_id=request_id)
        rebuy = g.MyTournamentRebuyRequest(tournament_id=tournament_id, request_id=request_id)
        calls = [
            stub.RegisterTournament(entry, metadata=auth("ann")),
            stub.UnregisterTournament(entry, metadata=auth("ann")),
            stub.TournamentAddOn(entry, metadata=auth("ann")),
            stub.TournamentRebuy(rebuy, metadata=auth("ann")),
        ]
        if field == "tournament_id":
            calls.append(stub.GetTournament(t.GetTournamentRequest(tournament_id=tournament_id), metadata=auth("ann")))
            calls.append(
                stub.MyTournamentStatus(g.MyTournamentStatusRequest(tournament_id=tournament_id), metadata=auth("ann"))
            )
        for call in calls:
            err = await failure(call)
            assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
            assert [v.field for v in errors.violations_of(err)] == [field]
            assert err.details().startswith(f"{field}: ")
        assert tournaments.calls == []

    run(backends(tournament=tournaments), scenario)


def test_the_tournament_service_s_refusals_come_back_with_their_status_and_reason() -> None:
    unknown = errors.not_found("tournament_id: no tournament 'nope'", "TOURNAMENT_NOT_FOUND")
    broke = errors.precondition("the wallet refused the buy-in: insufficient funds", "INSUFFICIENT_FUNDS")
    twice = errors.exists("player ann is already registered", "ALREADY_REGISTERED")
    absent = errors.not_found("player_id: ann is not registered in sng-1", "NOT_REGISTERED")
    tournaments = FakeTournament(
        answers={
            "GetTournament": [rpc_error(grpc.StatusCode.NOT_FOUND, error=unknown)],
            "Register": [
                rpc_error(grpc.StatusCode.FAILED_PRECONDITION, error=broke),
                rpc_error(grpc.StatusCode.ALREADY_EXISTS, error=twice),
            ],
            "GetPlayerStatus": [rpc_error(grpc.StatusCode.NOT_FOUND, error=absent)],
            "ListTournaments": [rpc_error(grpc.StatusCode.UNAVAILABLE, "connection refused")],
        }
    )

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        got = []
        calls = (  # one after the other: the two registrations in this order
            lambda: stub.GetTournament(t.GetTournamentRequest(tournament_id="nope"), metadata=auth("ann")),
            lambda: stub.RegisterTournament(
                g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="1"), metadata=auth("ann")
            ),
            lambda: stub.RegisterTournament(
                g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="2"), metadata=auth("ann")
            ),
            lambda: stub.MyTournamentStatus(g.MyTournamentStatusRequest(tournament_id="sng-1"), metadata=auth("ann")),
            lambda: stub.TournamentLobby(t.ListTournamentsRequest(), metadata=auth("ann")),
        )
        for call in calls:
            err = await failure(call())
            got.append((err.code(), errors.reason_of(err), err.details()))
        assert got == [
            (grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND", "tournament_id: no tournament 'nope'"),
            (
                grpc.StatusCode.FAILED_PRECONDITION,
                "INSUFFICIENT_FUNDS",
                "the wallet refused the buy-in: insufficient funds",
            ),
            (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_REGISTERED", "player ann is already registered"),
            (grpc.StatusCode.NOT_FOUND, "NOT_REGISTERED", "player_id: ann is not registered in sng-1"),
            (grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "connection refused"),
        ]

    run(backends(tournament=tournaments), scenario)


def test_tournament_calls_share_the_player_s_rate_limit() -> None:
    tournaments = FakeTournament(answers={"ListTournaments": [t.ListTournamentsResponse()]})
    cfg = dataclasses.replace(config(), player_rate=0.001, player_burst=2)

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        await stub.TournamentLobby(t.ListTournamentsRequest(), metadata=auth("ann"))
        await stub.MyBalance(g.MyBalanceRequest(), metadata=auth("ann"))
        err = await failure(stub.TournamentLobby(t.ListTournamentsRequest(), metadata=auth("ann")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "PLAYER_RATE_LIMITED")
        err = await failure(
            stub.RegisterTournament(g.MyTournamentEntryRequest(tournament_id="s", request_id="1"), metadata=auth("ann"))
        )
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        await stub.TournamentLobby(t.ListTournamentsRequest(), metadata=auth("bob"))  # his own budget
        assert len(tournaments.calls) == 2

    run(backends(tournament=tournaments), scenario, cfg)


def test_without_a_tournament_service_every_tournament_call_says_tournaments_are_off() -> None:
    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        entry = g.MyTournamentEntryRequest(tournament_id="sng-1", request_id="r1")
        for call in (
            stub.TournamentLobby(t.ListTournamentsRequest(), metadata=auth("ann")),
            stub.GetTournament(t.GetTournamentRequest(tournament_id="sng-1"), metadata=auth("ann")),
            stub.RegisterTournament(entry, metadata=auth("ann")),
            stub.UnregisterTournament(entry, metadata=auth("ann")),
            stub.TournamentAddOn(entry, metadata=auth("ann")),
            stub.TournamentRebuy(g.MyTournamentRebuyRequest(tournament_id="sng-1"), metadata=auth("ann")),
            stub.MyTournamentStatus(g.MyTournamentStatusRequest(), metadata=auth("ann")),
        ):
            err = await failure(call)
            assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENTS_OFF")
            assert "tournaments are not enabled here" in err.details()
        # still a logged-in call: no token, no answer about tournaments
        err = await failure(stub.TournamentLobby(t.ListTournamentsRequest()))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED

    run(backends(), scenario)


def test_tournament_addr_is_an_optional_peer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GATEWAY_SECRET", "s")
    monkeypatch.setenv("DATA_DIR", str(tmp_path))
    monkeypatch.delenv("TOURNAMENT_ADDR", raising=False)
    assert GatewayConfig.from_env().tournament_addr is None  # unset: off
    for off in ("", "off", " none "):
        monkeypatch.setenv("TOURNAMENT_ADDR", off)
        assert GatewayConfig.from_env().tournament_addr is None
    monkeypatch.setenv("TOURNAMENT_ADDR", "tournament:20056")
    assert GatewayConfig.from_env().tournament_addr == "tournament:20056"


def test_backends_connect_a_tournament_stub_only_with_an_address() -> None:
    import asyncio

    async def main() -> None:
        off = Backends.connect("127.0.0.1:1", "127.0.0.1:2", None)
        on = Backends.connect("127.0.0.1:1", "127.0.0.1:2", None, "127.0.0.1:3")
        try:
            assert off.tournament is None and len(off.channels) == 2
            assert on.tournament is not None and len(on.channels) == 3
        finally:
            await off.close()
            await on.close()

    asyncio.run(main())
