"""kill -9 the wallet in the middle of a concurrent workload and restart it on the same storage:
no acknowledged transfer is lost, none is applied twice, every hand-settled event consumed around
the crash posts its rake exactly once, and the outbox drains to Kafka with exactly one event id
per transfer. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict

import grpc
import pytest
from kafka import KafkaProducer

from cardroom.runtime.events import decode_envelope, make_envelope
from cardroom.v1 import common_pb2, events_pb2, wallet_pb2 as w, wallet_pb2_grpc
from tests.kafka_read import records_so_far
from tests.services.procs import ServiceProcess
from tests.services.workload import Workload, check_invariants, ledger_keys

OPERATIONS = 4_000
KILL_AT = 1_500
HANDS = 1_500


def _rake_table(address: str, run: str) -> str:
    """A table escrow (outside the workload's accounts) holding enough chips for every rake."""
    with grpc.insecure_channel(address) as channel:
        stub = wallet_pb2_grpc.WalletStub(channel)
        player = stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=f"rk-{run}"), timeout=10)
        table_id = f"rk-{run}-table"
        table = stub.OpenAccount(w.OpenAccountRequest(kind=w.ACCOUNT_KIND_TABLE_ESCROW, owner=table_id), timeout=10)
        stub.Deposit(
            w.DepositRequest(account_id=player.account.account_id, amount=100_000, idempotency_key=f"rk-{run}-dep"),
            timeout=10,
        )
        stub.Transfer(
            w.TransferRequest(
                from_account=player.account.account_id,
                to_account=table.account.account_id,
                amount=100_000,
                kind=w.TRANSFER_KIND_BUY_IN,
                idempotency_key=f"rk-{run}-buy",
            ),
            timeout=10,
        )
    return table_id


