"""Issue 15, "The gateway exposes the tournament lobby, registration and the player's tournament tables
to clients", against real processes: a wallet, the tournament service and a gateway whose
``TOURNAMENT_ADDR`` names it, all three with mutual TLS (the gateway's certificate is the caller the
trust table grants the players' entries to), over the real Kafka broker.

A player signs up and logs in through the gateway, reads the lobby, registers (the buy-in and the fee
leave his cash balance, read through the gateway), registers again with the same request id (the same
answer, nothing paid twice), and unregisters (paid back); another player can neither unregister him nor
reuse his request id as his; bad input gets its precise status."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest

from cardroom.runtime.errors import reason_of, violations_of
from cardroom.v1 import (
    common_pb2,
    gateway_pb2 as g,
    gateway_pb2_grpc as g_grpc,
    tournament_pb2 as t,
    tournament_pb2_grpc as t_grpc,
    wallet_pb2 as w,
    wallet_pb2_grpc as w_grpc,
)
from tests.ports import free_port
from tests.services.conftest import make_wallet_env
from tests.services.procs import ServiceProcess, secure_channel, tournament_service

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
OPERATOR_TOKEN = "gateway-tournaments-operator"
PASSWORD = "correct horse battery"
FUNDS = 5_000
BUY_IN, FEE = 1_000, 100


@dataclass
class Room:
    gateway: g_grpc.GatewayStub
    operator: g_grpc.GatewayOperatorStub
    tournaments: t_grpc.TournamentStub
    """As the operator's tooling (creates the tournaments)."""
    wallet: w_grpc.WalletStub
    """As the operator's tooling (the ledger's audit)."""
    run: str


@pytest.fixture(scope="module")
def room(request, kafka) -> Iterator[Room]:
    run = uuid.uuid4().hex[:6]
    wallet = ServiceProcess("wallet", make_wallet_env(request, "sqlite", kafka), tls=True).start()
    tournament, _ = tournament_service(kafka.bootstrap, wallet.address, run, tick_seconds=0.05, tls=True)
    gateway = ServiceProcess(
        "gateway",
        {
            "GATEWAY_SECRET": f"gateway-tournaments-{run}",
            "GATEWAY_OPERATOR_TOKEN": OPERATOR_TOKEN,
            "WALLET_ADDR": wallet.address,
            "TOURNAMENT_ADDR": tournament.address,
            "DEALER_ADDR": f"127.0.0.1:{free_port()}",  # no dealer: no cash table here
            "CONNECTION_MONITOR_ADDR": "off",
            "GATEWAY_ARGON2_MEMORY_KIB": "8192",
            "GATEWAY_ADDRESS_RATE": "100000",
            "GATEWAY_ADDRESS_BURST": "100000",
            "GATEWAY_SIGNUP_BURST": "100",
        },
        tls=True,
    ).start()
    channels = [
        grpc.insecure_channel(gateway.address),  # the public port stays plain
        secure_channel(tournament.address, "operator"),
        secure_channel(wallet.address, "operator"),
    ]
    try:
        yield Room(
            g_grpc.GatewayStub(channels[0]),
            g_grpc.GatewayOperatorStub(channels[0]),
            t_grpc.TournamentStub(channels[1]),
            w_grpc.WalletStub(channels[2]),
            run,
        )
    finally:
        for channel in channels:
            channel.close()
        assert gateway.stop() == 0
        tournament.stop()
        wallet.stop()


def bearer(login: g.LoginResponse) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {login.token}")]


def cash(room: Room, login: g.LoginResponse) -> int:
    balances = room.gateway.MyBalance(g.MyBalanceRequest(), metadata=bearer(login), timeout=10).balances
    return next(b.balance for b in balances if b.currency == common_pb2.CURRENCY_CASH)


def settled_cash(room: Room, login: g.LoginResponse, expected: int, timeout: float = 30) -> int:
    """The cash balance once it is ``expected`` (a refund is paid by the tournament service's money
    worker just after the answer), or the last one read after ``timeout``."""
    deadline = time.monotonic() + timeout
    while (balance := cash(room, login)) != expected and time.monotonic() < deadline:
        time.sleep(0.2)
    return balance


