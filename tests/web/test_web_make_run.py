"""The web client against ``make run`` (issue 18: "End-to-end in a real browser ... against `make
run`"): ``scripts/run.py`` (what ``make run`` runs) starts its own broker, every service, Envoy with
the web build and the demo bot tables; Debian's Chromium (web/e2e/table.mjs) opens the printed
``web ui=`` address, signs up, opens the Hold'em bot table from the lobby, sits down and plays
hands against the bots, then leaves. Checked: the page acted through the gateway (no refusal), it
showed the stacks and results after each hand, no card of another player at any decision
(rules/000, Hold'em: "At this time each player can see his own cards but not those of his
opponents."), and the balances the page showed are the gateway's. Then SIGTERM stops the run.
Screenshots of each step: the test's tmp_path/screens."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import IO

import grpc
import pytest

from cardroom.v1 import common_pb2, gateway_pb2 as g, gateway_pb2_grpc
from tests.web.proxy import ROOT, install_chromium

pytestmark = [pytest.mark.slow]

# Apart from tests/infra/test_make_run.py's ports, shifted with the test broker's port as it does.
_SHIFT = int(os.environ.get("CARDROOM_TEST_KAFKA_PORT", "19092")) - 19092
KAFKA_PORT = 28192 + _SHIFT
PORT_OFFSET = 5100 + _SHIFT
METRICS_OFFSET = 20100 + _SHIFT
PASSWORD = "correct horse battery"
HANDS = 3


def drain(stream: IO[str], lines: list[str]) -> None:
    for line in stream:
        lines.append(line.rstrip("\n"))


def test_play_hold_em_at_a_make_run_bot_table_in_chromium(tmp_path: Path) -> None:
    chromium = install_chromium()
    state = tmp_path / "state"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "scripts" / "run.py"),
            "--kafka-port",
            str(KAFKA_PORT),
            f"--port-offset={PORT_OFFSET}",
            f"--metrics-offset={METRICS_OFFSET}",
            "--state-dir",
            str(state),
            "--no-prometheus",
            "--bots-think-ms",
            "300",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    try:
        assert proc.stdout is not None
        timer = threading.Timer(300, proc.kill)  # a run that never comes up fails instead of hanging
        timer.start()
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines[-1].startswith("logs:"):
                break
        timer.cancel()
        output = "\n".join(lines)
        web = next((m.group(1) for line in lines if (m := re.match(r"^web ui=(http://\S+)$", line))), None)
        gateway = next((m.group(1) for line in lines if (m := re.match(r"^gateway grpc=(\S+) ", line))), None)
        assert web and gateway and re.search(r"^bots game=NT ", output, re.MULTILINE), output
        threading.Thread(target=drain, args=(proc.stdout, lines), daemon=True).start()  # a full pipe would block it

        # The Hold'em bot table, once its bots are seated (through the gateway's lobby).
        with grpc.insecure_channel(gateway) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            auth = (("authorization", f"Bearer {stub.Login(g.LoginRequest(player_id='look'), timeout=10).token}"),)
            deadline = time.monotonic() + 120
            while True:
                tables = [
                    t for t in stub.Lobby(g.LobbyRequest(), metadata=auth, timeout=10).tables if t.variant == "NT"
                ]
                if tables and tables[0].seats_taken >= 2:
                    break
                assert time.monotonic() < deadline, f"no Hold'em bot table: {tables}"
                time.sleep(1)
        table = tables[0]

        player, screens = f"web{uuid.uuid4().hex[:8]}", tmp_path / "screens"
        env = {
            **os.environ,
            "BASE_URL": web,
            "CHROMIUM": chromium,
            "ARTIFACTS": str(screens),
            "PLAYER": player,
            "PASSWORD": PASSWORD,
            "TABLE": table.table_id,
            "BUY_IN": str(table.min_buy_in),
            "HANDS": str(HANDS),
            "PLANS": "call",
        }
        result = subprocess.run(
            ["node", "e2e/table.mjs"], cwd=ROOT / "web", env=env, capture_output=True, text=True, timeout=540
        )
        printed = [line for line in result.stdout.splitlines() if line.strip()]
        assert printed, f"the browser driver printed nothing (status {result.returncode}):\n{result.stderr[-3000:]}"
        seen = json.loads(printed[-1])
        assert result.returncode == 0 and "error" not in seen, (
            f"{seen.get('error')}\nconsole: {seen.get('console')}\nfailed: {seen.get('failedRequests')}"
        )
        with grpc.insecure_channel(gateway) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            token = stub.Login(g.LoginRequest(player_id=player, password=PASSWORD), timeout=10).token
            mine = stub.MyBalance(g.MyBalanceRequest(), metadata=(("authorization", f"Bearer {token}"),), timeout=10)
        balance = {b.currency: b.balance for b in mine.balances}[common_pb2.CURRENCY_PLAY]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # what Ctrl-C does: the run stops everything it started
            try:
                proc.wait(180)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(30)
    assert proc.returncode == 0, "\n".join(lines[-40:])

    names = [s["name"] for s in seen["steps"]]
    assert names[:3] == ["lobby", "table-before-sitting", "seated"] and names[-2:] == [
        "lobby-after-leaving",
        "lobby-history",
    ]
    assert sum(n.endswith("-result") for n in names) >= HANDS
    for s in seen["steps"]:
        assert Path(s["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert seen["failedRequests"] == [] and not [c for c in seen["console"] if c.startswith("error")], seen
    assert seen["buyInLimits"][0] == str(table.min_buy_in)

    # The page acted through the gateway (never refused), saw hands end with its own seat at the
    # table and every chip accounted for on the table, and never held another player's hole card.
    assert seen["decisions"] and all("refused" not in x for x in seen["decisions"]), seen["decisions"]
    assert len(seen["hands"]) >= HANDS
    for hand in seen["hands"]:
        assert any(s["player"] == player and s["me"] for s in hand["seats"]) and hand["results"], hand
        assert hand["pot"] == "0" and re.search(r"wins \d+", " ".join(hand["results"])), hand
    for x in seen["decisions"]:
        mine = next(s for s in x["seats"] if s["me"])
        assert len(mine["cards"]) == 2 and "??" not in mine["cards"], x
        assert set(x["allCards"]) <= set(mine["cards"]) | set(x["board"]), x
        assert all(set(s["cards"]) <= {"??"} for s in x["seats"] if not s["me"]), x

    # The balances the page showed are the gateway's: after sitting, the sign-up grant less the
    # buy-in; after leaving, what the gateway's MyBalance said then.
    assert table.currency == common_pb2.CURRENCY_PLAY
    grant = int(re.search(r'^PLAY_MONEY_GRANT = "(\d+)"', (ROOT / "scripts" / "run.py").read_text(), re.M).group(1))
    assert int(seen["hands"][0]["balance"]) == grant - table.min_buy_in
    assert int(next(b for b in seen["lobbyBalance"] if b["currency"] == "play")["amount"]) == balance
