"""A bounded fuzz of the wallet (SQLite and PostgreSQL) and the evaluator as real processes with mutual
TLS (issue 14, "Proof kept in the suite": "A fuzz test (bounded, ..., fixed seed) with 0
UNKNOWN/INTERNAL and state unchanged by rejected requests").

A fixed seed draws a few hundred requests per service: garbage bytes, truncated and bit-flipped
bodies, over-long and non-ASCII strings, control characters, edge integers (0, -1, the configured
bounds and one past them, the int64 and int32 extremes), unknown enum values. No answer may be
UNKNOWN, INTERNAL, RESOURCE_EXHAUSTED or UNAVAILABLE (bad input is never "retry later"); after
every rejected wallet request the ledger summary is exactly what it was (and sound at the end);
the evaluator answers a known request the same way after the fuzz, and no service logged an error.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import grpc
import pytest

from cardroom.core.cards import DECK
from cardroom.v1 import common_pb2, evaluator_pb2 as ev, wallet_pb2 as w
from tests.services.fuzz import FORBIDDEN, INT32_MAX, INT32_MIN, INT64_MIN, answer, enum, garbage, integer, text
from tests.services.procs import ServiceProcess, secure_channel
from tests.services.trusted import INT64_MAX, assert_sound, no_tracebacks, stubs, summary, wallet_process

pytestmark = pytest.mark.slow  # real processes, a few hundred calls each

MAX_TRANSFER, MAX_BALANCE = 1_000, 5_000

SEED = 20261201
REQUESTS = 300
# ------------------------------------------------------------------------------ the wallet


def _wallet_message(
    rng: random.Random,
    method: str,
    key: str,
    ids: list[str],
    owners: list[str],
    amounts: list[int],
    kinds: list[int],
    transfer_kinds: list[int],
) -> object:
    if method == "OpenAccount":
        return w.OpenAccountRequest(
            kind=enum(rng, kinds), owner=text(rng, owners), currency=enum(rng, [0, 1, 2]), request_id=text(rng, ["r"])
        )
    if method == "Deposit":
        return w.DepositRequest(
            account_id=text(rng, ids), amount=integer(rng, amounts), idempotency_key=key, reference=text(rng, [""])
        )
    if method == "Withdraw":
        return w.WithdrawRequest(
            account_id=text(rng, ids), amount=integer(rng, amounts), idempotency_key=key, reference=text(rng, [""])
        )
    if method == "Transfer":
        return w.TransferRequest(
            from_account=text(rng, ids),
            to_account=text(rng, ids),
            amount=integer(rng, amounts),
            kind=enum(rng, transfer_kinds),
            reference=text(rng, [""]),
            idempotency_key=key,
        )
    if method == "GetBalance":
        return w.GetBalanceRequest(account_id=text(rng, ids))
    if method == "ReconcileEscrow":
        return w.ReconcileEscrowRequest(
            request_id=text(rng, ["r", ""]),
            escrow_account=text(rng, ids),
            table_id=text(rng, ["t-1", ""]),
            currency=enum(rng, [0, 1, 2]),
            seated_player_ids=[text(rng, owners) for _ in range(rng.randrange(3))],
            settled_hand_id=text(rng, ["", "t-1-1"]),
        )
    return w.ListTransfersRequest(
        account_id=text(rng, ids),
        page_size=rng.choice([0, 1, -1, 500, 501, INT32_MAX, INT32_MIN]),
        page_token=text(rng, ["", "1", "0", "9" * 18, "9" * 19, "-1"]),
    )


def _wallet_requests(rng: random.Random, accounts: list[str]) -> list[tuple[str, str, bytes]]:
    """``(identity, method, body)`` triples: who calls (the caller table decides), what, which bytes."""
    ids = [*accounts, "player_cash:ghost:cash", "house_rake:house:cash", "external:house:cash", "house_rake:x:cash"]
    owners = ["alice", "house", "mallory", "t-1", "_bad", "a" * 64, "a" * 65]
    amounts = [MAX_TRANSFER, MAX_BALANCE, INT32_MAX]
    kinds = list(w.AccountKind.values())
    transfer_kinds = list(w.TransferKind.values())
    out: list[tuple[str, str, bytes]] = []
    for _ in range(REQUESTS):
        method = rng.choice(
            ["OpenAccount", "Deposit", "Withdraw", "Transfer", "GetBalance", "ListTransfers", "ReconcileEscrow"]
        )
        key = f"fz-{rng.randrange(40)}" if rng.random() < 0.6 else text(rng, ["k"])
        message = _wallet_message(rng, method, key, ids, owners, amounts, kinds, transfer_kinds)
        body = message.SerializeToString()  # type: ignore[attr-defined]
        if rng.random() < 0.2:
            body = garbage(rng, body)
        identity = "dealer" if method in ("OpenAccount", "Transfer", "ReconcileEscrow") else "operator"
        out.append((identity, method, body))
    return out


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_fuzzed_wallet_requests_get_precise_statuses_and_rejections_change_nothing(request, backend: str) -> None:
    proc = wallet_process(request, backend, WALLET_MAX_TRANSFER=str(MAX_TRANSFER), WALLET_MAX_BALANCE=str(MAX_BALANCE))
    try:
        with stubs(proc) as (operator, dealer):
            accounts = []
            for owner in ("ann", "bob"):
                opened = dealer.OpenAccount(
                    w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=owner), timeout=10
                )
                accounts.append(opened.account.account_id)
                operator.Deposit(
                    w.DepositRequest(account_id=accounts[-1], amount=900, idempotency_key=owner), timeout=10
                )
            table = dealer.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_TABLE_ESCROW, owner="t-1"), timeout=10)
            accounts.append(table.account.account_id)
            codes: Counter[grpc.StatusCode] = Counter()
            channels = {name: secure_channel(proc.address, name) for name in ("operator", "dealer")}
            try:
                before = summary(operator)
                for identity, method, body in _wallet_requests(random.Random(SEED), accounts):
                    code = answer(channels[identity], f"/cardroom.v1.Wallet/{method}", body)
                    codes[code] += 1
                    assert code not in FORBIDDEN, (method, body[:200], code)
                    after = summary(operator)
                    if code != grpc.StatusCode.OK:
                        assert after == before, (method, body[:200], code)
                    before = after
            finally:
                for channel in channels.values():
                    channel.close()
            assert_sound(operator)
        # The fuzz reached the checks it is meant to: successes, bad input, missing accounts, the bounds.
        assert {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND} <= set(codes), codes
        assert codes[grpc.StatusCode.INVALID_ARGUMENT] > REQUESTS // 3, codes
        assert no_tracebacks(proc) == []
    finally:
        assert proc.stop() == 0


# ---------------------------------------------------------------------------- the evaluator


def _cards(rng: random.Random, counts: list[int]) -> list[str]:
    cards = [str(c) for c in rng.sample(DECK, rng.choice(counts))]
    if rng.random() < 0.15 and cards:
        cards[rng.randrange(len(cards))] = text(rng, ["Ah", "Zz", "10h", "ah", "AH"])
    if rng.random() < 0.1 and cards:
        cards.append(cards[0])  # a duplicate
    return cards


def _evaluator_requests(rng: random.Random) -> list[tuple[str, bytes]]:
    games = list(common_pb2.Game.values())
    rankings = list(ev.Ranking.values())
    out: list[tuple[str, bytes]] = []
    for _ in range(REQUESTS):
        method = rng.choice(["Evaluate", "Showdown", "Equity"])
        make: dict[str, Callable[[], object]] = {
            "Evaluate": lambda: ev.EvaluateRequest(
                ranking=enum(rng, rankings), hole=_cards(rng, [0, 2, 4, 5, 7, 8]), board=_cards(rng, [0, 3, 5, 6])
            ),
            "Showdown": lambda: ev.ShowdownRequest(
                game=enum(rng, games),
                board=_cards(rng, [0, 1, 3, 5]),
                players=[
                    ev.ShowdownPlayer(seat=rng.choice([1, 2, 3, 9, 0, -1, INT32_MAX]), hole=_cards(rng, [2, 4, 5, 7]))
                    for _ in range(rng.choice([0, 1, 2, 3]))
                ],
                pots=[
                    ev.Pot(
                        amount=integer(rng, [INT64_MAX // 2]),
                        eligible_seats=rng.sample([1, 2, 3, 9, 0, -1], rng.randint(0, 3)),
                    )
                    for _ in range(rng.choice([0, 1, 2, 3, 65]))
                ],
                button_seat=rng.choice([0, 1, 9, -1, INT32_MAX, INT32_MIN]),
                hand_id=text(rng, ["h"]),
            ),
            "Equity": lambda: ev.EquityRequest(
                game=enum(rng, games),
                players=[
                    common_pb2.CardList(cards=_cards(rng, [2, 2, 4, 3])) for _ in range(rng.choice([0, 1, 2, 3, 7, 11]))
                ],
                board=_cards(rng, [0, 3, 4, 5, 2]),
                dead=_cards(rng, [0, 0, 1, 40]),
                samples=rng.choice([0, 1, 2000, 2001, -1, INT32_MAX, INT32_MIN]),
                max_exhaustive=rng.choice([0, 1, 10_000, 10_001, -1, INT64_MAX, INT64_MIN]),
                seed=rng.choice([0, 1, 2**64 - 1]),
            ),
        }
        message = make[method]()
        body = message.SerializeToString()  # type: ignore[attr-defined]
        if rng.random() < 0.2:
            body = garbage(rng, body)
        out.append((method, body))
    return out


def test_fuzzed_evaluator_requests_get_precise_statuses() -> None:
    env = {
        "EVALUATOR_EQUITY_MAX_SAMPLES": "2000",
        "EVALUATOR_EQUITY_MAX_EXHAUSTIVE": "10000",
        "EVALUATOR_EQUITY_MAX_EVALUATIONS": "4000",
    }
    proc = ServiceProcess("evaluator", env, tls=True).start()
    known = ev.EquityRequest(
        game=common_pb2.GAME_HOLDEM,
        players=[common_pb2.CardList(cards=["Ah", "Kh"]), common_pb2.CardList(cards=["Qs", "Qd"])],
        board=["2c", "7d", "9h"],
    )
    try:
        with secure_channel(proc.address, "dealer") as dealer, secure_channel(proc.address, "operator") as operator:
            first = operator.unary_unary(
                "/cardroom.v1.Evaluator/Equity",
                request_serializer=ev.EquityRequest.SerializeToString,
                response_deserializer=ev.EquityResponse.FromString,
            )(known, timeout=30)
            codes: Counter[grpc.StatusCode] = Counter()
            for method, body in _evaluator_requests(random.Random(SEED)):
                code = answer(operator, f"/cardroom.v1.Evaluator/{method}", body)
                codes[code] += 1
                assert code not in FORBIDDEN, (method, body[:200], code)
            # The dealer may call Showdown but not Equity: the caller table answers before any parsing.
            assert answer(dealer, "/cardroom.v1.Evaluator/Equity", b"\xff\xff") == grpc.StatusCode.PERMISSION_DENIED
            again = operator.unary_unary(
                "/cardroom.v1.Evaluator/Equity",
                request_serializer=ev.EquityRequest.SerializeToString,
                response_deserializer=ev.EquityResponse.FromString,
            )(known, timeout=30)
        assert again == first
        assert {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT} <= set(codes), codes
        assert codes[grpc.StatusCode.INVALID_ARGUMENT] > REQUESTS // 3, codes
        assert no_tracebacks(proc) == []
    finally:
        assert proc.stop() == 0
