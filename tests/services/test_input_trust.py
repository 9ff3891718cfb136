"""Issue 14, items 5 and 13, each reproduced against the real wallet and evaluator processes (mutual
TLS, SQLite and PostgreSQL): bad input gets its precise status and a clipped message, never UNKNOWN,
RESOURCE_EXHAUSTED or a retryable "storage unavailable", and changes nothing.

Developers' guide principle 6: "Bad input → precise gRPC status + clear message, changes nothing."
"""

from __future__ import annotations

import uuid

import grpc
import pytest

from cardroom.runtime import errors
from cardroom.v1 import common_pb2, evaluator_pb2 as ev, evaluator_pb2_grpc, wallet_pb2 as w
from tests.services.procs import ServiceProcess, secure_channel
from tests.services.trusted import (
    INT64_MAX,
    assert_sound,
    failure,
    no_tracebacks,
    raw_call,
    stubs,
    summary,
    wallet_process,
)

pytestmark = pytest.mark.slow  # real processes, PostgreSQL

INV, OOR = grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OUT_OF_RANGE
HUGE = "\U0001f600" * 20_000  # 80 KB of UTF-8; the old clip let 1,000 of them (4 KB, 12 KB percent-encoded) through
GARBAGE = [b"\xff" * 12, b"\x0a\xff\xff\xff\xff\x0f", b"\x12\x05ab", b"\x0a\x02\xc3\x28", b"\x80" * 3]
#: Small bounds so the tests reach them in a few calls (defaults: 10^12 and 10^14).
MAX_TRANSFER, MAX_BALANCE = 1_000, 5_000


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


# ------------------------------------------------------------------------- the evaluator


@pytest.fixture(scope="module")
def evaluator_proc():
    proc = ServiceProcess("evaluator", tls=True).start()
    yield proc
    assert proc.stop() == 0


@pytest.fixture(scope="module")
def evaluator(evaluator_proc: ServiceProcess):
    with secure_channel(evaluator_proc.address, "operator") as channel:
        yield evaluator_pb2_grpc.EvaluatorStub(channel), channel


def test_a_20kb_card_is_invalid_argument_with_a_clipped_message(evaluator) -> None:
    """Item 5: "a 20 KB id exceeds gRPC's metadata limit and the client gets RESOURCE_EXHAUSTED"."""
    stub, _ = evaluator
    err = failure(
        stub.Evaluate, ev.EvaluateRequest(ranking=ev.RANKING_HIGH, hole=[HUGE, "Kd"], board="2c 3d 4h".split())
    )
    assert err.code() == INV, err.details()
    assert err.details().startswith("hole[0]: ") and len(err.details().encode()) <= errors.MAX_MESSAGE
    assert [v.field for v in errors.violations_of(err)] == ["hole[0]"]


def test_garbage_bytes_are_invalid_argument_without_a_traceback(evaluator, evaluator_proc: ServiceProcess) -> None:
    """Item 5: "Garbage bytes get UNKNOWN with a logged traceback"."""
    _, channel = evaluator
    for method in ("Evaluate", "Showdown", "Equity"):
        for body in GARBAGE:
            assert raw_call(channel, f"/cardroom.v1.Evaluator/{method}", body) == INV, (method, body)
    assert no_tracebacks(evaluator_proc) == []


def test_showdown_pots_beyond_int64_are_invalid_argument(evaluator) -> None:
    """Item 13: "The evaluator's Showdown overflows on huge pots (UNKNOWN)" — two int64-max pots won by
    one seat make a seat total no int64 field can carry."""
    stub, _ = evaluator
    pots = [ev.Pot(amount=INT64_MAX, eligible_seats=[1, 2]), ev.Pot(amount=INT64_MAX, eligible_seats=[1, 2])]
    request = ev.ShowdownRequest(
        game=common_pb2.GAME_HOLDEM,
        board="2c 7d 9h Js Qd".split(),
        players=[ev.ShowdownPlayer(seat=1, hole=["Ah", "Ad"]), ev.ShowdownPlayer(seat=2, hole=["3c", "4c"])],
        pots=pots,
    )
    err = failure(stub.Showdown, request)
    assert err.code() == INV and err.details().startswith("pots: "), err.details()
    # One pot of the int64 maximum still settles exactly.
    del request.pots[1:]
    reply = stub.Showdown(request, timeout=10)
    assert [(t.seat, t.amount) for t in reply.totals] == [(1, INT64_MAX)]


