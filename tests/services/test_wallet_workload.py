"""Ledger invariants under a concurrent random workload of 10,000 transfers (plus retries,
concurrent duplicates and conflicting key reuse) from 32 clients, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from tests.services.procs import ServiceProcess, metric_value
from tests.services.workload import Workload, check_invariants, ledger_keys


@pytest.mark.slow
def test_ledger_invariants_under_concurrent_workload(wallet: ServiceProcess, wallet_env: dict[str, str]) -> None:
    work = Workload(wallet.address, run=f"wl{uuid.uuid4().hex[:6]}", operations=10_000)
    started = time.monotonic()
    asyncio.run(work.setup())
    outcome = asyncio.run(work.run_clients())
    elapsed = time.monotonic() - started
    keys = ledger_keys(wallet_env.get("WALLET_DB_DSN"), wallet.data_dir / "wallet.sqlite3", work.run)
    summary = asyncio.run(check_invariants(wallet.address, work, keys))
    applied = len(outcome.ok)
    print(
        f"{applied} transfers applied of {work.operations + work.players} keys, {outcome.requests} requests, "
        f"{outcome.replays} replays, {outcome.conflicts} conflicts, {len(outcome.refused)} refused, {elapsed:.1f}s"
    )
    assert applied >= 9_000, "the workload must really move money"
    assert outcome.replays >= 500 and outcome.conflicts >= 50
    assert set(outcome.refused.values()) <= {__import__("grpc").StatusCode.FAILED_PRECONDITION}
    assert summary.transfers >= applied
    text = wallet.metrics()
    assert metric_value(text, "wallet_ledger_imbalance", currency="cash") == 0
    assert (
        sum(
            metric_value(text, "wallet_transfers_total", kind=k)
            for k in ("deposit", "withdrawal", "buy_in", "cash_out")
        )
        == summary.transfers
    )
