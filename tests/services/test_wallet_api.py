"""The wallet service as a real process on SQLite and on PostgreSQL: every RPC's happy path,
every rejection's status (and that it changes nothing), rake by gRPC and by Kafka, the outbox."""

from __future__ import annotations

import time
import uuid
from collections import defaultdict

import grpc
import pytest
from kafka import KafkaProducer

from cardroom.runtime.events import decode_envelope, headers_for, make_envelope
from cardroom.v1 import common_pb2, events_pb2, wallet_pb2 as w, wallet_pb2_grpc
from tests.kafka_read import records_so_far
from tests.services.conftest import make_wallet_env
from tests.services.procs import ServiceProcess, metric_value

CASH, PLAY = common_pb2.CURRENCY_CASH, common_pb2.CURRENCY_PLAY
TK = w.TransferKind


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def svc(request, kafka):
    env = make_wallet_env(request, request.param, kafka)
    proc = ServiceProcess("wallet", env).start()
    with grpc.insecure_channel(proc.address) as channel:
        yield proc, wallet_pb2_grpc.WalletStub(channel), env
    assert proc.stop() == 0


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def _open(stub, kind: int, owner: str, currency: int = 0) -> str:
    return stub.OpenAccount(
        w.OpenAccountRequest(kind=kind, owner=owner, currency=currency), timeout=10
    ).account.account_id


def _funded_player(stub, amount: int = 10_000) -> str:
    account = _open(stub, w.ACCOUNT_KIND_PLAYER_CASH, _name("p"))
    stub.Deposit(w.DepositRequest(account_id=account, amount=amount, idempotency_key=_name("dep")), timeout=10)
    return account


def _buy_in(stub, player: str, table: str, amount: int, key: str = "", **extra: str):  # -> w.TransferResponse
    """``player``'s buy-in of ``amount`` at ``table`` (a fresh idempotency key unless ``key``)."""
    return stub.Transfer(
        w.TransferRequest(
            from_account=player,
            to_account=table,
            amount=amount,
            kind=TK.TRANSFER_KIND_BUY_IN,
            idempotency_key=key or _name("b"),
            **extra,
        ),
        timeout=10,
    )


def _balance(stub, account: str) -> int:
    return stub.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10).balance


def _summary(stub) -> w.LedgerSummary:
    """The ledger summary without the outbox backlog (the relay drains it concurrently)."""
    summary = stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
    summary.ClearField("outbox_pending")
    return summary


def _results(rake: int) -> list[w.SeatResult]:
    """A hand's per-seat results that balance with ``rake`` (the dealer names every seat's player)."""
    return [w.SeatResult(seat=1, player_id="ann", net=100), w.SeatResult(seat=2, player_id="bo", net=-100 - rake)]


def _error(call, request) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=10)
    return err.value


def test_open_account_is_idempotent_and_validated(svc) -> None:
    _, stub, _ = svc
    owner = _name("alice")
    first = stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=owner), timeout=10)
    again = stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=owner), timeout=10)
    assert first.created and not again.created
    assert first.account == again.account
    assert first.account.account_id == f"player_cash:{owner}:cash" and first.account.balance == 0
    play = stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_PLAY, owner=owner), timeout=10).account
    assert play.currency == PLAY and play.account_id == f"player_play:{owner}:play"
    table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, _name("t"), PLAY)
    assert table.endswith(":play")

    before = _summary(stub)
    for request, field in [
        (w.OpenAccountRequest(owner=owner), "kind"),
        (w.OpenAccountRequest(kind=42, owner=owner), "kind"),
        (w.OpenAccountRequest(kind=w.ACCOUNT_KIND_EXTERNAL, owner="house"), "kind"),
        (w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=""), "owner"),
        (w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner="bad:owner"), "owner"),
        (w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=owner, currency=PLAY), "currency"),
    ]:
        err = _error(stub.OpenAccount, request)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and err.details().startswith(f"{field}:"), err.details()
    assert _summary(stub) == before