def test_equity_refuses_a_million_samples_by_default(evaluator) -> None:
    """Item 5: "Costly Equity requests (1M samples, 10 players: ~1 s, +450 MB) need limits"."""
    stub, _ = evaluator
    holes = [common_pb2.CardList(cards=h.split()) for h in ("Ah As", "Kd Kc", "Qh Qs", "Jd Jc", "Th Ts")]
    err = failure(stub.Equity, ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=holes, samples=1_000_000))
    assert err.code() == INV and err.details().startswith("samples: "), err.details()
    assert "200000" in err.details()


@pytest.fixture(scope="module")
def tight_evaluator():
    env = {
        "EVALUATOR_EQUITY_MAX_SAMPLES": "2000",
        "EVALUATOR_EQUITY_MAX_EXHAUSTIVE": "10000",
        "EVALUATOR_EQUITY_MAX_PLAYERS": "6",
        "EVALUATOR_EQUITY_MAX_EVALUATIONS": "4000",
    }
    proc = ServiceProcess("evaluator", env, tls=True).start()
    with secure_channel(proc.address, "operator") as channel:
        yield evaluator_pb2_grpc.EvaluatorStub(channel)
    assert proc.stop() == 0


def _holes(n: int) -> list[common_pb2.CardList]:
    hands = ["Ah As", "Kd Kc", "Qh Qs", "Jd Jc", "Th Ts", "9d 9c", "8h 8s", "7d 7c"]
    return [common_pb2.CardList(cards=h.split()) for h in hands[:n]]


@pytest.mark.parametrize(
    ("request_", "field", "words"),
    [
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_holes(2), samples=2001), "samples", "limit 2000"),
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_holes(7), samples=100), "players", "2 to 6"),
        (
            ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_holes(2), max_exhaustive=10_001),
            "max_exhaustive",
            "limit 10000",
        ),
        (
            ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_holes(5), samples=2000),
            "samples",
            "10000 hand evaluations",
        ),
        (  # the flop leaves C(33, 2) = 528 boards, exhaustive, but 528 x 4 players x 2 halves = 4224 evaluations
            ev.EquityRequest(
                game=common_pb2.GAME_OMAHA_HI_LO,
                players=[
                    common_pb2.CardList(cards=h.split())
                    for h in ("Ah 2h 3c Kd", "Qs Qd Js Jd", "9c 9d Tc Td", "5s 6s 7c 8c")
                ],
                board="4s 7h 8d".split(),
                max_exhaustive=10_000,
                samples=1,
            ),
            "max_exhaustive",
            "528 remaining boards x 4 players x 2 halves = 4224 hand evaluations",
        ),
    ],
)
def test_equity_limits_are_settings_with_clear_messages(tight_evaluator, request_, field, words) -> None:
    err = failure(tight_evaluator.Equity, request_)
    assert err.code() == INV, err.details()
    assert err.details().startswith(f"{field}: ") and words in err.details(), err.details()


def test_equity_within_the_limits_is_served(tight_evaluator) -> None:
    reply = tight_evaluator.Equity(
        ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_holes(2), samples=2000, seed=7), timeout=30
    )
    assert reply.boards == 2000 and not reply.exhaustive and 0.75 < reply.players[0].equity < 0.88


# ------------------------------------------------------------------------------ the wallet


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def wallet(request):
    proc = wallet_process(
        request, request.param, WALLET_MAX_TRANSFER=str(MAX_TRANSFER), WALLET_MAX_BALANCE=str(MAX_BALANCE)
    )
    with stubs(proc) as pair:
        yield proc, *pair
    assert proc.stop() == 0


