"""kill -9 the wallet in the middle of a concurrent workload and restart it on the same storage:
no acknowledged transfer is lost, none is applied twice, and the outbox drains to Kafka with
exactly one event id per transfer. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict

import grpc
import pytest
from kafka import KafkaConsumer

from cardroom.runtime.events import decode_envelope
from cardroom.v1 import events_pb2, wallet_pb2 as w, wallet_pb2_grpc
from tests.services.procs import ServiceProcess
from tests.services.workload import Workload, check_invariants, ledger_keys

OPERATIONS = 4_000
KILL_AT = 1_500


@pytest.mark.slow
def test_kill_9_mid_workload_loses_and_doubles_nothing(wallet_env: dict[str, str], kafka) -> None:
    first = ServiceProcess("wallet", wallet_env).start()
    procs = [first]
    work = Workload(first.address, run=f"kill{uuid.uuid4().hex[:6]}", operations=OPERATIONS)
    asyncio.run(work.setup())
    state = {"killed_at": None, "restart": None}

    def restart() -> None:
        time.sleep(0.5)  # clients keep retrying against a dead port meanwhile
        procs.append(ServiceProcess("wallet", wallet_env, grpc_port=first.grpc_port, metrics_port=first.metrics_port,
                                    data_dir=first.data_dir).start())

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

        # The outbox drains, and Kafka holds exactly one event id per committed transfer.
        with grpc.insecure_channel(live.address) as channel:
            stub = wallet_pb2_grpc.WalletStub(channel)
            deadline = time.monotonic() + 60
            while stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10).outbox_pending:
                assert time.monotonic() < deadline, "outbox did not drain"
                time.sleep(0.2)
        consumer = KafkaConsumer(wallet_env["WALLET_LEDGER_TOPIC"], bootstrap_servers=kafka.bootstrap,
                                 auto_offset_reset="earliest", consumer_timeout_ms=3_000)
        event_ids: dict[int, set[str]] = defaultdict(set)
        for record in consumer:
            envelope = decode_envelope(record.value)
            event = events_pb2.TransferPosted()
            if envelope.payload.Unpack(event):
                event_ids[event.transfer.transfer_id].add(envelope.event_id)
        consumer.close()
        committed = {tid for tid, _, _, _ in keys.values()}
        assert len(committed) == summary.transfers  # a fresh database: every transfer is this run's
        assert set(event_ids) == committed, "every transfer relayed, nothing invented"
        assert all(len(ids) == 1 for ids in event_ids.values()), "a transfer published under two event ids"
    finally:
        for proc in procs:
            proc.kill()