def test_deposit_buy_in_cash_out_withdraw_history(svc) -> None:
    _, stub, _ = svc
    player = _open(stub, w.ACCOUNT_KIND_PLAYER_CASH, _name("bob"))
    table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, _name("t"))
    key = _name("k")
    dep = stub.Deposit(w.DepositRequest(account_id=player, amount=10_000, idempotency_key=key + "1"), timeout=10)
    assert not dep.replayed and dep.transfer.from_account == "external:house:cash"
    assert dep.transfer.to_balance_after == 10_000
    buy = _buy_in(stub, player, table, 4_000, key + "2", reference="seat 3")
    out = stub.Transfer(
        w.TransferRequest(
            from_account=table,
            to_account=player,
            amount=1_500,
            kind=TK.TRANSFER_KIND_CASH_OUT,
            idempotency_key=key + "3",
        ),
        timeout=10,
    )
    wd = stub.Withdraw(w.WithdrawRequest(account_id=player, amount=2_000, idempotency_key=key + "4"), timeout=10)
    assert (buy.transfer.from_balance_after, out.transfer.to_balance_after, wd.transfer.from_balance_after) == (
        6_000,
        7_500,
        5_500,
    )
    assert _balance(stub, player) == 5_500 and _balance(stub, table) == 2_500

    # Retrying any of them returns the first result and moves nothing.
    replay = _buy_in(stub, player, table, 4_000, key + "2", reference="seat 3")
    assert replay.replayed and replay.transfer == buy.transfer
    assert (
        stub.Deposit(w.DepositRequest(account_id=player, amount=10_000, idempotency_key=key + "1"), timeout=10).transfer
        == dep.transfer
    )
    assert _balance(stub, player) == 5_500

    ids, token = [], ""
    while True:
        page = stub.ListTransfers(w.ListTransfersRequest(account_id=player, page_size=3, page_token=token), timeout=10)
        ids += [t.transfer_id for t in page.transfers]
        token = page.next_page_token
        if not token:
            break
    assert ids == [
        dep.transfer.transfer_id,
        buy.transfer.transfer_id,
        out.transfer.transfer_id,
        wd.transfer.transfer_id,
    ]
    table_page = stub.ListTransfers(w.ListTransfersRequest(account_id=table), timeout=10)
    assert [t.kind for t in table_page.transfers] == [TK.TRANSFER_KIND_BUY_IN, TK.TRANSFER_KIND_CASH_OUT]
    assert table_page.next_page_token == ""


def _snapshot(stub, accounts: list[str]) -> tuple:
    return (
        _summary(stub),
        [stub.GetBalance(w.GetBalanceRequest(account_id=a), timeout=10) for a in accounts],
        [stub.ListTransfers(w.ListTransfersRequest(account_id=a, page_size=500), timeout=10) for a in accounts],
    )