def _player(dealer, funds: int = 0, operator=None) -> str:
    account = dealer.OpenAccount(
        w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=_name("p")), timeout=10
    ).account.account_id
    while funds > 0:  # in deposits of at most MAX_TRANSFER
        amount, funds = min(funds, MAX_TRANSFER), funds - MAX_TRANSFER
        operator.Deposit(w.DepositRequest(account_id=account, amount=amount, idempotency_key=_name("d")), timeout=10)
    return account


def test_a_20kb_account_id_is_invalid_argument(wallet) -> None:
    _, operator, dealer = wallet
    before = summary(operator)
    for call, request, field in [
        (operator.GetBalance, w.GetBalanceRequest(account_id=HUGE), "account_id"),
        (dealer.OpenAccount, w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=HUGE), "owner"),
        (operator.Deposit, w.DepositRequest(account_id=HUGE, amount=5, idempotency_key=HUGE), "account_id"),
        (operator.ListTransfers, w.ListTransfersRequest(account_id=HUGE, page_token=HUGE), "account_id"),
    ]:
        err = failure(call, request)
        assert err.code() == INV and err.details().startswith(f"{field}: "), err.details()[:200]
    assert summary(operator) == before


def test_garbage_bytes_to_the_wallet_are_invalid_argument_quietly(wallet) -> None:
    proc, operator, _ = wallet
    before = summary(operator)
    with secure_channel(proc.address, "operator") as channel:
        for method in ("OpenAccount", "Deposit", "Withdraw", "GetBalance", "ListTransfers"):
            for body in GARBAGE:
                assert raw_call(channel, f"/cardroom.v1.Wallet/{method}", body) == INV, (method, body)
    assert summary(operator) == before
    assert no_tracebacks(proc) == []


def test_house_account_kinds_belong_to_the_house(wallet) -> None:
    """Item 5: "House account kinds can be opened with any owner"."""
    _, operator, dealer = wallet
    before = summary(operator)
    for kind in (w.ACCOUNT_KIND_HOUSE_RAKE, w.ACCOUNT_KIND_TOURNAMENT_FEES):
        err = failure(dealer.OpenAccount, w.OpenAccountRequest(kind=kind, owner="mallory"))
        assert err.code() == INV and err.details().startswith("owner: ") and "house" in err.details(), err.details()
    assert summary(operator) == before
    rake = dealer.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_HOUSE_RAKE, owner="house"), timeout=10)
    assert rake.account.account_id == "house_rake:house:cash" and not rake.created
    fees = dealer.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_TOURNAMENT_FEES, owner="house"), timeout=10)
    assert fees.account.account_id == "tournament_fees:house:cash"


def test_invalid_input_is_never_storage_unavailable(wallet) -> None:
    """Item 13: "The wallet reports invalid input and int64 overflow as retryable 'storage unavailable'
    (clients retry for ever)" — a NUL in a key (PostgreSQL cannot store it), a page token beyond int64
    (SQLite cannot bind it), a page token of Unicode digits."""
    _, operator, _ = wallet
    player = _player(wallet[2], 100, operator)
    before = summary(operator)
    for call, request, field in [
        (operator.Deposit, w.DepositRequest(account_id=player, amount=5, idempotency_key="k\x00ey"), "idempotency_key"),
        (
            operator.Deposit,
            w.DepositRequest(account_id=player, amount=5, idempotency_key=_name("k"), reference="r\x00"),
            "reference",
        ),
        (
            operator.Withdraw,
            w.WithdrawRequest(account_id=player, amount=5, idempotency_key="\x1b[2J"),
            "idempotency_key",
        ),
        (operator.ListTransfers, w.ListTransfersRequest(account_id=player, page_token="9" * 20), "page_token"),
        (operator.ListTransfers, w.ListTransfersRequest(account_id=player, page_token="\u00b2"), "page_token"),
    ]:
        err = failure(call, request)
        assert err.code() == INV and err.details().startswith(f"{field}: "), (request, err.code(), err.details())
    assert summary(operator) == before


