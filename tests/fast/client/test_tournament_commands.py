"""Fast tier: the tournament commands of ``cardroom play`` (issue 15: "`cardroom play` can list
tournaments, register ..."): parsing, and the terminal's tournament lobby through a real
:class:`GatewayClient` and the gateway's servicer in-process, over an in-memory tournament service."""

from __future__ import annotations

import asyncio
import io

import grpc

from cardroom.client.connection import GatewayClient
from cardroom.client.terminal import Terminal, parse_command
from cardroom.client.tournaments import lobby_line, page_lines, parse, status_line
from cardroom.runtime import errors
from cardroom.v1 import gateway_pb2 as g, gateway_pb2_grpc as g_grpc, tournament_pb2 as t
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService
from gateway.tournaments import lobby_line as gateway_line
from tests.fast.gateway.fakes import FakeTournament, FakeWallet, backends, rpc_error
from tests.fast.gateway.test_gateway_service import config
from tests.fast.gateway.test_tournaments import MTT, SNG
from tests.fast.inproc import serving


def test_tournament_commands_parse_and_keep_the_id_s_case() -> None:
    assert parse("tournaments") == "tournaments"
    assert parse("Tournaments RUNNING") == "tournaments running"
    assert parse("register Sng-1") == "register Sng-1"
    assert parse_command("unregister Sng-1") == "unregister Sng-1"
    assert parse_command("mystatus 2") == "mystatus 2"
    assert parse_command("tournament mtt-1") == "tournament mtt-1"
    assert str(parse("register")).startswith("? register needs one tournament")
    assert str(parse("register a b")).startswith("? register needs one tournament")
    assert str(parse("tournaments soon")).startswith("? tournaments:")
    assert parse("fold") is None and parse("") is None
    assert isinstance(parse_command("fold"), g.PlayAction)


def test_lines_for_a_person() -> None:
    assert lobby_line(2, gateway_line(MTT)) == (
        "  2. mtt-1                NT    MTT       running      buy-in 500+50  entrants 30  pool 20000"
        " (guaranteed 20000)  level 3 blinds 50/100 ante 10  12 left"
    )
    assert lobby_line(1, gateway_line(SNG)).endswith("blinds 10/20  Sit & Go: starts with 6")
    page = page_lines(MTT)
    assert page[0] == "mtt-1: Sunday (NT, MTT)  running"
    assert "  level 3: 50/100 ante 10  next level in 42 s" in page
    status = t.TournamentPlayerStatus(tournament_id="mtt-1", status="active", table=2, seat=5, chips=3100)
    assert status_line(status) == "mtt-1: active, table 2 seat 5, 3100 chips"
    out = t.TournamentPlayerStatus(tournament_id="mtt-1", status="eliminated", place=4, prize=2500)
    assert status_line(out) == "mtt-1: eliminated, finished 4, won 2500"


def said_in_the_lobby(tournaments: FakeTournament, typed: list[str]) -> list[str]:
    """What ``cardroom play --tournaments`` says to ann typing ``typed`` (the prompts left out), through a real
    :class:`GatewayClient` and the gateway's servicer over ``tournaments``."""
    lines = iter(typed)
    out = io.StringIO()
    cfg = config()

    async def main() -> int:
        back = backends(wallet=FakeWallet(), tournament=tournaments)

        def add(servicer: GatewayService, server: grpc.aio.Server) -> None:
            g_grpc.add_GatewayServicer_to_server(servicer, server)
            g_grpc.add_GatewayOperatorServicer_to_server(GatewayOperatorService("op", back), server)

        async with serving(add, GatewayService(cfg, back)) as address:
            client = GatewayClient(address)
            try:
                term = Terminal(client, out=out, readline=lambda: next(lines, ""))
                return await asyncio.wait_for(term.run("ann", None, None, tournament_lobby=True), 20)
            finally:
                await client.close()

    assert asyncio.run(main()) == 0
    return [line for line in out.getvalue().splitlines() if line != "tournaments>"]


