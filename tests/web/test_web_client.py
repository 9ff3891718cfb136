"""The web client end to end in a real browser (issue 18, first slice): Debian's Chromium driven by
playwright-core (web/e2e/lobby.mjs) through Envoy's gRPC-Web proxy to the real gateway, dealer and
wallet on a real Kafka: sign up, log out, a wrong password refused, log in, the lobby showing the
tables made beforehand (names, stakes, seats) and the balance the wallet holds; the tournaments in
the lobby (status, entrants, prize pool, buy-in + fee), one's details, a registration and an
unregistration the tournament service carried out. Screenshots of each step go to
var/test-artifacts/web/.

Everything it needs is installed by the test itself: the web build (scripts/build-web.sh: npm ci,
buf generate, vite build) and Chromium (scripts/install-chromium.sh, Debian's package)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import grpc
import pytest

from cardroom.core import ids
from cardroom.v1 import (
    common_pb2,
    dealer_pb2 as d,
    gateway_pb2 as g,
    gateway_pb2_grpc,
    tournament_pb2 as t,
    tournament_pb2_grpc,
    wallet_pb2 as w,
    wallet_pb2_grpc,
)
from tests.e2e.stack import OPERATOR_TOKEN, PLAY_GRANT, Stack
from tests.web.proxy import ROOT, EnvoyProcess

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

ARTIFACTS = ROOT / "var" / "test-artifacts" / "web"
OPERATOR = (("authorization", f"Operator {OPERATOR_TOKEN}"),)


def create_tables(stack: Stack) -> dict[str, g.LobbyTable]:
    """Two tables of two games through the gateway's operator API, one with a player seated."""
    run = uuid.uuid4().hex[:6]
    configs = {
        f"web-nt-{run}": d.TableConfig(
            name=f"Web Hold'em {run}",
            variant="NT",
            currency=common_pb2.CURRENCY_PLAY,
            seats=6,
            stakes=d.Stakes(small_blind=5, big_blind=10),
        ),
        f"web-stud-{run}": d.TableConfig(
            name=f"Web Stud {run}",
            variant="F7S",
            currency=common_pb2.CURRENCY_PLAY,
            seats=8,
            stakes=d.Stakes(small_bet=20, big_bet=40),
        ),
    }
    with grpc.insecure_channel(stack.address("gateway")) as channel:
        operator = gateway_pb2_grpc.GatewayOperatorStub(channel)
        for table_id, config in configs.items():
            operator.CreateTable(d.CreateTableRequest(table_id=table_id, config=config), metadata=OPERATOR, timeout=10)
        # Someone sits at the Hold'em table (dev login: the stack's gateway allows it), so the
        # lobby's seats are not all zero.
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        sitter = gateway.Login(g.LoginRequest(player_id=f"sitter{run}"), timeout=10)
        auth = (("authorization", f"Bearer {sitter.token}"),)
        hold_em = next(iter(configs))
        gateway.Join(g.JoinRequest(table_id=hold_em, buy_in=500), metadata=auth, timeout=10)
        lobby = gateway.Lobby(g.LobbyRequest(), metadata=auth, timeout=10)
    tables = {t.table_id: t for t in lobby.tables if t.table_id in configs}
    assert set(tables) == set(configs)
    assert tables[hold_em].seats_taken == 1
    return tables


def create_tournaments(stack: Stack) -> tuple[str, str]:
    """A freeroll with a guarantee (registering costs nothing: the page's player has no cash) and
    a paid scheduled tournament, on the tournament service as the operator's tooling."""
    run = uuid.uuid4().hex[:6]
    freeroll, paid = f"web-free-{run}", f"web-mtt-{run}"
    with stack.channel("tournament") as channel:
        service = tournament_pb2_grpc.TournamentStub(channel)
        for request in (
            t.CreateTournamentRequest(
                tournament_id=freeroll,
                name=f"Web Freeroll {run}",
                format=t.TOURNAMENT_FORMAT_FREEROLL,
                variant="NT",
                starting_stack=1500,
                guarantee=5000,
                start_in_seconds=7200,
            ),
            t.CreateTournamentRequest(
                tournament_id=paid,
                name=f"Web Sunday {run}",
                format=t.TOURNAMENT_FORMAT_MTT,
                variant="PO",
                buy_in=500,
                fee=50,
                starting_stack=3000,
                start_in_seconds=7200,
            ),
        ):
            service.CreateTournament(request, timeout=20)
    return freeroll, paid


def drive_browser(envoy: EnvoyProcess, chromium: str, player: str, password: str, tournament: str = "") -> dict:
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    env = {**os.environ, "BASE_URL": envoy.url, "PLAYER": player, "PASSWORD": password}
    env |= {"ARTIFACTS": str(ARTIFACTS), "CHROMIUM": chromium, "TOURNAMENT": tournament}
    result = subprocess.run(
        ["node", "e2e/lobby.mjs"], cwd=ROOT / "web", env=env, capture_output=True, text=True, timeout=300
    )
    lines = result.stdout.strip().splitlines()
    assert lines, f"the browser driver printed nothing (status {result.returncode}):\n{result.stderr[-3000:]}"
    seen = json.loads(lines[-1])
    assert result.returncode == 0 and "error" not in seen, (
        f"{seen.get('error')}\nconsole: {seen.get('console')}\nfailed: {seen.get('failedRequests')}\n"
        f"envoy:\n{envoy.logs()[-2000:]}"
    )
    return seen