def test_rejections_have_precise_statuses_and_change_nothing(svc) -> None:
    _, stub, _ = svc
    player = _funded_player(stub, 1_000)
    play_player = _open(stub, w.ACCOUNT_KIND_PLAYER_PLAY, _name("pp"))
    table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, _name("t"))
    empty_table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, _name("t"))
    used = _name("used")
    stub.Transfer(
        w.TransferRequest(
            from_account=player, to_account=table, amount=100, kind=TK.TRANSFER_KIND_BUY_IN, idempotency_key=used
        ),
        timeout=10,
    )
    ghost = "player_cash:nobody-here:cash"
    INV, NF, FP, AE = (
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ALREADY_EXISTS,
    )

    def transfer(**kw) -> w.TransferRequest:
        base = dict(
            from_account=player, to_account=table, amount=10, kind=TK.TRANSFER_KIND_BUY_IN, idempotency_key=_name("x")
        )
        return w.TransferRequest(**{**base, **kw})

    cases = [
        (stub.Deposit, w.DepositRequest(account_id=player, amount=0, idempotency_key="a"), INV, "amount"),
        (stub.Deposit, w.DepositRequest(account_id=player, amount=-5, idempotency_key="a"), INV, "amount"),
        (stub.Deposit, w.DepositRequest(account_id=player, amount=5), INV, "idempotency_key"),
        (stub.Deposit, w.DepositRequest(account_id="alice", amount=5, idempotency_key="a"), INV, "account_id"),
        (stub.Deposit, w.DepositRequest(account_id=ghost, amount=5, idempotency_key=_name("a")), NF, "to_account"),
        (stub.Deposit, w.DepositRequest(account_id=table, amount=5, idempotency_key=_name("a")), FP, "to_account"),
        (stub.Withdraw, w.WithdrawRequest(account_id=player, amount=5_000, idempotency_key=_name("a")), FP, "amount"),
        (stub.Transfer, transfer(kind=0), INV, "kind"),
        (stub.Transfer, transfer(to_account=player), INV, "to_account"),
        (stub.Transfer, transfer(from_account=table, to_account=player), FP, "from_account"),
        (
            stub.Transfer,
            transfer(kind=TK.TRANSFER_KIND_CASH_OUT, from_account=empty_table, to_account=player),
            FP,
            "amount",
        ),
        (stub.Transfer, transfer(from_account=play_player), FP, "to_account"),
        (stub.Transfer, transfer(to_account="table_escrow:no-such-table:cash"), NF, "to_account"),
        # a buy-in is bounded by the balance; money from outside by WALLET_MAX_TRANSFER (default 10^12)
        (stub.Transfer, transfer(amount=10**16), FP, "amount"),
        (
            stub.Deposit,
            w.DepositRequest(account_id=player, amount=10**12 + 1, idempotency_key=_name("a")),
            INV,
            "amount",
        ),
        (stub.Transfer, transfer(idempotency_key=used, amount=101), AE, "idempotency_key"),
        (stub.Transfer, transfer(idempotency_key=used, reference="other"), AE, "idempotency_key"),
        (stub.GetBalance, w.GetBalanceRequest(account_id=ghost), NF, "account_id"),
        (stub.GetBalance, w.GetBalanceRequest(account_id="x:y"), INV, "account_id"),
        (stub.ListTransfers, w.ListTransfersRequest(account_id=player, page_token="zz"), INV, "page_token"),
        (stub.ListTransfers, w.ListTransfersRequest(account_id=player, page_size=-1), INV, "page_size"),
        (stub.ListTransfers, w.ListTransfersRequest(account_id=ghost), NF, "account_id"),
        (stub.PostRake, w.PostRakeRequest(table_id="t", rake=5), INV, "hand_id"),
        (stub.PostRake, w.PostRakeRequest(hand_id=_name("h"), table_id="t", rake=-1), INV, "rake"),
        (
            stub.PostRake,
            w.PostRakeRequest(
                hand_id=_name("h"),
                table_id=table.split(":")[1],
                rake=5,
                results=[w.SeatResult(seat=1, net=5), w.SeatResult(seat=2, net=-5)],
            ),
            INV,
            "results",
        ),
        (stub.PostRake, w.PostRakeRequest(hand_id=_name("h"), table_id="t", rake=5, results=[]), INV, "results"),
        (
            stub.PostRake,
            w.PostRakeRequest(
                hand_id=_name("h"),
                table_id="t",
                rake=5,
                results=[w.SeatResult(seat=1, net=5), w.SeatResult(seat=2, net=-10)],
            ),
            INV,
            "results",
        ),  # no player_id: the nets move the players' positions in the escrow
        (
            stub.PostRake,
            w.PostRakeRequest(hand_id=_name("h"), table_id="no-such-table", rake=5, results=_results(5)),
            NF,
            "table_id",
        ),
        (
            stub.PostRake,
            w.PostRakeRequest(hand_id=_name("h"), table_id=empty_table.split(":")[1], rake=5, results=_results(5)),
            FP,
            "amount",
        ),
    ]
    before = _snapshot(stub, [player, table, empty_table, play_player])
    for call, request, code, field in cases:
        err = _error(call, request)
        assert err.code() == code, (request, err.details())
        assert err.details().startswith(f"{field}:"), err.details()
    assert _snapshot(stub, [player, table, empty_table, play_player]) == before


def test_post_rake_once_per_hand(svc) -> None:
    proc, stub, _ = svc
    player = _funded_player(stub)
    table_id = _name("t")
    table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, table_id)
    _buy_in(stub, player, table, 2_000)
    house = "house_rake:house:cash"
    before_house, before_metrics = _balance(stub, house), proc.metrics()
    hand = _name("hand")
    request = w.PostRakeRequest(
        hand_id=hand,
        table_id=table_id,
        rake=30,
        currency=CASH,
        results=[w.SeatResult(seat=1, player_id="a", net=170), w.SeatResult(seat=4, player_id="b", net=-200)],
    )
    first = stub.PostRake(request, timeout=10)
    second = stub.PostRake(request, timeout=10)
    assert not first.replayed and second.replayed and first.transfer == second.transfer
    assert first.transfer.idempotency_key == f"rake:{hand}" and first.transfer.kind == TK.TRANSFER_KIND_RAKE
    assert _balance(stub, house) == before_house + 30 and _balance(stub, table) == 1_970
    zero = stub.PostRake(
        w.PostRakeRequest(hand_id=_name("hand"), table_id=table_id, rake=0, results=_results(0)), timeout=10
    )
    assert not zero.HasField("transfer")
    err = _error(stub.PostRake, w.PostRakeRequest(hand_id=hand, table_id=table_id, rake=31, results=_results(31)))
    assert err.code() == grpc.StatusCode.ALREADY_EXISTS
    after = proc.metrics()
    assert (
        metric_value(after, "wallet_rake_collected_total", currency="cash")
        - metric_value(before_metrics, "wallet_rake_collected_total", currency="cash")
        == 30
    )
    assert metric_value(after, "wallet_transfer_replays_total", kind="rake") >= 1


