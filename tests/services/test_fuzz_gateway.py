"""A bounded fuzz of the gateway as a real process in front of a real dealer and wallet (issue 14,
"Proof kept in the suite": "A fuzz test (bounded, a few thousand requests per service, fixed seed)
with 0 UNKNOWN/INTERNAL and state unchanged by rejected requests").

A fixed seed draws requests for every unary Gateway and GatewayOperator method: garbage bytes,
truncated and bit-flipped bodies, odd and over-long ids and passwords, edge amounts, unknown enum
values, with a valid token, another player's, a forged or no token, the operator's token or a wrong
one. No answer may be UNKNOWN, INTERNAL, UNAVAILABLE or DEADLINE_EXCEEDED (the rate limits are
raised out of the way: RESOURCE_EXHAUSTED is refused too). After every rejected request the
player's balances, the watched table (a hand in progress) and the lobby are what they were.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter

import grpc
import pytest

from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc, tournament_pb2 as t
from tests.services.dealer_fixtures import balance, dealer_stack, nl_config, player_account, wait_for
from tests.services.fuzz import (
    FORBIDDEN,
    INT32_MAX,
    INT32_MIN,
    answer,
    enum,
    garbage,
    integer,
    settled,
    state_key,
    text,
)
from tests.services.procs import ServiceProcess
from tests.services.trusted import no_tracebacks

__all__ = ["dealer_stack"]
pytestmark = [pytest.mark.slow, pytest.mark.kafka]

SEED = 20261203
REQUESTS = 600
OPERATOR = "fuzz-operator-token"
GATEWAY = ("Login", "SignUp", "Refresh", "ChangePassword", "Lobby", "Join", "Leave", "MyBalance", "Cashier")
GATEWAY += ("CashierDeposit", "CashierWithdraw", "CashierHistory", "MyHands", "TableCommand", "TournamentLobby")
OPERATOR_METHODS = ("CreateTable", "FundPlayer", "PendingCashierMoves", "DecideCashierMove")
CURRENCIES = [common_pb2.CURRENCY_CASH, common_pb2.CURRENCY_PLAY]


def _message(rng: random.Random, method: str, ids: list[str], tables: list[str]) -> object:
    player, table, rid = text(rng, ids), text(rng, tables), text(rng, ["r1", ""])
    password = text(rng, ["correct horse battery staple", "", "short"])
    amount = integer(rng, [1, 100, 100_000])
    if method in ("Login", "SignUp"):
        return (g.LoginRequest if method == "Login" else g.SignUpRequest)(player_id=player, password=password)
    if method == "Refresh":
        return g.RefreshRequest(refresh_token=text(rng, ["", "rt1.x.y"]))
    if method == "ChangePassword":
        return g.ChangePasswordRequest(old_password=password, new_password=text(rng, ["", "x" * 1000]))
    if method in ("Lobby", "TournamentLobby"):
        return g.LobbyRequest(variant=text(rng, ["NT", ""])) if method == "Lobby" else t.ListTournamentsRequest()
    if method == "Join":
        return g.JoinRequest(
            table_id=table,
            buy_in=integer(rng, [40, 200, 1000]),
            seat=rng.choice([0, 1, 2, -1, INT32_MAX]),
            player_id=text(rng, [*ids, ""]),
            request_id=rid,
        )
    if method == "Leave":
        return g.LeaveRequest(table_id=table, player_id=text(rng, [*ids, ""]), request_id=rid)
    if method == "MyBalance":
        return g.MyBalanceRequest(player_id=text(rng, [*ids, ""]))
    if method == "Cashier":
        return g.CashierRequest()
    if method in ("CashierDeposit", "CashierWithdraw"):
        return g.CashierMoveRequest(currency=enum(rng, CURRENCIES), amount=amount, request_id=rid)
    if method in ("CashierHistory", "MyHands"):
        limit = rng.choice([0, 1, 200, 201, -1, INT32_MAX, INT32_MIN])
        return g.CashierHistoryRequest(limit=limit) if method == "CashierHistory" else g.MyHandsRequest(limit=limit)
    if method == "TableCommand":
        return g.TableCommandRequest(
            session_id=text(rng, ["", "0" * 32]), request_id=rid, act=g.PlayAction(action=enum(rng, [1, 2, 3]))
        )
    if method == "CreateTable":
        config = nl_config(name=text(rng, ["fz"]), stakes=d.Stakes(small_blind=amount, big_blind=amount))
        config.variant = rng.choice(["NT", "NX", "", "PO/8"])
        return d.CreateTableRequest(table_id=text(rng, ["", *tables]), config=config)
    if method == "FundPlayer":
        return g.FundPlayerRequest(
            player_id=player, currency=enum(rng, CURRENCIES), amount=amount, idempotency_key=text(rng, ["k", ""])
        )
    if method == "PendingCashierMoves":
        return g.PendingCashierMovesRequest()
    return g.DecideCashierMoveRequest(move_id=text(rng, ["", "1", "-1", "9" * 30]), approve=rng.random() < 0.5)


def test_fuzzed_gateway_requests_get_precise_statuses_and_rejections_change_nothing(dealer_stack) -> None:
    stack = dealer_stack
    dealer, wallet = stack.dealer_stub(), stack.wallet_stub()
    run = uuid.uuid4().hex[:6]
    gateway = ServiceProcess(
        "gateway",
        {
            "GATEWAY_SECRET": f"fuzz-gateway-secret-{run}-0123456789abcdef",
            "GATEWAY_OPERATOR_TOKEN": OPERATOR,
            "GATEWAY_DEV_LOGIN": "1",
            "DEALER_ADDR": stack.dealer.address,
            "WALLET_ADDR": stack.wallet.address,
            "CONNECTION_MONITOR_ADDR": "off",
            "TOURNAMENT_ADDR": "",
            "GATEWAY_ARGON2_MEMORY_KIB": "8192",
            **{f"GATEWAY_{k}": "1000000" for k in ("RATE", "BURST", "ADDRESS_RATE", "ADDRESS_BURST")},
            **{f"GATEWAY_{k}": "1000000" for k in ("PLAYER_RATE", "PLAYER_BURST", "LOGIN_BURST", "SIGNUP_BURST")},
            "GATEWAY_LOGIN_MAX_FAILURES": "1000000",
        },
    ).start()
    # The watched table: two players in a hand, the one to act never fuzzed; the fuzzing player has
    # no seat at it (it is full) and money of both kinds.
    ann, bob, fuzzer = f"ga-{run}", f"gb-{run}", f"gz{run}"
    for p in (ann, bob):
        player_account(wallet, p, 5000)
    config = nl_config(seats=2, clock=d.ClockSettings(action_seconds=3600), hand_pause_seconds=60)
    table = dealer.CreateTable(d.CreateTableRequest(table_id=f"gz-{run}", config=config), timeout=10).table_id
    for seat, p in ((1, ann), (2, bob)):
        dealer.SitDown(d.SitDownRequest(table_id=table, player_id=p, seat=seat, buy_in=1000), timeout=10)
    wait_for(lambda: dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5).in_hand, what="a hand")
    channel = grpc.insecure_channel(gateway.address)
    try:
        stub = g_grpc.GatewayStub(channel)
        token = stub.Login(g.LoginRequest(player_id=fuzzer), timeout=20).token
        g_grpc.GatewayOperatorStub(channel).FundPlayer(
            g.FundPlayerRequest(player_id=fuzzer, currency=common_pb2.CURRENCY_CASH, amount=5000, idempotency_key="f"),
            metadata=[("authorization", f"Operator {OPERATOR}")],
            timeout=20,
        )
        other = stub.Login(g.LoginRequest(player_id=f"go{run}"), timeout=20).token
        accounts = [f"player_cash:{fuzzer}:cash", f"player_play:{fuzzer}:play", f"table_escrow:{table}:cash"]

        def world() -> tuple[bytes, tuple[int, ...], tuple[str, ...]]:
            lobby = stub.Lobby(g.LobbyRequest(), metadata=[("authorization", f"Bearer {token}")], timeout=10)
            return (
                state_key(dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5)),
                tuple(balance(wallet, a) for a in accounts),
                tuple(sorted(t.table_id for t in lobby.tables)),
            )

        rng = random.Random(SEED)
        ids = [fuzzer, ann, f"go{run}", "", "x" * 40, "bad id!"]
        tables = [table, f"ghost-{run}", "", "t" * 200]
        bearers = [token, other, token[:-2] + "xx", "cr1.nobody.1.sig", ""]
        before = world()
        codes: Counter[grpc.StatusCode] = Counter()
        for _ in range(REQUESTS):
            operator = rng.random() < 0.25
            method = rng.choice(OPERATOR_METHODS if operator else GATEWAY)
            body = _message(rng, method, ids, tables).SerializeToString()  # type: ignore[attr-defined]
            if rng.random() < 0.2:
                body = garbage(rng, body)
            if operator:
                credential = f"Operator {rng.choice([OPERATOR, OPERATOR + 'x', ''])}"
            else:
                credential = f"Bearer {rng.choice(bearers)}"
            metadata = [("authorization", credential)] if rng.random() < 0.9 else []
            service = "GatewayOperator" if operator else "Gateway"
            code = answer(channel, f"/cardroom.v1.{service}/{method}", body, metadata)
            codes[code] += 1
            assert code not in FORBIDDEN, (method, body[:200], code)
            if code == grpc.StatusCode.OK:
                before = settled(world)  # an accepted deposit, table or login may change things
                continue
            if world() != before:
                pytest.fail(f"a rejected {method} changed the card room: {body[:200]!r}")
        assert codes[grpc.StatusCode.INVALID_ARGUMENT] > REQUESTS / 10, codes
        assert codes[grpc.StatusCode.UNAUTHENTICATED] > 0 and codes[grpc.StatusCode.PERMISSION_DENIED] > 0, codes
    finally:
        channel.close()
        assert gateway.stop() == 0
    assert no_tracebacks(gateway) == []