def refused(call, request, login: g.LoginResponse) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call(request, metadata=bearer(login), timeout=20)
    err = caught.value
    return err.code(), reason_of(err), err.details()


def test_a_player_lists_registers_idempotently_and_unregisters_through_the_gateway(room: Room) -> None:
    sng, mtt = f"sng-{room.run}", f"mtt-{room.run}"
    room.tournaments.CreateTournament(
        t.CreateTournamentRequest(
            tournament_id=sng,
            name="PLO 6-max",
            format=t.TOURNAMENT_FORMAT_SNG,
            variant="PO",
            buy_in=BUY_IN,
            fee=FEE,
            starting_stack=1500,
            max_entrants=6,
            level_seconds=120,
        ),
        timeout=20,
    )
    before = time.time()
    room.tournaments.CreateTournament(
        t.CreateTournamentRequest(
            tournament_id=mtt,
            name="Sunday",
            format=t.TOURNAMENT_FORMAT_MTT,
            variant="NT",
            buy_in=500,
            fee=50,
            starting_stack=3000,
            start_in_seconds=3600,
            seats=6,
        ),
        timeout=20,
    )
    ann_id, bob_id = f"ann-{room.run}", f"bob-{room.run}"
    room.gateway.SignUp(g.SignUpRequest(player_id=ann_id, password=PASSWORD), timeout=30)
    ann = room.gateway.Login(g.LoginRequest(player_id=ann_id, password=PASSWORD), timeout=30)
    bob = room.gateway.SignUp(g.SignUpRequest(player_id=bob_id, password=PASSWORD), timeout=30)
    funded = room.operator.FundPlayer(
        g.FundPlayerRequest(
            player_id=ann_id, currency=common_pb2.CURRENCY_CASH, amount=FUNDS, idempotency_key=f"fund-{ann_id}"
        ),
        metadata=[("authorization", f"Operator {OPERATOR_TOKEN}")],
        timeout=20,
    )
    assert funded.balance == FUNDS and cash(room, ann) == FUNDS and cash(room, bob) == 0

    # the lobby: status, game, buy-in + fee, entrants, prize pool, blinds, start time or Sit & Go size
    lobby = room.gateway.TournamentLobby(t.ListTournamentsRequest(), metadata=bearer(ann), timeout=10)
    lines = {x.tournament_id: x for x in lobby.tournaments}
    assert {sng, mtt} <= set(lines)
    s, m = lines[sng], lines[mtt]
    assert (s.status, s.variant, s.format, s.buy_in, s.fee) == (
        t.TOURNAMENT_STATUS_REGISTRATION,
        "PO",
        t.TOURNAMENT_FORMAT_SNG,
        BUY_IN,
        FEE,
    )
    assert (s.entrants, s.max_entrants, s.sit_and_go_size, s.prize_pool, s.level) == (0, 6, 6, 0, 0)
    assert s.blinds.big_blind > 0 and not s.HasField("starts_at")
    assert (m.variant, m.buy_in, m.fee, m.sit_and_go_size) == ("NT", 500, 50, 0)
    assert before + 3590 < m.starts_at.seconds < time.time() + 3610
    running = room.gateway.TournamentLobby(
        t.ListTournamentsRequest(status=t.TOURNAMENT_STATUS_RUNNING), metadata=bearer(ann), timeout=10
    )
    assert sng not in {x.tournament_id for x in running.tournaments}

    # register: the buy-in and the fee leave his cash account
    entry = g.MyTournamentEntryRequest(tournament_id=sng, request_id="reg-1")
    first = room.gateway.RegisterTournament(entry, metadata=bearer(ann), timeout=20)
    assert (first.player_id, first.paid, first.replayed, first.status.status) == (
        ann_id,
        BUY_IN + FEE,
        False,
        "registered",
    )
    assert cash(room, ann) == FUNDS - BUY_IN - FEE
    # the same request id again: the same answer, nothing paid twice
    again = room.gateway.RegisterTournament(entry, metadata=bearer(ann), timeout=20)
    assert (again.player_id, again.paid, again.replayed) == (ann_id, BUY_IN + FEE, True)
    assert cash(room, ann) == FUNDS - BUY_IN - FEE
    # a new request to register again: refused by the tournament service, passed on
    code, reason, _ = refused(
        room.gateway.RegisterTournament, g.MyTournamentEntryRequest(tournament_id=sng, request_id="reg-2"), ann
    )
    assert (code, reason) == (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_REGISTERED")
    page = room.gateway.GetTournament(t.GetTournamentRequest(tournament_id=sng), metadata=bearer(ann), timeout=10)
    assert (page.entrants, page.prize_pool, page.collected) == (1, BUY_IN, BUY_IN)
    mine = room.gateway.MyTournamentStatus(
        g.MyTournamentStatusRequest(tournament_id=sng), metadata=bearer(ann), timeout=10
    )
    assert (mine.player_id, mine.status) == (ann_id, "registered")

    # another player cannot unregister him: not in his name, not with his request id
    code, reason, _ = refused(
        room.gateway.UnregisterTournament,
        g.MyTournamentEntryRequest(tournament_id=sng, request_id="unreg-1", player_id=ann_id),
        bob,
    )
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "OTHER_PLAYER")
    code, reason, _ = refused(room.gateway.UnregisterTournament, entry, bob)
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "NOT_REGISTERED")
    # ... nor is ann's request id an answer for bob: his own registration, which his money cannot pay
    code, reason, _ = refused(room.gateway.RegisterTournament, entry, bob)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    code, reason, _ = refused(room.gateway.MyTournamentStatus, g.MyTournamentStatusRequest(tournament_id=sng), bob)
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "NOT_REGISTERED")
    page = room.gateway.GetTournament(t.GetTournamentRequest(tournament_id=sng), metadata=bearer(bob), timeout=10)
    assert page.entrants == 1 and cash(room, ann) == FUNDS - BUY_IN - FEE and cash(room, bob) == 0

    # he unregisters: the buy-in and the fee come back
    out = room.gateway.UnregisterTournament(
        g.MyTournamentEntryRequest(tournament_id=sng, request_id="unreg-1"), metadata=bearer(ann), timeout=20
    )
    assert (out.player_id, out.paid) == (ann_id, BUY_IN + FEE)
    assert settled_cash(room, ann, FUNDS) == FUNDS
    page = room.gateway.GetTournament(t.GetTournamentRequest(tournament_id=sng), metadata=bearer(ann), timeout=10)
    assert (page.entrants, page.prize_pool) == (0, 0)
    code, reason, _ = refused(room.gateway.MyTournamentStatus, g.MyTournamentStatusRequest(tournament_id=sng), ann)
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "NOT_REGISTERED")
    pool = room.wallet.GetBalance(w.GetBalanceRequest(account_id=f"tournament_prize_pool:{sng}:cash"), timeout=10)
    assert pool.balance == 0
    summary = room.wallet.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
    assert all(x.sum == 0 for x in summary.totals) and summary.negative_accounts == 0