def _wait(predicate, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def test_hand_settled_events_post_rake_exactly_once(svc, kafka) -> None:
    proc, stub, env = svc
    player = _funded_player(stub, 100_000)
    table_id = _name("t")
    table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, table_id)
    _buy_in(stub, player, table, 50_000)
    house = "house_rake:house:cash"
    before_house = _balance(stub, house)
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, acks="all")

    def send(payload, key: str, source: str = "dealer", event_id: str | None = None) -> None:
        hand_id = getattr(payload, "hand_id", "")
        envelope = make_envelope(
            type="cardroom.dealer.hand_settled.v1",
            source=source,
            key=key,
            sequence=1,
            payload=payload,
            event_id=event_id or f"{hand_id}:settled",
        )
        producer.send(
            env["WALLET_HANDS_TOPIC"],
            key=key.encode(),
            value=envelope.SerializeToString(),
            headers=headers_for(envelope),
        )

    def settled(number: int, rake: int, table: str = table_id) -> events_pb2.HandSettled:
        return events_pb2.HandSettled(
            hand_id=f"{table}-{number}", table_id=table, currency=CASH, rake=rake, results=_results(rake)
        )

    hands = [(f"{table_id}-{1 + i}", 10 + i) for i in range(20)]
    for _ in range(2):  # every event delivered twice: at-least-once delivery
        for i in range(len(hands)):
            send(settled(1 + i, hands[i][1]), table_id)
    send(
        events_pb2.HandSettled(
            hand_id=f"{table_id}-900", table_id=table_id, rake=5, results=[w.SeatResult(seat=1, net=7)]
        ),
        table_id,
    )  # does not add up
    send(events_pb2.AccountOpened(), table_id)  # not a hand
    # Forgeries the consumer refuses (issue 14: consumers verify what they apply), each moving nothing:
    send(settled(901, 40), table_id, source="gateway")  # not the dealer's
    send(settled(902, 40), "other-table")  # keyed by another table
    send(settled(903, 40), table_id, event_id="made-up")  # not the dealer's event id for the hand
    send(events_pb2.HandSettled(hand_id=f"{table_id}-904", table_id=table_id, rake=40), table_id)  # no results
    other = settled(905, 40)
    other.hand_id = "other-table-905"  # another table's hand drawn from this escrow
    send(other, table_id)
    send(settled(906, 1), table_id)
    producer.flush()
    producer.close()
    expected = sum(r for _, r in hands) + 1
    try:
        _wait(lambda: _balance(stub, house) - before_house == expected, timeout=90, what="rake from Kafka")
    except AssertionError as exc:
        got = _balance(stub, house) - before_house
        raise AssertionError(f"{exc}: {got} of {expected}; the wallet said:\n{proc.logs()[-3000:]}") from None
    time.sleep(1.0)
    assert _balance(stub, house) - before_house == expected
    assert _balance(stub, table) == 50_000 - expected
    for hand, rake in hands:
        reply = stub.PostRake(
            w.PostRakeRequest(hand_id=hand, table_id=table_id, rake=rake, results=_results(rake)), timeout=10
        )
        assert reply.replayed
    text = proc.metrics()
    assert metric_value(text, "wallet_hand_settled_events_total", outcome="applied") >= 21
    assert metric_value(text, "wallet_hand_settled_events_total", outcome="duplicate") >= 20
    assert metric_value(text, "wallet_hand_settled_events_total", outcome="rejected") >= 6
    assert metric_value(text, "wallet_hand_settled_events_total", outcome="ignored") >= 1


