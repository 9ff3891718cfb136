"""Issue 14, "Proof kept in the suite": "A chaos test: bots through the gateway for minutes while every
service (and the broker) is killed with -9 in turn and restarted by the supervisor; at the end ledger
sum 0, no negative balance, escrow = stacks, every balance = deposits + results, rake = records' rake,
no table frozen (each deals again within a bound), nothing stranded."

The card room is ``make run``'s own (scripts/run.py: mutual TLS, Kafka with SCRAM and ACLs, its demo
bot tables through the gateway), and its supervisor restarts each service killed here, the broker
included (``make run`` watches the pid file of deploy/kafka/kafka.sh and starts it again).

Between kills the test waits for the restart and for every table to deal again; a table that does
not deal within the bound is frozen and fails the test. At the end the bots stand up (Ctrl-C) and the
money is checked against the wallet's ledger and the dealer's hand records. ``make run`` deals with two
dealer replicas (issue 16): the kill -9 of ``dealer`` moves its tables to ``dealer-2`` and back, and the
broker's kill may move partitions between them (a replica's buffered records of a hand the new owner
cancelled are then aborted: Kafka transactions, docs/sharding.md).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from cardroom.runtime.events import decode_envelope
from cardroom.runtime.kafka_auth import KafkaCredentials, client_settings
from cardroom.runtime.trust import TlsFiles, channel_credentials
from cardroom.v1 import common_pb2, dealer_pb2 as d, dealer_pb2_grpc, wallet_pb2 as w, wallet_pb2_grpc
from tests.e2e.checks import hand_records
from tests.infra.procfs import service_pid
from tests.kafka_read import records_so_far

ROOT = Path(__file__).resolve().parents[2]
# Ports of their own, next to the session broker's (CARDROOM_TEST_KAFKA_PORT) and below the kernel's
# ephemeral range: the broker on BASE (and BASE+1), gRPC BASE+10.., metrics BASE+20..
BASE = int(os.environ.get("CARDROOM_TEST_KAFKA_PORT", "19092")) + 600
PORT_OFFSET = BASE + 10 - 20051
METRICS_OFFSET = BASE + 20 - 9101
#: Killed with -9 in this order, each once ("kafka" is the broker).
VICTIMS = ("evaluator", "wallet", "connection_monitor", "dealer", "gateway", "tournament", "kafka")
#: Hands every table deals after each recovery (more than one: the one in flight at the kill may finish
#: on its own).
HANDS_AFTER = 2
#: Bounds on waiting (never asserted as speeds): a restart, a table dealing again.
RESTART_BOUND = 120.0
DEAL_BOUND = 120.0
SERVICE_LINE = re.compile(r"^([\w-]+) grpc=(\S+) metrics=\S+$")  # dealer-2: a dealer replica
BOTS_LINE = re.compile(r"^bots game=(\S+) pid=(\d+) ")


class Console:
    """make run's stdout, read by a thread (the supervisor prints while the test waits on other things)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._proc = proc
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float, what: str, start: int = 0) -> int:
        """The index of the first line from ``start`` on that satisfies ``predicate``."""
        deadline = time.monotonic() + timeout
        while True:
            for i in range(start, len(self.lines)):
                if predicate(self.lines[i]):
                    return i
            assert self._proc.poll() is None, f"make run exited ({self._proc.returncode}):\n{self.text()[-4000:]}"
            assert time.monotonic() < deadline, f"{what} not in {timeout:.0f} s:\n{self.text()[-4000:]}"
            time.sleep(0.2)


def _wait(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:.0f} s"
        time.sleep(0.5)


class Dealers:
    """make run's dealer replicas (``dealer``, ``dealer-2``, …: docs/sharding.md), asked as one dealer: the
    tables every replica that answers lists (a table two list while it moves: the further one), a table's
    state from the replica that deals it."""

    def __init__(self, stubs: list[dealer_pb2_grpc.DealerStub]) -> None:
        self.stubs = stubs

    def ListTables(self, request: d.ListTablesRequest, timeout: float) -> d.ListTablesResponse:
        found: dict[str, d.TableInfo] = {}
        answered = 0
        for stub in self.stubs:
            try:
                tables = stub.ListTables(request, timeout=timeout).tables
            except grpc.RpcError:
                continue
            answered += 1
            for info in tables:
                if info.table_id not in found or info.hands_dealt > found[info.table_id].hands_dealt:
                    found[info.table_id] = info
        if not answered:
            raise AssertionError("no dealer replica answers")
        return d.ListTablesResponse(tables=list(found.values()))

    def GetTable(self, request: d.GetTableRequest, timeout: float) -> d.TableState:
        error: grpc.RpcError | None = None
        for stub in self.stubs:
            try:
                return stub.GetTable(request, timeout=timeout)
            except grpc.RpcError as exc:  # not dealt there (UNAVAILABLE), or that replica is down
                error = exc
        assert error is not None
        raise error


