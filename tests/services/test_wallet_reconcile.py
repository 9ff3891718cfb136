"""Issue 14 item 7, against real processes: "a dealer kill -9 then leaves the chips in an empty table's
escrow … every escrow left without a seat after recovery is reconciled back to its owner automatically
(and counted)".

The wallet runs as a real process with mutual TLS (the dealer's, the gateway's and the operator's
certificates from the harness CA) on the real broker with SASL/SCRAM and the project's ACLs
(``deploy/kafka/kafka.sh KAFKA_AUTH=scram``): it consumes ``cardroom.hand.settled`` as the ``wallet``
user, and the hand is produced there as the ``dealer`` user — the only one the ACLs let write it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import grpc
import pytest

from cardroom.runtime.events import EventProducer, make_envelope
from cardroom.runtime.kafka_auth import KafkaCredentials
from cardroom.v1 import common_pb2, events_pb2, wallet_pb2 as w, wallet_pb2_grpc
from tests.kafka_broker import KafkaBroker, auth_broker_port
from tests.services.pg import PostgresCluster
from tests.services.procs import ServiceProcess, metric_value, secure_channel

pytestmark = pytest.mark.slow

CASH = common_pb2.CURRENCY_CASH
SETTLED = "cardroom.hand.settled"


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    broker = KafkaBroker(auth_broker_port(), auth=True)
    broker.start(fresh=True)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def wallet(request: pytest.FixtureRequest, broker: KafkaBroker) -> Iterator[ServiceProcess]:
    user, password = broker.credentials("wallet")
    env = {
        "KAFKA_BOOTSTRAP": broker.bootstrap,
        "KAFKA_USERNAME": user,
        "KAFKA_PASSWORD": password,
        "WALLET_CONSUMER_GROUP": f"wallet-{uuid.uuid4().hex[:8]}",
        "WALLET_RELAY_INTERVAL": "0.1",
    }
    if request.param == "postgres":
        cluster: PostgresCluster = request.getfixturevalue("postgres")
        env["WALLET_DB_DSN"] = cluster.create_database(f"wallet_{uuid.uuid4().hex[:10]}")
    proc = ServiceProcess("wallet", env, tls=True).start()
    try:
        yield proc
    finally:
        proc.stop()


def _publish_as_dealer(broker: KafkaBroker, settled: events_pb2.HandSettled) -> None:
    """The dealer's hand-settled record (services/dealer/writeahead.py: type, source, key, event id)."""
    producer = EventProducer(
        broker.bootstrap,
        "dealer",
        request_timeout_ms=15_000,
        credentials=KafkaCredentials(*broker.credentials("dealer")),
    )
    try:
        envelope = make_envelope(
            type="cardroom.dealer.hand_settled.v1",
            source="dealer",
            key=settled.table_id,
            sequence=1,
            payload=settled,
            event_id=f"{settled.hand_id}:settled",
        )
        producer.send(SETTLED, envelope).get(timeout=15)
    finally:
        producer.close(2)


def _balance(stub: wallet_pb2_grpc.WalletStub, account: str) -> int:
    return stub.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10).balance


def test_an_escrow_left_without_a_seat_is_paid_back_to_its_owners(wallet: ServiceProcess, broker: KafkaBroker) -> None:
    run = uuid.uuid4().hex[:6]
    table_id, alice_id, bob_id = f"t{run}", f"alice{run}", f"bob{run}"
    escrow = f"table_escrow:{table_id}:cash"
    alice, bob = f"player_cash:{alice_id}:cash", f"player_cash:{bob_id}:cash"
    with (
        secure_channel(wallet.address, "dealer") as dealer_channel,
        secure_channel(wallet.address, "operator") as operator_channel,
        secure_channel(wallet.address, "gateway") as gateway_channel,
    ):
        dealer, operator = wallet_pb2_grpc.WalletStub(dealer_channel), wallet_pb2_grpc.WalletStub(operator_channel)
        gateway = wallet_pb2_grpc.WalletStub(gateway_channel)
        for player in (alice, bob):  # the cashier: accounts and deposits
            owner = player.split(":")[1]
            operator.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=owner), timeout=10)
            operator.Deposit(
                w.DepositRequest(account_id=player, amount=10_000, idempotency_key=f"d-{owner}"), timeout=10
            )
        # the dealer: the table's escrow and two buy-ins
        dealer.OpenAccount(
            w.OpenAccountRequest(kind=w.ACCOUNT_KIND_TABLE_ESCROW, owner=table_id, currency=CASH), timeout=10
        )
        for player, amount in ((alice, 3_000), (bob, 2_000)):
            dealer.Transfer(
                w.TransferRequest(
                    from_account=player,
                    to_account=escrow,
                    amount=amount,
                    kind=w.TRANSFER_KIND_BUY_IN,
                    reference=f"table:{table_id}",
                    idempotency_key=f"buy-{player}",
                ),
                timeout=10,
            )
        # a hand: bob wins 800 of alice's 830, the house takes 30
        hand_id = f"{table_id}-1"
        _publish_as_dealer(
            broker,
            events_pb2.HandSettled(
                hand_id=hand_id,
                table_id=table_id,
                currency=CASH,
                rake=30,
                results=[
                    w.SeatResult(seat=1, player_id=alice_id, net=-830),
                    w.SeatResult(seat=2, player_id=bob_id, net=800),
                ],
            ),
        )
        # After recovery the dealer seats only alice; until the wallet applied the hand it is told to wait.
        request = w.ReconcileEscrowRequest(
            request_id=f"recover-{run}", escrow_account=escrow, seated_player_ids=[alice_id], settled_hand_id=hand_id
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                reply = dealer.ReconcileEscrow(request, timeout=10)
                break
            except grpc.RpcError as err:
                assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err.details()
                assert err.details().startswith("settled_hand_id:"), err.details()
                if time.monotonic() > deadline:
                    raise AssertionError(f"the hand was never applied:\n{wallet.logs()[-3000:]}") from None
                time.sleep(0.2)
        # bob gets exactly his position back (2,000 + 800); the escrow keeps exactly alice's (3,000 - 830)
        assert not reply.replayed and reply.escrow_account == escrow and reply.total_returned == 2_800
        assert [(t.from_account, t.to_account, t.amount, t.kind) for t in reply.transfers] == [
            (escrow, bob, 2_800, w.TRANSFER_KIND_CASH_OUT)
        ]
        assert _balance(dealer, bob) == 8_000 + 2_800
        assert _balance(dealer, escrow) == 2_170
        assert _balance(dealer, "house_rake:house:cash") >= 30
        # the same request again changes nothing
        again = dealer.ReconcileEscrow(request, timeout=10)
        assert again.replayed and list(again.transfers) == list(reply.transfers) and again.total_returned == 2_800
        assert _balance(dealer, bob) == 10_800 and _balance(dealer, escrow) == 2_170
        # only the dealer may call it
        with pytest.raises(grpc.RpcError) as denied:
            gateway.ReconcileEscrow(w.ReconcileEscrowRequest(request_id=f"gw-{run}", escrow_account=escrow), timeout=10)
        assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert _balance(dealer, escrow) == 2_170 and _balance(dealer, alice) == 7_000
        summary = operator.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
        assert all(t.sum == 0 for t in summary.totals) and summary.mismatched_accounts == 0, summary
    metrics = wallet.metrics()
    assert metric_value(metrics, "wallet_escrows_reconciled_total", currency="cash") == 1
    assert metric_value(metrics, "wallet_escrow_chips_returned_total", currency="cash") == 2_800
    assert metric_value(metrics, "wallet_hand_settled_events_total", outcome="applied") >= 1
