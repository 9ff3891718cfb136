"""A tournament in a real browser (issue 18): Debian's Chromium (web/e2e/tournament.mjs) through
Envoy's gRPC-Web proxy to the real gateway, tournament service, dealer and wallet on a real Kafka,
the tournament's tables on the dealer (``TOURNAMENT_TABLES=dealer``).

A 6-seat No Limit Hold'em Sit & Go: five bots (:class:`cardroom.client.tournament_bots.TournamentBots`,
registered and playing through the gateway) and the page's player, who finds it in the lobby (status,
entrants, buy-in + fee, prize pool, level and blinds), registers from its details (the sixth entrant:
it starts), opens his table from the details once it runs and plays a few hands there — the same
table view as the cash tables, with no buy-in, no chips to add and no leaving — then goes back to the
lobby. Checked: the lobby's figures against the tournament service; the page's table is the dealer's
``tt.<tournament>.1``; the stacks the page showed after each hand are the dealer's (its hand results
on the tournament tables topic); no card of another player in the page before the showdown
(rules/000, Hold'em: "At this time each player can see his own cards but not those of his
opponents."); and his buy-in and fee left his cash account (the wallet, and the gateway's
MyBalance), the prize pool holding the six buy-ins.

Bounded: a few hands, not the whole tournament (a Sit & Go on the dealer may stall mid-tournament:
being fixed in the dealer). Screenshots of each step: the test's tmp_path/screens."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from cardroom.client.tournament_bots import TournamentBots, TournamentBotSettings
from cardroom.core import ids
from cardroom.v1 import (
    common_pb2,
    gateway_pb2 as g,
    gateway_pb2_grpc,
    tournament_pb2 as t,
    tournament_pb2_grpc,
    tournament_tables_pb2 as tt,
    wallet_pb2 as w,
    wallet_pb2_grpc,
)
from tests.e2e.stack import OPERATOR_TOKEN, Stack
from tests.services.dealer_fixtures import read_topic
from tests.web.conftest import web_room
from tests.web.proxy import ROOT, EnvoyProcess

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

OPERATOR = (("authorization", f"Operator {OPERATOR_TOKEN}"),)
BUY_IN, FEE, STACK, FUNDS = 500, 50, 1500, 2000
HANDS = 3
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def tournament_room(kafka) -> Iterator[tuple[Stack, EnvoyProcess, str]]:
    """The card room with the tournament service, its tables on the dealer, and Envoy."""
    yield from web_room(kafka.bootstrap, tournaments=True, tournament_tables="dealer")


class Bots:
    """:class:`TournamentBots` in a thread of their own, until :meth:`stop`."""

    def __init__(self, settings: TournamentBotSettings) -> None:
        self.bots = TournamentBots(settings)
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            await self.bots.run()

        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            pass
        except BaseException as exc:  # reported by the test
            self.error = exc

    def start(self) -> Bots:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(30)


def create_sit_and_go(stack: Stack) -> str:
    tid = f"web-sng-{uuid.uuid4().hex[:6]}"
    with stack.channel("tournament") as channel:
        tournament_pb2_grpc.TournamentStub(channel).CreateTournament(
            t.CreateTournamentRequest(
                tournament_id=tid,
                name=f"Web Sit & Go {tid[-6:]}",
                format=t.TOURNAMENT_FORMAT_SNG,
                variant="NT",
                buy_in=BUY_IN,
                fee=FEE,
                starting_stack=STACK,
                max_entrants=6,
                level_seconds=300,  # the blinds stay put while the page plays its hands
                hand_interval_seconds=1.5,  # the page's result stays up long enough to be read
                action_seconds=30,  # no decision of the page's player times out on a loaded machine
            ),
            timeout=20,
        )
    return tid


def sign_up_and_fund(stack: Stack, player: str) -> None:
    """The page's player with a password account and cash for the buy-in and fee."""
    with grpc.insecure_channel(stack.address("gateway")) as channel:
        gateway_pb2_grpc.GatewayStub(channel).SignUp(g.SignUpRequest(player_id=player, password=PASSWORD), timeout=30)
        gateway_pb2_grpc.GatewayOperatorStub(channel).FundPlayer(
            g.FundPlayerRequest(
                player_id=player, currency=common_pb2.CURRENCY_CASH, amount=FUNDS, idempotency_key=f"web-{player}"
            ),
            metadata=OPERATOR,
            timeout=10,
        )