def test_bad_input_gets_its_precise_status_and_changes_nothing(room: Room) -> None:
    player = f"cat-{room.run}"
    login = room.gateway.SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=30)
    unknown = f"nope-{room.run}"
    code, reason, details = refused(room.gateway.GetTournament, t.GetTournamentRequest(tournament_id=unknown), login)
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND") and unknown in details
    code, reason, _ = refused(
        room.gateway.RegisterTournament, g.MyTournamentEntryRequest(tournament_id=unknown, request_id="r1"), login
    )
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND")
    for request, field in (
        (g.MyTournamentEntryRequest(tournament_id="", request_id="r1"), "tournament_id"),
        (g.MyTournamentEntryRequest(tournament_id=unknown, request_id=""), "request_id"),
        (g.MyTournamentEntryRequest(tournament_id=unknown, request_id="no spaces please"), "request_id"),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            room.gateway.RegisterTournament(request, metadata=bearer(login), timeout=10)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert [v.field for v in violations_of(caught.value)] == [field]
    code, reason, _ = refused(room.gateway.MyTournamentStatus, g.MyTournamentStatusRequest(), login)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ID")
    with pytest.raises(grpc.RpcError) as caught:  # no token
        room.gateway.TournamentLobby(t.ListTournamentsRequest(), timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert cash(room, login) == 0