def test_the_tournament_lobby_of_cardroom_play_lists_registers_shows_status_and_unregisters() -> None:
    registered: set[str] = set()

    def register(r: t.TournamentEntryRequest) -> t.TournamentEntryResponse:
        registered.add(r.player_id)
        return t.TournamentEntryResponse(tournament_id=r.tournament_id, player_id=r.player_id, paid=1100)

    def unregister(r: t.TournamentEntryRequest) -> t.TournamentEntryResponse:
        registered.discard(r.player_id)
        return t.TournamentEntryResponse(tournament_id=r.tournament_id, player_id=r.player_id, paid=1100)

    def status(r: t.GetTournamentPlayerRequest) -> t.TournamentPlayerStatus | grpc.aio.AioRpcError:
        if r.player_id in registered:
            return t.TournamentPlayerStatus(tournament_id=r.tournament_id, player_id=r.player_id, status="registered")
        absent = errors.not_found(f"player_id: {r.player_id} is not registered in {r.tournament_id}", "NOT_REGISTERED")
        return rpc_error(grpc.StatusCode.NOT_FOUND, error=absent)

    tournaments = FakeTournament(
        answers={
            "ListTournaments": [t.ListTournamentsResponse(tournaments=[SNG])],
            "GetTournament": [SNG],
            "Register": [register],
            "Unregister": [unregister],
            "GetPlayerStatus": [status],
        }
    )
    said = said_in_the_lobby(
        tournaments,
        ["tournament 1", "register 1", "mystatus sng-1", "unregister 1", "mystatus 1", "register", "fold", "quit"],
    )
    assert said[:2] == ["logged in as ann", "balance: cash 0, play 500"]
    assert said[2:4] == ["tournaments:", lobby_line(1, gateway_line(SNG))]
    assert said[4].startswith("commands: tournaments")
    assert said[5 : 5 + len(page_lines(SNG))] == page_lines(SNG)
    rest = said[5 + len(page_lines(SNG)) :]
    assert rest == [
        "registered in sng-1: 1100 (buy-in and fee) from your cash account",
        "'play sng-1' takes you to your table (it waits for the start)",
        "sng-1: registered",
        "unregistered from sng-1: 1100 back to your cash account",
        "mystatus: not registered: player_id: ann is not registered in sng-1",
        "register needs one tournament (its id or its number in the list), e.g. 'register 1'",
        rest[6],
    ]
    assert rest[6].startswith("not at a table here: commands: tournaments")
    entries = [(m, r.player_id, r.request_id) for m, r in tournaments.calls if m in ("Register", "Unregister")]
    assert [(m, p) for m, p, _ in entries] == [("Register", "ann"), ("Unregister", "ann")]
    # each command its own request id, scoped to the player by the gateway
    assert all(rid.startswith("ann:ann-") for _, _, rid in entries) and entries[0][2] != entries[1][2]


def over(tid: str) -> t.TournamentInfo:
    return t.TournamentInfo(tournament_id=tid, status=t.TOURNAMENT_STATUS_FINISHED, format=t.TOURNAMENT_FORMAT_SNG)


def test_the_tournaments_over_are_listed_a_page_at_a_time_numbered_on() -> None:
    """The tournament service lists the tournaments over in pages (100 by id unless asked): ``tournaments more``
    asks for the next with the token of the page before, its lines numbered on, and a number names any of them."""
    first = t.ListTournamentsResponse(tournaments=[over("f-1"), over("f-2")], next_page_token="f-2")
    last = t.ListTournamentsResponse(tournaments=[over("f-3")])
    again = t.ListTournamentsResponse(tournaments=[SNG])
    tournaments = FakeTournament(
        answers={"ListTournaments": [again, first, last, again], "GetTournament": [lambda r: over(r.tournament_id)]}
    )
    said = said_in_the_lobby(
        tournaments,
        ["tournaments finished", "tournaments more", "tournament 3", "tournaments more", "tournaments", "quit"],
    )
    lines = [gateway_line(over(tid)) for tid in ("f-1", "f-2", "f-3")]
    start = said.index("tournaments:", 3)  # after the lobby's first list and its help
    assert said[start : start + 5] == [
        "tournaments:",
        lobby_line(1, lines[0]),
        lobby_line(2, lines[1]),
        "  ... more: 'tournaments more'",
        lobby_line(3, lines[2]),  # the next page, numbered on
    ]
    assert said[start + 5] == page_lines(over("f-3"))[0]  # "tournament 3": the next page's first
    assert said[start + 5 + len(page_lines(over("f-3")))] == (
        "no more tournaments: 'tournaments' (or with a status) lists them again"
    )
    assert said[-2:] == ["tournaments:", lobby_line(1, gateway_line(SNG))]  # a new list numbers from 1
    asked = [(r.status, r.page_token) for m, r in tournaments.calls if m == "ListTournaments"]
    finished = t.TOURNAMENT_STATUS_FINISHED
    assert asked == [(0, ""), (finished, ""), (finished, "f-2"), (0, "")]
    assert str(parse("tournaments more")) == "tournaments more" and str(parse("tournaments more x")).startswith("?")