def test_ledger_events_are_relayed_through_the_outbox(svc, kafka) -> None:
    proc, stub, env = svc
    player = _funded_player(stub, 5_000)
    table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, _name("t"))
    buy = _buy_in(stub, player, table, 1_000)
    _wait(
        lambda: stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10).outbox_pending == 0,
        what="outbox drained",
    )
    ours = {
        t.transfer_id: t for t in stub.ListTransfers(w.ListTransfersRequest(account_id=player), timeout=10).transfers
    }
    seen: dict[int, events_pb2.TransferPosted] = {}
    opened, sequences = set(), defaultdict(list)
    for record in records_so_far(kafka.bootstrap, env["WALLET_LEDGER_TOPIC"]):  # the outbox is empty
        envelope = decode_envelope(record.value)
        assert record.key == envelope.key.encode() and envelope.source == "wallet"
        assert dict(record.headers)["ce_id"] == envelope.event_id.encode()
        sequences[envelope.key].append(envelope.sequence)
        if envelope.type == "cardroom.wallet.transfer_posted.v1":
            event = events_pb2.TransferPosted()
            assert envelope.payload.Unpack(event)
            assert envelope.key == event.transfer.from_account
            seen[event.transfer.transfer_id] = event
        elif envelope.type == "cardroom.wallet.account_opened.v1":
            event = events_pb2.AccountOpened()
            assert envelope.payload.Unpack(event)
            opened.add(event.account.account_id)
    assert {player, table} <= opened
    for transfer_id, transfer in ours.items():
        assert seen[transfer_id].transfer == transfer
    assert seen[buy.transfer.transfer_id].transfer == buy.transfer
    for key, seqs in sequences.items():
        assert seqs == sorted(seqs), key
    text = proc.metrics()
    _wait(lambda: metric_value(proc.metrics(), "wallet_outbox_pending") == 0, what="pending gauge 0")
    assert metric_value(text, "wallet_outbox_published_total") >= len(ours)


def test_ledger_invariants_hold(svc) -> None:
    proc, stub, _ = svc
    summary = stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
    assert summary.transfers > 0
    assert [t.sum for t in summary.totals] == [0, 0]
    assert summary.negative_accounts == 0 and summary.mismatched_accounts == 0
    _wait(
        lambda: (
            metric_value(proc.metrics(), "wallet_ledger_imbalance", currency="cash") == 0
            and "wallet_ledger_imbalance" in proc.metrics()
        ),
        what="imbalance gauge",
    )


def test_tournament_and_play_money_routes(svc) -> None:
    _, stub, _ = svc
    owner = _name("carol")
    cash = _funded_player(stub, 1_000)
    tour = _name("tour")
    pool = _open(stub, w.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, tour)
    fees = _open(stub, w.ACCOUNT_KIND_TOURNAMENT_FEES, "house")
    key = _name("t")

    def move(src: str, dst: str, amount: int, kind: int, n: int) -> w.Transfer:
        return stub.Transfer(
            w.TransferRequest(
                from_account=src,
                to_account=dst,
                amount=amount,
                kind=kind,
                reference=f"tournament:{tour}",
                idempotency_key=f"{key}-{n}",
            ),
            timeout=10,
        ).transfer

    move(cash, pool, 100, TK.TRANSFER_KIND_TOURNAMENT_ENTRY, 1)
    move(cash, fees, 10, TK.TRANSFER_KIND_TOURNAMENT_FEE, 2)
    move(pool, cash, 60, TK.TRANSFER_KIND_TOURNAMENT_PRIZE, 3)
    move(pool, cash, 40, TK.TRANSFER_KIND_TOURNAMENT_REFUND, 4)
    assert (_balance(stub, cash), _balance(stub, pool)) == (990, 0)
    err = _error(
        stub.Transfer,
        w.TransferRequest(
            from_account=pool,
            to_account=cash,
            amount=1,
            kind=TK.TRANSFER_KIND_TOURNAMENT_PRIZE,
            idempotency_key=_name("x"),
        ),
    )
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and err.details().startswith("amount:")

    # Play money lives beside cash and never mixes with it.
    play = _open(stub, w.ACCOUNT_KIND_PLAYER_PLAY, owner)
    play_table = _open(stub, w.ACCOUNT_KIND_TABLE_ESCROW, _name("pt"), PLAY)
    dep = stub.Deposit(w.DepositRequest(account_id=play, amount=50_000, idempotency_key=_name("pd")), timeout=10)
    assert dep.transfer.from_account == "external:house:play"
    move(play, play_table, 20_000, TK.TRANSFER_KIND_BUY_IN, 5)
    err = _error(
        stub.Transfer,
        w.TransferRequest(
            from_account=play_table,
            to_account=cash,
            amount=1,
            kind=TK.TRANSFER_KIND_CASH_OUT,
            idempotency_key=_name("x"),
        ),
    )
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and err.details().startswith("to_account:")
    summary = stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
    assert {t.currency: t.sum for t in summary.totals} == {CASH: 0, PLAY: 0}


def test_health_and_reflection(svc) -> None:
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    proc, _, _ = svc
    with grpc.insecure_channel(proc.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", "cardroom.v1.Wallet"):
            assert (
                health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5).status
                == health_pb2.HealthCheckResponse.SERVING
            )
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
        names = {s.name for reply in replies for s in reply.list_services_response.service}
    assert {"cardroom.v1.Wallet", "grpc.health.v1.Health"} <= names
