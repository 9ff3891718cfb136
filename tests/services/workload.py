"""A concurrent random ledger workload over gRPC (many clients, retries, duplicate keys) and the
checks every run must pass. Used by the invariant test and the kill -9 test."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import psycopg

from cardroom.v1 import wallet_pb2 as w, wallet_pb2_grpc

TK = w.TransferKind
RETRYABLE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
}


@dataclass
class Outcome:
    """What the clients saw: every OK transfer per key, and the keys that were refused."""

    ok: dict[str, list[w.Transfer]] = field(default_factory=lambda: defaultdict(list))
    refused: dict[str, grpc.StatusCode] = field(default_factory=dict)
    replays: int = 0
    conflicts: int = 0
    transport_retries: int = 0
    requests: int = 0


@dataclass
class Workload:
    address: str
    run: str
    operations: int = 10_000
    players: int = 40
    tables: int = 8
    clients: int = 32
    channels: int = 4
    seed: int = 1
    #: called after every completed operation with the count so far (the kill -9 hook)
    on_progress: Callable[[int], Awaitable[None]] | None = None
    outcome: Outcome = field(default_factory=Outcome)

    def player(self, i: int) -> str:
        return f"player_cash:{self.run}-p{i}:cash"

    def table(self, i: int) -> str:
        return f"table_escrow:{self.run}-t{i}:cash"

    async def _call(
        self, stub: wallet_pb2_grpc.WalletStub, method: str, request
    ) -> w.TransferResponse | grpc.StatusCode:
        """One request, retried with the same key through transport failures (crash, restart)."""
        delay = 0.05
        while True:
            self.outcome.requests += 1
            try:
                reply = await getattr(stub, method)(request, timeout=5, wait_for_ready=True)
            except grpc.aio.AioRpcError as err:
                if err.code() in RETRYABLE:
                    self.outcome.transport_retries += 1
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                return err.code()
            if reply.replayed:
                self.outcome.replays += 1
            return reply

    def _record(self, key: str, result: w.TransferResponse | grpc.StatusCode) -> None:
        if isinstance(result, grpc.StatusCode):
            if result == grpc.StatusCode.ALREADY_EXISTS:
                self.outcome.conflicts += 1
            elif key not in self.outcome.ok:
                self.outcome.refused[key] = result
            return
        self.outcome.ok[key].append(result.transfer)
        self.outcome.refused.pop(key, None)

    def _random_request(self, rng: random.Random, key: str) -> tuple[str, object]:
        r = rng.random()
        player, table = self.player(rng.randrange(self.players)), self.table(rng.randrange(self.tables))
        amount = rng.randint(1, 400)
        if r < 0.40:
            return "Transfer", w.TransferRequest(
                from_account=player, to_account=table, amount=amount, kind=TK.TRANSFER_KIND_BUY_IN, idempotency_key=key
            )
        if r < 0.75:
            return "Transfer", w.TransferRequest(
                from_account=table,
                to_account=player,
                amount=amount,
                kind=TK.TRANSFER_KIND_CASH_OUT,
                idempotency_key=key,
            )
        if r < 0.90:
            return "Deposit", w.DepositRequest(account_id=player, amount=amount, idempotency_key=key)
        return "Withdraw", w.WithdrawRequest(account_id=player, amount=amount, idempotency_key=key)

    async def setup(self) -> None:
        async with grpc.aio.insecure_channel(self.address) as channel:
            stub = wallet_pb2_grpc.WalletStub(channel)
            for i in range(self.players):
                await stub.OpenAccount(
                    w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=f"{self.run}-p{i}"), timeout=10
                )
                key = f"{self.run}-seed-{i}"
                self._record(
                    key,
                    await self._call(
                        stub, "Deposit", w.DepositRequest(account_id=self.player(i), amount=5_000, idempotency_key=key)
                    ),
                )
            for i in range(self.tables):
                await stub.OpenAccount(
                    w.OpenAccountRequest(kind=w.ACCOUNT_KIND_TABLE_ESCROW, owner=f"{self.run}-t{i}"), timeout=10
                )

    async def run_clients(self) -> Outcome:
        channels = [grpc.aio.insecure_channel(self.address) for _ in range(self.channels)]
        stubs = [wallet_pb2_grpc.WalletStub(c) for c in channels]
        next_op = iter(range(self.operations))
        done = 0
        issued: list[tuple[str, str, object]] = []

        async def client(n: int) -> None:
            nonlocal done
            rng = random.Random(self.seed * 1000 + n)
            stub = stubs[n % len(stubs)]
            for i in next_op:
                key = f"{self.run}-op-{i}"
                method, request = self._random_request(rng, key)
                roll = rng.random()
                if roll < 0.05:
                    # The same key sent twice at once (a client and its own retry racing).
                    results = await asyncio.gather(self._call(stub, method, request), self._call(stub, method, request))
                    for result in results:
                        self._record(key, result)
                else:
                    self._record(key, await self._call(stub, method, request))
                    if roll < 0.15:  # a retry after a lost response: must replay
                        self._record(key, await self._call(stub, method, request))
                applied = [entry for entry in issued[-200:] if entry[2] in self.outcome.ok]
                if applied and rng.random() < 0.02:
                    # An applied key reused for a different transfer: must be refused, nothing moves.
                    old_method, old_request, _ = applied[rng.randrange(len(applied))]
                    changed = type(old_request)()
                    changed.CopyFrom(old_request)
                    changed.amount += 1
                    result = await self._call(stub, old_method, changed)
                    assert result == grpc.StatusCode.ALREADY_EXISTS, result
                    self.outcome.conflicts += 1
                issued.append((method, request, key))
                done += 1
                if self.on_progress is not None:
                    await self.on_progress(done)

        try:
            await asyncio.gather(*(client(n) for n in range(self.clients)))
        finally:
            for channel in channels:
                await channel.close()
        return self.outcome


def ledger_keys(dsn: str | None, sqlite_path: Path | None, prefix: str) -> dict[str, tuple[int, str, str, int]]:
    """Straight from the database: key -> (transfer id, from, to, amount) for keys with ``prefix``."""
    sql = (
        "SELECT idempotency_key, transfer_id, from_account, to_account, amount FROM transfers "
        "WHERE idempotency_key LIKE {p}"
    )
    if dsn:
        with psycopg.connect(dsn) as conn:
            rows = conn.execute(sql.format(p="%s"), (prefix + "%",)).fetchall()
    else:
        assert sqlite_path is not None
        conn = sqlite3.connect(str(sqlite_path))
        try:
            rows = conn.execute(sql.format(p="?"), (prefix + "%",)).fetchall()
        finally:
            conn.close()
    keys: dict[str, tuple[int, str, str, int]] = {}
    for key, tid, src, dst, amount in rows:
        assert key not in keys, f"key {key} applied twice"
        keys[key] = (int(tid), src, dst, int(amount))
    return keys


async def check_invariants(
    address: str, work: Workload, db_keys: dict[str, tuple[int, str, str, int]]
) -> w.LedgerSummary:
    """Sum zero, no negatives, stored == derived balances, each key applied exactly once and
    exactly the keys some client was told were applied; balances equal the clients' model."""
    outcome = work.outcome
    for key, transfers in outcome.ok.items():
        assert all(t == transfers[0] for t in transfers), f"key {key} answered with different transfers"
    assert set(db_keys) == set(outcome.ok), (
        f"ledger has {len(set(db_keys) - set(outcome.ok))} keys nobody was told about, "
        f"misses {len(set(outcome.ok) - set(db_keys))} acknowledged keys"
    )
    for key, (tid, src, dst, amount) in db_keys.items():
        t = outcome.ok[key][0]
        assert (t.transfer_id, t.from_account, t.to_account, t.amount) == (tid, src, dst, amount), key
    model: dict[str, int] = defaultdict(int)
    for transfers in outcome.ok.values():
        t = transfers[0]
        model[t.from_account] -= t.amount
        model[t.to_account] += t.amount
    async with grpc.aio.insecure_channel(address) as channel:
        stub = wallet_pb2_grpc.WalletStub(channel)
        summary = await stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=30)
        assert [t.sum for t in summary.totals] == [0] * len(summary.totals)
        assert summary.negative_accounts == 0
        assert summary.mismatched_accounts == 0
        for account in [work.player(i) for i in range(work.players)] + [work.table(i) for i in range(work.tables)]:
            balance = (await stub.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10)).balance
            assert balance == model[account] >= 0, account
    return summary