def drive(envoy: EnvoyProcess, chromium: str, env: dict[str, str]) -> dict:
    env = {**os.environ, **env, "BASE_URL": envoy.url, "CHROMIUM": chromium}
    result = subprocess.run(
        ["node", "e2e/tournament.mjs"], cwd=ROOT / "web", env=env, capture_output=True, text=True, timeout=540
    )
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert lines, f"the browser driver printed nothing (status {result.returncode}):\n{result.stderr[-3000:]}"
    seen = json.loads(lines[-1])
    assert result.returncode == 0 and "error" not in seen, (
        f"{seen.get('error')}\nconsole: {seen.get('console')}\nfailed: {seen.get('failedRequests')}\n"
        f"last decisions: {seen.get('decisions', [])[-2:]}\nenvoy:\n{envoy.logs()[-2000:]}"
    )
    return seen


def hands_on_the_dealer(stack: Stack, tid: str) -> dict[int, dict[str, int]]:
    """Table 1's hands as the dealer reported them to the tournament: hand number -> player -> chips
    after it (the tournament tables topic)."""
    out: dict[int, dict[str, int]] = {}
    for envelope, event in read_topic(
        stack.bootstrap, stack.topics["tournament_tables"], tt.TournamentTableEvent, 1500
    ):
        if envelope.key == tid and event.HasField("hand_ended") and event.table == 1:
            ended = event.hand_ended
            if not ended.rolled_back:
                out[ended.hand_number] = {s.player_id: s.chips for s in ended.ending}
    return out


def blinds(level: t.TournamentLevel) -> str:
    return f"{level.small_blind}/{level.big_blind}" + (f", ante {level.ante}" if level.ante else "")