def test_money_from_outside_is_bounded_and_winnings_are_not(wallet) -> None:
    """Item 13: "balances have no upper bound" — a per-transfer maximum (WALLET_MAX_TRANSFER) and a
    balance maximum (WALLET_MAX_BALANCE) for money that comes in; chips won at a table always come back."""
    _, operator, dealer = wallet
    player = _player(dealer)
    before = summary(operator)
    err = failure(
        operator.Deposit, w.DepositRequest(account_id=player, amount=MAX_TRANSFER + 1, idempotency_key=_name("d"))
    )
    assert err.code() == INV and err.details().startswith("amount: ") and str(MAX_TRANSFER) in err.details()
    assert summary(operator) == before
    for _ in range(MAX_BALANCE // MAX_TRANSFER):
        operator.Deposit(
            w.DepositRequest(account_id=player, amount=MAX_TRANSFER, idempotency_key=_name("d")), timeout=10
        )
    full = summary(operator)
    err = failure(operator.Deposit, w.DepositRequest(account_id=player, amount=1, idempotency_key=_name("d")))
    assert err.code() == OOR and err.details().startswith("amount: ") and "balance maximum" in err.details()
    assert summary(operator) == full
    # A winner's cash-out passes the maximum: refusing it would strand chips in the table's escrow.
    winner = _player(dealer, MAX_BALANCE, operator)
    table = dealer.OpenAccount(
        w.OpenAccountRequest(kind=w.ACCOUNT_KIND_TABLE_ESCROW, owner=_name("t")), timeout=10
    ).account.account_id
    for source, amount in ((player, MAX_BALANCE), (winner, 10)):
        dealer.Transfer(
            w.TransferRequest(
                from_account=source,
                to_account=table,
                amount=amount,
                kind=w.TRANSFER_KIND_BUY_IN,
                idempotency_key=_name("b"),
            ),
            timeout=10,
        )
    out = dealer.Transfer(
        w.TransferRequest(
            from_account=table,
            to_account=winner,
            amount=MAX_BALANCE + 10,
            kind=w.TRANSFER_KIND_CASH_OUT,
            idempotency_key=_name("c"),
        ),
        timeout=10,
    )
    assert out.transfer.to_balance_after == 2 * MAX_BALANCE
    err = failure(operator.Withdraw, w.WithdrawRequest(account_id=winner, amount=MAX_TRANSFER + 1, idempotency_key="w"))
    assert err.code() == INV and err.details().startswith("amount: ")
    assert_sound(operator)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_external_account_stops_at_int64_with_out_of_range(request, backend: str) -> None:
    """Item 13: "a house account driven to the int64 limit blocks large deposits for everyone", and
    the overflow was "storage unavailable": with the bounds opened to int64, the first deposit takes
    the external account to -(2^63 - 1); the next one is OUT_OF_RANGE, says why, and changes nothing."""
    proc = wallet_process(request, backend, WALLET_MAX_TRANSFER=str(INT64_MAX), WALLET_MAX_BALANCE=str(INT64_MAX))
    try:
        with stubs(proc) as (operator, dealer):
            rich, other = _player(dealer), _player(dealer)
            operator.Deposit(w.DepositRequest(account_id=rich, amount=INT64_MAX, idempotency_key="all"), timeout=10)
            before = summary(operator)
            err = failure(operator.Deposit, w.DepositRequest(account_id=other, amount=1, idempotency_key="one"))
            assert err.code() == OOR, err.details()
            assert err.details().startswith("amount: ") and "int64" in err.details()
            assert summary(operator) == before
            assert_sound(operator)
            # Money may still leave.
            out = operator.Withdraw(w.WithdrawRequest(account_id=rich, amount=10, idempotency_key="out"), timeout=10)
            assert out.transfer.from_balance_after == INT64_MAX - 10
            assert_sound(operator)
    finally:
        assert proc.stop() == 0
