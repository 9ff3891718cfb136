"""`cardroom bots` without a hand limit (as `make run` starts it): progress lines while it
plays, and Ctrl-C stands every bot up so the table's escrow goes back to the wallets."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from cardroom.v1 import dealer_pb2 as d, dealer_pb2_grpc, wallet_pb2 as w, wallet_pb2_grpc
from tests.e2e.stack import OPERATOR_TOKEN, PLAY_GRANT, Stack

ROOT = Path(__file__).resolve().parents[2]


def test_bots_until_interrupted(cardroom: Stack) -> None:
    prefix = f"int{cardroom.run}"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cardroom.cli.main",
            "bots",
            "--tables",
            "1",
            "--players-per-table",
            "3",
            "--seats",
            "6",
            "--game",
            "NT",
            "--think-ms",
            "5",
            "--prefix",
            prefix,
            "--hand-pause",
            "0.1",
            "--gateway",
            cardroom.address("gateway"),
            "--operator-token",
            OPERATOR_TOKEN,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    table_id = f"{prefix}-nt-1"
    with cardroom.channel("dealer") as dch, cardroom.channel("wallet") as wch:
        dealer, wallet = dealer_pb2_grpc.DealerStub(dch), wallet_pb2_grpc.WalletStub(wch)
        deadline = time.monotonic() + 60
        while True:
            tables = {t.table_id: t for t in dealer.ListTables(d.ListTablesRequest(), timeout=5).tables}
            if table_id in tables and tables[table_id].hands_dealt >= 5:
                break
            assert time.monotonic() < deadline and proc.poll() is None, "bots did not play 5 hands"
            time.sleep(0.3)
        info = tables[table_id]
        assert info.seats_taken == 3 and info.config.seats == 6  # room left for people
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 130, out
        assert "3 bots at 1 NT tables" in out and "hands/s" in out and "act latency ms p50" in out
        deadline = time.monotonic() + 30
        while (state := dealer.GetTable(d.GetTableRequest(table_id=table_id), timeout=5)).info.seats_taken:
            leaves = [line for line in cardroom.procs["gateway"].metrics().splitlines() if "Leave" in line]
            assert time.monotonic() < deadline, f"the bots did not stand up:\n{state}\n{leaves}\n{out}"
            time.sleep(0.3)
        escrow = f"table_escrow:{table_id}:play"
        while wallet.GetBalance(w.GetBalanceRequest(account_id=escrow), timeout=5).balance:
            assert time.monotonic() < deadline, "the stacks did not go back to the wallets"
            time.sleep(0.3)
        total = sum(
            wallet.GetBalance(w.GetBalanceRequest(account_id=f"player_play:{prefix}nt1p{k}:play"), timeout=5).balance
            for k in (1, 2, 3)
        )
        assert total == 3 * PLAY_GRANT


def test_bots_reconnect_after_a_gateway_restart(cardroom: Stack) -> None:
    """Issue 14 item 14: "`cardroom bots` exits on a gateway restart instead of reconnecting". The
    gateway is killed with -9 and started again while the bots play: they reconnect, log in again
    and their table deals on; Ctrl-C still stands them up and says what happened."""
    prefix = f"rc{cardroom.run}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardroom.cli.main", "bots", "--tables", "1", "--players-per-table", "3"]
        + ["--game", "NT", "--think-ms", "5", "--prefix", prefix, "--hand-pause", "0.1"]
        + ["--gateway", cardroom.address("gateway"), "--operator-token", OPERATOR_TOKEN],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    table_id = f"{prefix}-nt-1"

    def hands(dealer) -> int:
        tables = {t.table_id: t for t in dealer.ListTables(d.ListTablesRequest(), timeout=5).tables}
        return tables[table_id].hands_dealt if table_id in tables else 0

    with cardroom.channel("dealer") as dch:
        dealer = dealer_pb2_grpc.DealerStub(dch)
        deadline = time.monotonic() + 60
        while hands(dealer) < 3:
            assert time.monotonic() < deadline and proc.poll() is None, "bots did not play 3 hands"
            time.sleep(0.3)
        cardroom.restart_gateway()
        before = hands(dealer)
        deadline = time.monotonic() + 90
        while hands(dealer) < before + 3:
            assert proc.poll() is None, f"the bots exited on the gateway restart:\n{proc.stdout.read()}"
            assert time.monotonic() < deadline, "the table did not deal on after the gateway restart"
            time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 130, out
        assert "reconnected" in out, out
        deadline = time.monotonic() + 30
        while dealer.GetTable(d.GetTableRequest(table_id=table_id), timeout=5).info.seats_taken:
            assert time.monotonic() < deadline, "the bots did not stand up after reconnecting"
            time.sleep(0.3)