def test_register_and_play_a_sit_and_go_on_the_dealer_in_chromium(tournament_room, tmp_path: Path) -> None:
    stack, envoy, chromium = tournament_room
    tid = create_sit_and_go(stack)
    player = f"web{uuid.uuid4().hex[:8]}"
    sign_up_and_fund(stack, player)
    bots = Bots(
        TournamentBotSettings(
            gateway=stack.address("gateway"),
            operator_token=OPERATOR_TOKEN,
            tournament_id=tid,
            players=5,
            fund=BUY_IN + FEE,
            think_ms=300,
            seed=18,
            progress_every=3600,
        )
    ).start()
    screens = tmp_path / "screens"
    try:
        with stack.channel("tournament") as channel:
            service = tournament_pb2_grpc.TournamentStub(channel)
            deadline = time.monotonic() + 120
            while (info := service.GetTournament(t.GetTournamentRequest(tournament_id=tid), timeout=10)).entrants < 5:
                assert bots.error is None, bots.error
                assert time.monotonic() < deadline, f"the bots did not register: {info.entrants}"
                time.sleep(0.3)
            first_level = info.blinds
            env = {"PLAYER": player, "PASSWORD": PASSWORD, "TOURNAMENT": tid, "HANDS": str(HANDS)}
            seen = drive(envoy, chromium, env | {"ARTIFACTS": str(screens)})
            running = service.GetTournament(t.GetTournamentRequest(tournament_id=tid), timeout=10)
    finally:
        bots.stop()
    assert bots.error is None, bots.error

    # A screenshot per step, real PNG files; no request failed and the pages logged no error.
    names = [s["name"] for s in seen["steps"]]
    assert names[:5] == [
        "lobby",
        "tournament-details",
        "tournament-registered",
        "tournament-running",
        "tournament-table",
    ]
    for s in seen["steps"]:
        assert Path(s["path"]).parent == screens and Path(s["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert seen["failedRequests"] == [] and not [c for c in seen["console"] if c.startswith("error")], seen

    # The lobby before: registering, five of six, the buy-in + fee, the prize pool so far, the first
    # level's blinds; after: running, six of six, the six buy-ins in the pool, level 1 and a countdown.
    before = seen["lobbyBefore"]
    assert before["status"] == "registering" and before["cells"]["entrants"] == "5/6", before
    assert before["cells"]["buy-in"] == "$5.00 + $0.50" and before["cells"]["prize-pool"] == "$25.00", before
    assert before["cells"]["level"] == f"not started ({blinds(first_level)})", before
    assert seen["detailsBefore"]["mine"] == "not registered", seen["detailsBefore"]
    assert seen["detailsBefore"]["buttons"] == ["register"], seen["detailsBefore"]
    assert seen["registered"]["message"] == "Registered: $5.50 paid.", seen["registered"]
    after = seen["lobbyRunning"]
    assert after["status"] == "running" and after["cells"]["entrants"] == "6/6", after
    assert int(after["prizePool"]) == 6 * BUY_IN == running.prize_pool and after["cells"]["prize-pool"] == "$30.00"
    assert after["cells"]["level"].startswith("1: ") and after["nextLevelDeadline"], after
    mine = seen["detailsRunning"]["mine"]
    assert mine.startswith("active at table 1, seat "), seen["detailsRunning"]
    assert "open-tournament-table" in seen["detailsRunning"]["buttons"]

    # His table: the dealer's tt.<tournament>.1, the shared table view with nothing of a cash table's
    # buy-in, chips to add, sitting out or leaving, and no wallet balance line.
    table = seen["table"]
    assert table["tableId"] == ids.tournament_table_id(tid, 1) and table["url"].endswith(f"#/tournament/{tid}")
    assert table["sitForms"] == 0 and table["leaveButtons"] == 0 and table["balanceLines"] == 0, table
    assert table["banner"]["status"] == "active" and table["banner"]["table"] == "1", table["banner"]
    assert any(s["me"] and s["player"] == player for s in table["seats"])

    # He played HANDS hands there (or busted meanwhile), acting through the page; the stacks the
    # page showed after each hand are the dealer's.
    assert seen["decisions"] and all("refused" not in x for x in seen["decisions"]), seen["decisions"]
    assert len(seen["hands"]) >= HANDS or seen.get("out") is not None, seen["hands"]
    dealer = hands_on_the_dealer(stack, tid)
    for hand in seen["hands"]:
        assert hand["tableId"] == table["tableId"]
        shown = {s["player"]: int(s["stack"]) for s in hand["seats"] if int(s["stack"]) > 0}
        truth = {p: chips for p, chips in dealer.get(hand["hand"], {}).items() if chips > 0}
        assert shown == truth, (hand["hand"], shown, truth)
        assert sum(truth.values()) == 6 * STACK

    # Only his own hole cards: at every decision (before any showdown) the page holds no card but
    # his two and the board, and every other seat shows backs or nothing.
    for x in seen["decisions"]:
        assert len(x["myCards"]) == 2 and "??" not in x["myCards"], x
        assert set(x["allCards"]) <= set(x["myCards"]) | set(x["board"]), x
        for s in x["seats"]:
            if not s["me"]:
                assert set(s["cards"]) <= {"??"}, s

    # His buy-in and fee left his cash account: the wallet, the page's balance in the lobby after,
    # the gateway's MyBalance. The prize pool's escrow holds the six buy-ins — less the prizes already
    # paid out of it: the Sit & Go goes on at its table after the page and the bots left (the timeout
    # rule), and a player out in a paid place is paid at once. What the pool holds plus what the six
    # were paid (the bots were funded with one entry each) is the six buy-ins, read as one snapshot
    # (the pool the same before and after reading the players).
    entered = {p: 0 for p in bots.bots.names()} | {player: FUNDS - BUY_IN - FEE}
    pool_account = f"tournament_prize_pool:{tid}:cash"
    with stack.channel("wallet") as channel:
        wallet = wallet_pb2_grpc.WalletStub(channel)

        def balance(account: str) -> int:
            return wallet.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10).balance

        deadline = time.monotonic() + 30
        while True:
            pool = balance(pool_account)
            held = {p: balance(ids.player_account_id(p, ids.Currency.CASH)) for p in entered}
            if balance(pool_account) == pool:
                break
            assert time.monotonic() < deadline, "the prize pool kept moving"
    paid = {p: held[p] - entered[p] for p in entered}
    assert all(v >= 0 for v in paid.values()), paid  # nobody paid more than one entry
    assert pool + sum(paid.values()) == 6 * BUY_IN, (pool, paid)
    cash = held[player]
    if seen.get("balances"):
        assert int(next(b for b in seen["balances"] if b["currency"] == "cash")["amount"]) == entered[player]
    with grpc.insecure_channel(stack.address("gateway")) as channel:
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        token = gateway.Login(g.LoginRequest(player_id=player, password=PASSWORD), timeout=10).token
        auth = (("authorization", f"Bearer {token}"),)
        balances = gateway.MyBalance(g.MyBalanceRequest(), metadata=auth, timeout=10)
        status = gateway.MyTournamentStatus(g.MyTournamentStatusRequest(tournament_id=tid), metadata=auth, timeout=10)
    assert {b.currency: b.balance for b in balances.balances}[common_pb2.CURRENCY_CASH] == cash
    assert status.table == 1 or status.place > 0, status