def _hands(dealer: Dealers) -> dict[str, int]:
    """Hands dealt per demo table, or {} while the dealer does not answer."""
    try:
        tables = dealer.ListTables(d.ListTablesRequest(), timeout=5).tables
    except AssertionError:
        return {}
    return {t.table_id: t.hands_dealt for t in tables if t.table_id.startswith("demo-")}


def _deal_again(dealer: Dealers, tables: set[str], what: str) -> dict[str, int]:
    """Wait until every table has dealt HANDS_AFTER hands more than once the dealer answers again."""
    deadline = time.monotonic() + DEAL_BOUND
    while not (base := _hands(dealer)) or not tables <= set(base):
        assert time.monotonic() < deadline, f"after {what}: the dealer lists {sorted(base)}, not {sorted(tables)}"
        time.sleep(0.5)
    while True:
        now = _hands(dealer)
        behind = {t: (base[t], now.get(t)) for t in tables if now.get(t, 0) < base[t] + HANDS_AFTER}
        if not behind:
            return now
        assert time.monotonic() < deadline, f"after {what}: frozen tables (hands then, now): {behind}; " + "; ".join(
            _seats(dealer, t) for t in sorted(behind)
        )
        time.sleep(0.5)


def _seats(dealer: Dealers, table_id: str) -> str:
    """A frozen table's seats, for the failure message: who is short, sitting out, away or owed chips."""
    try:
        state = dealer.GetTable(d.GetTableRequest(table_id=table_id), timeout=5)
    except grpc.RpcError as err:
        return f"{table_id}: {err.code().name}"
    seats = ", ".join(
        f"{v.seat}:{v.player_id} stack={v.stack} out={v.sitting_out} bb_wait={v.waiting_for_big_blind} "
        f"connected={v.connected} queued={v.queued_chips}"
        for v in state.seats
    )
    return f"{table_id} hand {state.hand_number} in_hand={state.in_hand}: {seats}"


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_service_and_the_broker_killed_in_turn_under_bots(tmp_path: Path) -> None:
    state = tmp_path / "state"
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "run.py"), "--kafka-port", str(BASE)]
        + [f"--port-offset={PORT_OFFSET}", f"--metrics-offset={METRICS_OFFSET}", "--state-dir", str(state)]
        + ["--no-web", "--no-prometheus", "--bots-think-ms", "20", "--bots-hand-pause", "0.2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    console = Console(proc)
    channels: list[grpc.Channel] = []
    try:
        console.wait_for(lambda line: line.startswith("logs:"), 240, "make run's start")
        addresses = {m.group(1): m.group(2) for line in console.lines if (m := SERVICE_LINE.match(line))}
        bots = {m.group(1): int(m.group(2)) for line in console.lines if (m := BOTS_LINE.match(line))}
        assert set(VICTIMS) - {"kafka"} <= set(addresses), console.text()
        assert len(bots) >= 2, console.text()
        operator = channel_credentials(TlsFiles.load(state / "pki" / "operator"))

        def channel(name: str) -> grpc.Channel:
            channels.append(grpc.secure_channel(addresses[name], operator))
            return channels[-1]

        replicas = sorted(name for name in addresses if name == "dealer" or name.startswith("dealer-"))
        assert len(replicas) >= 2, console.text()  # make run's dealer shards: the kill moves tables (issue 16)
        dealer = Dealers([dealer_pb2_grpc.DealerStub(channel(name)) for name in replicas])
        wallet = wallet_pb2_grpc.WalletStub(channel("wallet"))
        _wait(lambda: len(_hands(dealer)) == len(bots), 120, f"{len(bots)} bot tables")
        tables = set(_hands(dealer))
        _deal_again(dealer, tables, "the start")

        for victim in VICTIMS:
            seen = len(console.lines)
            if victim == "kafka":  # make run supervises the broker too (its pid file)
                os.kill(int((state / "kafka" / "kafka.pid").read_text()), signal.SIGKILL)
            else:
                os.kill(service_pid(state, victim), signal.SIGKILL)
            console.wait_for(
                lambda line, v=victim: line.startswith(f"{v} restarted"), RESTART_BOUND, f"{victim}'s restart", seen
            )
            died = "kafka exited; restarting" if victim == "kafka" else f"{victim} exited with status -9"
            assert died in console.text()
            _deal_again(dealer, tables, f"the kill -9 of {victim}")
            dead = [game for game, pid in bots.items() if not _alive(pid)]
            assert not dead, f"bots of {dead} ended after the kill of {victim}:\n{console.text()[-3000:]}"
            print(f"chaos: {victim} killed, every table dealt again: {_hands(dealer)}", flush=True)

        # Nobody was restarted but the victims, once each.
        restarts = re.findall(r"^(\w+) restarted \(restart (\d+)\)$", console.text(), re.MULTILINE)
        assert sorted(restarts) == sorted((v, "1") for v in VICTIMS), console.text()

        # Ctrl-C to the bots: they stand up, their stacks go back to the wallets (nothing stranded).
        for pid in bots.values():
            os.kill(pid, signal.SIGINT)
        _wait(lambda: not any(_alive(pid) for pid in bots.values()), 60, "the bots' exit")
        final = dealer.ListTables(d.ListTablesRequest(), timeout=10).tables
        _wait(
            lambda: all(not dealer.GetTable(d.GetTableRequest(table_id=t), timeout=5).info.seats_taken for t in tables),
            60,
            "every seat stood up",
        )
        escrows = {t.table_id: f"table_escrow:{t.table_id}:{_money(t)}" for t in final if t.table_id in tables}
        _wait(
            lambda: all(
                wallet.GetBalance(w.GetBalanceRequest(account_id=a), timeout=5).balance == 0 for a in escrows.values()
            ),
            60,
            "empty escrows once the tables are empty (escrow = stacks = 0)",
        )
        summary = wallet.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
        assert summary.totals and all(t.sum == 0 for t in summary.totals), summary
        assert summary.negative_accounts == 0 and summary.mismatched_accounts == 0, summary

        # Every balance = deposits + hand results; the house's rake = the records' rake.
        password = (state / "kafka" / "credentials" / "operator").read_text().strip()
        settings = client_settings(KafkaCredentials("operator", password, "SASL_PLAINTEXT"))
        envelopes = [
            decode_envelope(r.value)
            for r in records_so_far(f"127.0.0.1:{BASE}", "cardroom.hand.records", linger=2, **settings)
        ]
        records, _ = hand_records(envelopes)
        records = [r for r in records if r.table_id in tables]
        ids = [r.hand_id for r in records]
        assert len(ids) == len(set(ids)), "a hand has two different records"
        assert len(records) >= len(tables) * HANDS_AFTER * len(VICTIMS)
        nets: dict[str, int] = defaultdict(int)
        money: dict[str, str] = {}
        for r in records:
            for player, net in r.nets.items():
                nets[player] += net
                money[player] = _money(next(t for t in final if t.table_id == r.table_id))
        rake = sum(r.fields["_rake"] for r in records)
        assert sum(nets.values()) + rake == 0
        for player, net in nets.items():
            account = f"player_{money[player]}:{player}:{money[player]}"
            balance = wallet.GetBalance(w.GetBalanceRequest(account_id=account), timeout=5).balance
            transfers = wallet.ListTransfers(
                w.ListTransfersRequest(account_id=account, page_size=1000), timeout=5
            ).transfers
            deposits = sum(t.amount for t in transfers if t.kind == w.TRANSFER_KIND_DEPOSIT)
            assert deposits > 0 and balance == deposits + net, (player, balance, deposits, net)
        house = {
            kind: wallet.GetBalance(w.GetBalanceRequest(account_id=f"house_rake:house:{kind}"), timeout=5).balance
            for kind in set(money.values())
        }
        assert sum(house.values()) == rake, (house, rake)
    finally:
        for ch in channels:
            ch.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=150)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert proc.returncode == 0, console.text()[-4000:]
    assert "stopped." in console.text()


def _alive(pid: int) -> bool:
    """A bots process still running (not a zombie: make run reaps them only when it stops)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _money(table: d.TableInfo) -> str:
    """``play`` or ``cash``: the account kind of a table's chips."""
    return "play" if table.config.currency == common_pb2.CURRENCY_PLAY else "cash"