def test_sign_up_log_in_lobby_and_balance_in_chromium(web_stack):
    stack, envoy, chromium = web_stack
    tables = create_tables(stack)
    freeroll, paid = create_tournaments(stack)
    player, password = f"web{uuid.uuid4().hex[:8]}", "correct horse battery"
    seen = drive_browser(envoy, chromium, player, password, freeroll)

    # A screenshot per step, real PNG files.
    names = [step["name"] for step in seen["steps"]]
    assert names == [
        "signup",
        "lobby-after-signup",
        "logged-out",
        "login-wrong-password",
        "lobby-after-login",
        "tournament-details",
        "tournament-registered",
        "tournament-unregistered",
    ]
    for step in seen["steps"]:
        assert Path(step["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", step

    # Every request the pages made was answered (Envoy served the build and proxied each call), and
    # the pages logged no error.
    assert seen["failedRequests"] == [], seen["failedRequests"]
    assert not [line for line in seen["console"] if line.startswith("error")], seen["console"]

    # The sign-up form holds the gateway's player id rule (1-32 letters, digits, '_' or '-').
    assert seen["badIdRefusedByForm"] is True and seen["goodIdAcceptedByForm"] is True

    # The wrong password was refused by the gateway and the page stayed on the log-in form.
    assert "password" in seen["wrongPassword"].lower(), seen["wrongPassword"]  # the gateway's BAD_CREDENTIALS message
    assert seen["urlAfterWrongPassword"].endswith("#/login")

    # The balance on the page is the wallet's: the play-money grant of the sign-up.
    with stack.channel("wallet") as channel:
        account = wallet_pb2_grpc.WalletStub(channel).GetBalance(
            w.GetBalanceRequest(account_id=ids.player_account_id(player, ids.Currency.PLAY)), timeout=10
        )
    assert account.balance == PLAY_GRANT
    for view in (seen["afterSignUp"], seen["afterLogIn"]):
        assert view["player"] == player and player in view["heading"]
        play = next(b for b in view["balances"] if b["currency"] == "play")
        assert int(play["amount"]) == account.balance
        assert play["text"] == f"{account.balance:,}"  # 10,000
        cash = next(b for b in view["balances"] if b["currency"] == "cash")
        assert (cash["amount"], cash["text"]) == ("0", "$0.00")

    # The lobby: the tables made beforehand, each under its game, with its stakes and seats.
    shown = {
        row["tableId"]: (game["variant"], game["title"], row)
        for game in seen["afterLogIn"]["games"]
        for row in game["tables"]
    }
    for table_id, table in tables.items():
        assert table_id in shown, f"{table_id} is not on the page: {shown}"
        variant, title, row = shown[table_id]
        assert variant == table.variant and row["name"] == table.name
        assert row["seats"] == f"{table.seats_taken}/{table.seats}"
        assert row["currency"] == "play"
        if table.variant == "NT":
            assert title.startswith("No Limit Hold'em") and row["stakes"] == "5/10" and row["seats"] == "1/6"
        else:
            assert title.startswith("Fixed Limit Seven Card Stud") and row["stakes"] == "20/40"
            assert row["seats"] == "0/8"

    # The tournaments: each line as the tournament service lists it (status, entrants, prize pool,
    # buy-in + fee); the freeroll's details; the registration and the unregistration were the
    # service's (the entrants it counted, the player's own status), and free: no cash moved.
    listed = {x["tournamentId"]: x for x in seen["tournaments"]}
    assert {freeroll, paid} <= set(listed)
    with stack.channel("tournament") as channel:
        service = tournament_pb2_grpc.TournamentStub(channel)
        infos = {
            i: service.GetTournament(t.GetTournamentRequest(tournament_id=i), timeout=10) for i in (freeroll, paid)
        }
        with pytest.raises(grpc.RpcError) as not_registered:
            service.GetPlayerStatus(t.GetTournamentPlayerRequest(tournament_id=freeroll, player_id=player), timeout=10)
    assert not_registered.value.code() == grpc.StatusCode.NOT_FOUND or "NOT_REGISTERED" in str(not_registered.value)
    for tid, info in infos.items():
        row = listed[tid]
        assert row["status"] == "registering" and int(row["entrants"]) == 0
        assert int(row["prizePool"]) == info.prize_pool
    free_cells, paid_cells = listed[freeroll]["cells"], listed[paid]["cells"]
    assert free_cells[1:5] == ["Freeroll", "No Limit Hold'em", "registering", "free"], free_cells
    assert free_cells[6] == "$50.00" == f"${infos[freeroll].prize_pool // 100}.00"  # the guarantee
    assert paid_cells[1:5] == ["MTT", "Pot Limit Omaha", "registering", "$5.00 + $0.50"], paid_cells
    before = seen["tournamentBefore"]
    assert before["tournamentId"] == freeroll and before["buttons"] == ["register"]
    assert before["mine"] == "not registered" and before["starting-stack"] == "1500"
    assert before["prize-pool"] == "$50.00 ($50.00 guaranteed)"
    registered, unregistered = seen["registered"], seen["unregistered"]
    assert registered["message"].startswith("Registered") and registered["details"]["mine"] == "registered"
    assert registered["row"]["entrants"] == "1" and registered["details"]["entrants"] == "1"
    assert registered["details"]["buttons"] == ["unregister"]
    assert unregistered["message"].startswith("Unregistered") and unregistered["row"]["entrants"] == "0"
    assert unregistered["details"]["mine"] == "not registered" and unregistered["details"]["buttons"] == ["register"]
    assert infos[freeroll].entrants == 0
    with stack.channel("wallet") as channel:
        cash = wallet_pb2_grpc.WalletStub(channel).GetBalance(
            w.GetBalanceRequest(account_id=ids.player_account_id(player, ids.Currency.CASH)), timeout=10
        )
    assert cash.balance == 0  # a freeroll: nothing paid, nothing back