def _send_hands(bootstrap: str, topic: str, table_id: str, run: str) -> int:
    """Publish HANDS hand-settled events; returns the total rake."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    total = 0
    for i in range(HANDS):
        rake = 1 + i % 3
        total += rake
        event = events_pb2.HandSettled(
            hand_id=f"{table_id}-{i + 1}",
            table_id=table_id,
            currency=common_pb2.CURRENCY_CASH,
            rake=rake,
            results=[
                w.SeatResult(seat=1, player_id="ann", net=10),
                w.SeatResult(seat=2, player_id="bo", net=-10 - rake),
            ],
        )
        envelope = make_envelope(
            type="cardroom.dealer.hand_settled.v1",
            source="dealer",
            key=table_id,
            sequence=i + 1,
            payload=event,
            event_id=f"{event.hand_id}:settled",
        )
        producer.send(topic, key=table_id.encode(), value=envelope.SerializeToString())
    producer.flush()
    producer.close()
    return total


def stub_summary(address: str) -> w.LedgerSummary:
    with grpc.insecure_channel(address) as channel:
        return wallet_pb2_grpc.WalletStub(channel).GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=30)


@pytest.mark.slow
def test_kill_9_mid_workload_loses_and_doubles_nothing(wallet_env: dict[str, str], kafka) -> None:
    first = ServiceProcess("wallet", wallet_env).start()
    procs = [first]
    work = Workload(first.address, run=f"kill{uuid.uuid4().hex[:6]}", operations=OPERATIONS)
    asyncio.run(work.setup())
    table_id = _rake_table(first.address, work.run)
    total_rake = _send_hands(kafka.bootstrap, wallet_env["WALLET_HANDS_TOPIC"], table_id, work.run)
    state = {"killed_at": None, "restart": None}

    def restart() -> None:
        time.sleep(0.5)  # clients keep retrying against a dead port meanwhile
        procs.append(
            ServiceProcess(
                "wallet",
                wallet_env,
                grpc_port=first.grpc_port,
                metrics_port=first.metrics_port,
                data_dir=first.data_dir,
            ).start()
        )

    async def chaos(done: int) -> None:
        if done == KILL_AT and state["killed_at"] is None:
            state["killed_at"] = done
            first.kill()  # SIGKILL: no shutdown hook, no graceful stop, in-flight calls cut
            state["restart"] = asyncio.get_running_loop().run_in_executor(None, restart)

    work.on_progress = chaos
    try:

        async def drive() -> None:
            await work.run_clients()
            await state["restart"]

        asyncio.run(drive())
        assert first.proc is not None and first.proc.returncode == -9
        assert len(procs) == 2, "the wallet was restarted"
        assert work.outcome.transport_retries > 0, "clients really saw the crash"
        live = procs[-1]
        keys = ledger_keys(wallet_env.get("WALLET_DB_DSN"), live.data_dir / "wallet.sqlite3", work.run)
        summary = asyncio.run(check_invariants(live.address, work, keys))
        assert len(keys) >= OPERATIONS * 0.9

        # Every hand's rake exactly once, although some events were consumed twice around the crash.
        everything = ledger_keys(wallet_env.get("WALLET_DB_DSN"), live.data_dir / "wallet.sqlite3", "")
        with grpc.insecure_channel(live.address) as channel:
            stub = wallet_pb2_grpc.WalletStub(channel)
            table = f"table_escrow:{table_id}:cash"
            deadline = time.monotonic() + 60
            while stub.GetBalance(w.GetBalanceRequest(account_id=table), timeout=10).balance != 100_000 - total_rake:
                assert time.monotonic() < deadline, "rake from Kafka not fully posted"
                time.sleep(0.2)
            everything = ledger_keys(wallet_env.get("WALLET_DB_DSN"), live.data_dir / "wallet.sqlite3", "")
            rakes = [k for k in everything if k.startswith(f"rake:{table_id}-")]
            assert len(rakes) == HANDS
            assert (
                stub.GetBalance(w.GetBalanceRequest(account_id="house_rake:house:cash"), timeout=10).balance
                == total_rake
            )

        # The outbox drains, and Kafka holds exactly one event id per committed transfer.
        with grpc.insecure_channel(live.address) as channel:
            stub = wallet_pb2_grpc.WalletStub(channel)
            deadline = time.monotonic() + 60
            while stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10).outbox_pending:
                assert time.monotonic() < deadline, "outbox did not drain"
                time.sleep(0.2)
        event_ids: dict[int, set[str]] = defaultdict(set)
        for record in records_so_far(kafka.bootstrap, wallet_env["WALLET_LEDGER_TOPIC"]):  # the outbox is empty
            envelope = decode_envelope(record.value)
            event = events_pb2.TransferPosted()
            if envelope.payload.Unpack(event):
                event_ids[event.transfer.transfer_id].add(envelope.event_id)
        summary = stub_summary(live.address)
        committed = {tid for tid, _, _, _ in everything.values()}
        assert len(committed) == summary.transfers  # a fresh database: every transfer is this run's
        assert set(event_ids) == committed, "every transfer relayed, nothing invented"
        assert all(len(ids) == 1 for ids in event_ids.values()), "a transfer published under two event ids"
    finally:
        for proc in procs:
            proc.kill()


@pytest.mark.slow
def test_postgres_restart_is_survived(kafka) -> None:
    """A PostgreSQL restart breaks every pooled connection; the wallet reconnects and retries
    (safe: each operation is idempotent), so clients see no error and nothing is doubled."""
    from tests.services.pg import start_cluster

    cluster = start_cluster()
    proc = ServiceProcess(
        "wallet", {"WALLET_DB_DSN": cluster.create_database("restart"), "KAFKA_BOOTSTRAP": kafka.bootstrap}
    ).start()
    try:
        with grpc.insecure_channel(proc.address) as channel:
            stub = wallet_pb2_grpc.WalletStub(channel)
            account = stub.OpenAccount(
                w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner="pgr"), timeout=10
            ).account.account_id
            for i in range(5):
                stub.Deposit(w.DepositRequest(account_id=account, amount=10, idempotency_key=f"before-{i}"), timeout=10)
            cluster.restart()
            for i in range(20):  # more calls than pooled connections: every broken one gets used
                stub.Deposit(w.DepositRequest(account_id=account, amount=10, idempotency_key=f"after-{i}"), timeout=10)
            assert stub.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10).balance == 250
            summary = stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
            assert summary.transfers == 25 and summary.mismatched_accounts == 0
    finally:
        proc.stop()
        cluster.stop()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite"])
def test_transfers_go_on_while_kafka_is_down_and_the_outbox_drains_after(
    wallet: ServiceProcess, wallet_env: dict[str, str], kafka
) -> None:
    from tests.services.procs import metric_value

    with grpc.insecure_channel(wallet.address) as channel:
        stub = wallet_pb2_grpc.WalletStub(channel)
        account = stub.OpenAccount(
            w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner="outage"), timeout=10
        ).account.account_id
        kafka.stop()
        try:
            ids = [
                stub.Deposit(
                    w.DepositRequest(account_id=account, amount=1, idempotency_key=f"out-{i}"), timeout=10
                ).transfer.transfer_id
                for i in range(200)
            ]
            time.sleep(1.5)
            assert stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10).outbox_pending >= 200
            assert metric_value(wallet.metrics(), "wallet_outbox_lag_seconds") > 0
        finally:
            kafka.start()
        deadline = time.monotonic() + 90
        while stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10).outbox_pending:
            assert time.monotonic() < deadline, "outbox did not drain after Kafka came back"
            time.sleep(0.5)
    relayed = set()
    for record in records_so_far(kafka.bootstrap, wallet_env["WALLET_LEDGER_TOPIC"]):  # the outbox is empty
        event = events_pb2.TransferPosted()
        if decode_envelope(record.value).payload.Unpack(event):
            relayed.add(event.transfer.transfer_id)
    assert set(ids) <= relayed
