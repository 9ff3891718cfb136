"""Issue 15, "Tables on the dealer": a sit & go whose table is played on the dealer — the tournament
service (``TOURNAMENT_TABLES=dealer``), the dealer and the wallet as real processes with mutual TLS,
over the real Kafka broker. The tournament clocks the deals (``deal_on_request``), the dealer plays
each hand (a simple player shoving through the dealer's Act as the gateway passes it, the timeout
rule for the rest), and the tournament learns every result from ``cardroom.tournament.tables`` and
replays it in its core: every chip conserved, places and prizes right, the pool's escrow at zero —
with the tournament service and then the dealer killed (-9) in the middle of it.

rules/000: "the payoffs will be exactly according to the prize payout structure"; "In the event of a
server crash, the hands in progress at every table will be restored by rolling back these hands."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest

from cardroom.client.tournament_bots import TournamentBots, TournamentBotSettings
from cardroom.core import ids
from cardroom.v1 import (
    dealer_pb2 as d,
    dealer_pb2_grpc,
    tournament_pb2 as pb,
    tournament_pb2_grpc,
    tournament_tables_pb2 as tt,
    tournament_tables_pb2_grpc,
    wallet_pb2 as w,
    wallet_pb2_grpc,
)
from tests.services.conftest import make_wallet_env
from tests.services.dealer_fixtures import create_topics, read_topic, wait_for
from tests.services.procs import ServiceProcess, secure_channel

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
FUNDS = 20_000
BUY_IN, FEE, STACK = 1000, 100, 1500
OPERATOR_TOKEN = "tournament-on-the-dealer-operator"


@dataclass
class Room:
    wallet: wallet_pb2_grpc.WalletStub
    operator: tournament_pb2_grpc.TournamentStub
    entries: tournament_pb2_grpc.TournamentStub
    """As the gateway passes the players' entries on."""
    players: dealer_pb2_grpc.DealerStub
    """The dealer as the gateway calls it for players."""
    tables: tournament_tables_pb2_grpc.TournamentTablesStub
    """The dealer as the tournament service calls it (to read the table at the end)."""
    tables_topic: str
    bootstrap: str
    run: str
    procs: dict[str, ServiceProcess]
    channels: list[grpc.Channel]

    def restart(self, name: str) -> None:
        """kill -9 ``name`` and start it again on the same ports, data and settings."""
        old = self.procs[name]
        old.kill()
        self.procs[name] = ServiceProcess(
            name, old.env, grpc_port=old.grpc_port, metrics_port=old.metrics_port, data_dir=old.data_dir, tls=True
        ).start()


@pytest.fixture(scope="module")
def room(request, kafka) -> Iterator[Room]:
    run = uuid.uuid4().hex[:6]
    topics = {
        kind: f"test.{kind}.{run}"
        for kind in ("events", "records", "settled", "snapshots", "connections", "tournament_tables", "tournaments")
    }
    create_topics(kafka.bootstrap, topics)
    wallet = ServiceProcess("wallet", make_wallet_env(request, "sqlite", kafka), tls=True).start()
    dealer = ServiceProcess(
        "dealer",
        {
            "KAFKA_BOOTSTRAP": kafka.bootstrap,
            "WALLET_ADDR": wallet.address,
            "EVALUATOR_ADDR": "off",
            "CONNECTION_MONITOR_ADDR": "off",
            "DEALER_CONNECTION_TOPIC": topics["connections"],
            "DEALER_EVENTS_TOPIC": topics["events"],
            "DEALER_RECORDS_TOPIC": topics["records"],
            "DEALER_SETTLED_TOPIC": topics["settled"],
            "DEALER_SNAPSHOTS_TOPIC": topics["snapshots"],
            "DEALER_TOURNAMENT_TABLES_TOPIC": topics["tournament_tables"],
        },
        tls=True,
    ).start()
    tournament = ServiceProcess(
        "tournament",
        {
            "KAFKA_BOOTSTRAP": kafka.bootstrap,
            "WALLET_ADDR": wallet.address,
            "TOURNAMENT_EVENTS_TOPIC": topics["tournaments"],
            "TOURNAMENT_TICK_SECONDS": "0.02",
            "TOURNAMENT_RELAY_INTERVAL": "0.1",
            "TOURNAMENT_TABLES": "dealer",
            "DEALER_ADDR": dealer.address,
            "TOURNAMENT_TABLES_TOPIC": topics["tournament_tables"],
        },
        tls=True,
    ).start()
    gateway = ServiceProcess(
        "gateway",
        {
            "GATEWAY_SECRET": f"tournament-on-the-dealer-{run}",
            "GATEWAY_OPERATOR_TOKEN": OPERATOR_TOKEN,
            "GATEWAY_DEV_LOGIN": "1",  # the bots log in without a password, as with make run
            "WALLET_ADDR": wallet.address,
            "TOURNAMENT_ADDR": tournament.address,
            "DEALER_ADDR": dealer.address,
            "CONNECTION_MONITOR_ADDR": "off",
            "GATEWAY_ARGON2_MEMORY_KIB": "8192",
            "GATEWAY_ADDRESS_RATE": "100000",
            "GATEWAY_ADDRESS_BURST": "100000",
            "GATEWAY_SIGNUP_BURST": "100",
        },
        tls=True,
    ).start()
    channels = [
        secure_channel(wallet.address, "operator"),
        secure_channel(tournament.address, "operator"),
        secure_channel(tournament.address, "gateway"),
        secure_channel(dealer.address, "gateway"),
        secure_channel(dealer.address, "tournament"),
    ]
    room = Room(
        wallet_pb2_grpc.WalletStub(channels[0]),
        tournament_pb2_grpc.TournamentStub(channels[1]),
        tournament_pb2_grpc.TournamentStub(channels[2]),
        dealer_pb2_grpc.DealerStub(channels[3]),
        tournament_tables_pb2_grpc.TournamentTablesStub(channels[4]),
        topics["tournament_tables"],
        kafka.bootstrap,
        run,
        {"wallet": wallet, "dealer": dealer, "tournament": tournament, "gateway": gateway},
        channels,
    )
    try:
        yield room
    finally:
        for channel in channels:
            channel.close()
        for name in ("gateway", "tournament", "dealer", "wallet"):
            room.procs[name].stop()


def balance(room: Room, account: str) -> int:
    return room.wallet.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10).balance


def paid_out(room: Room, tid: str, info: pb.TournamentInfo) -> None:
    """The pool's escrow ends at zero and every player holds his funds less the buy-in and fee,
    plus his prize."""
    pool = f"tournament_prize_pool:{tid}:cash"
    deadline = time.monotonic() + 60
    while balance(room, pool) != 0:
        assert time.monotonic() < deadline, f"the pool of {tid} holds {balance(room, pool)}"
        time.sleep(0.3)
    for r in info.results:
        assert balance(room, f"player_cash:{r.player_id}:cash") == FUNDS - BUY_IN - FEE + r.prize


def shove(room: Room, table_id: str, stop: threading.Event, acted: list[int], idle: threading.Event) -> None:
    """A simple player for every seat: all in when he may raise, else call, else check (``idle``
    set: he leaves it to the timeout rule)."""
    while not stop.is_set():
        if idle.is_set():
            time.sleep(0.05)
            continue
        try:
            state = room.players.GetTable(d.GetTableRequest(table_id=table_id), timeout=5)
        except grpc.RpcError:
            time.sleep(0.2)
            continue
        if not state.in_hand or not state.HasField("to_act"):
            time.sleep(0.05)
            continue
        to_act = state.to_act
        request = d.ActRequest(
            table_id=table_id, player_id=to_act.player_id, hand_number=state.hand_number, request_id=uuid.uuid4().hex
        )
        kinds = set(to_act.actions)
        if d.ACTION_TYPE_RAISE in kinds or d.ACTION_TYPE_BET in kinds:
            request.action = d.ACTION_TYPE_RAISE if d.ACTION_TYPE_RAISE in kinds else d.ACTION_TYPE_BET
            request.amount = to_act.max_to
        elif d.ACTION_TYPE_CALL in kinds:
            request.action = d.ACTION_TYPE_CALL
        else:
            request.action = d.ACTION_TYPE_CHECK
        try:
            room.players.Act(request, timeout=5)
            acted.append(1)
        except grpc.RpcError:
            time.sleep(0.05)  # the turn moved on meanwhile (a timeout): read the table again


def hands_of(room: Room, tid: str, linger_ms: int = 300) -> list[tt.TournamentHandEnded]:
    return [
        e.hand_ended
        for envelope, e in read_topic(room.bootstrap, room.tables_topic, tt.TournamentTableEvent, linger_ms)
        if envelope.key == tid and e.HasField("hand_ended")
    ]


def wait_hands(room: Room, tid: str, count: int) -> None:
    wait_for(lambda: len(hands_of(room, tid)) >= count, timeout=120, what=f"{count} hands on the dealer")


def in_hand(room: Room, table_id: str) -> None:
    """Until the table is in a hand, someone to act and chips in the pot."""

    def now() -> bool:
        state = room.players.GetTable(d.GetTableRequest(table_id=table_id), timeout=5)
        return state.in_hand and state.HasField("to_act") and state.pot > 0

    wait_for(now, timeout=60, interval=0.02, what="a hand in progress")


def disagreements(room: Room, tid: str) -> list[str]:
    """The tournament service's errors where the core and the dealer disagree on ``tid`` (every
    process since the fixture started: a restart appends to the same log)."""
    return [
        f"{r.get('message')} {r.get('table', '')} {r.get('hand', '')} {r.get('dealer', '')}"
        for r in room.procs["tournament"].log_records()
        if r.get("level") == "ERROR"
        and str(r.get("message", "")).startswith(("a dealer's hand", "table command"))
        and (r.get("tournament_id") == tid or str(r.get("command_id", "")).startswith(f"{tid}:"))
    ]


def test_a_sit_and_go_is_played_to_the_end_on_the_dealer(room: Room) -> None:
    tid = f"sng-{room.run}"
    room.operator.CreateTournament(
        pb.CreateTournamentRequest(
            tournament_id=tid,
            format=pb.TOURNAMENT_FORMAT_SNG,
            variant="NT",
            buy_in=BUY_IN,
            fee=FEE,
            starting_stack=STACK,
            max_entrants=6,
            level_seconds=20,
            hand_interval_seconds=0.05,
            action_seconds=1,
        ),
        timeout=20,
    )
    players = [f"p{i}-{room.run}" for i in range(6)]
    for p in players:
        account = room.wallet.OpenAccount(
            w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=p), timeout=10
        ).account.account_id
        room.wallet.Deposit(w.DepositRequest(account_id=account, amount=FUNDS, idempotency_key=f"fund-{p}"), timeout=10)
    table_id = ids.tournament_table_id(tid, 1)
    stop, idle, acted = threading.Event(), threading.Event(), []
    player = threading.Thread(target=shove, args=(room, table_id, stop, acted, idle), daemon=True)
    player.start()
    try:
        for p in players:
            room.entries.Register(
                pb.TournamentEntryRequest(tournament_id=tid, player_id=p, request_id=f"reg-{p}"), timeout=20
            )
        idle.set()  # the first hands by the timeout rule: long enough to kill the services in one
        wait_hands(room, tid, 2)
        room.restart("tournament")  # kill -9 the tournament service mid-tournament
        wait_hands(room, tid, 4)
        in_hand(room, table_id)
        room.restart("dealer")  # kill -9 the dealer in the middle of a hand
        wait_for(lambda: [h for h in hands_of(room, tid) if h.rolled_back], timeout=60, what="the rolled-back hand")
        idle.clear()
        deadline = time.monotonic() + 300
        while True:
            info = room.operator.GetTournament(
                pb.GetTournamentRequest(tournament_id=tid), timeout=30, wait_for_ready=True
            )
            if info.status == pb.TOURNAMENT_STATUS_FINISHED:
                break
            assert time.monotonic() < deadline, f"{tid} still {pb.TournamentStatus.Name(info.status)}"
            time.sleep(0.3)
    finally:
        stop.set()
        player.join(10)
    assert acted, "nobody acted through the dealer: the hands were not played there"
    assert not disagreements(room, tid)  # the core replayed every hand of the dealer's to the same end

    # The hands were the dealer's: every one conserved the chips, the last left one player with all;
    # the one the dealer's crash interrupted was rolled back (its stacks as at its start) and dealt again.
    hands = hands_of(room, tid, 1500)
    rolled = [h for h in hands if h.rolled_back]
    assert len(rolled) == 1
    again = [h for h in hands if h.hand_number == rolled[0].hand_number and not h.rolled_back]
    assert len(again) == 1 and {s.seat: s.chips for s in again[0].starting} == {
        s.seat: s.chips for s in rolled[0].ending
    }
    for hand in hands:
        assert sum(s.chips for s in hand.starting) == sum(s.chips for s in hand.ending)
    last = hands[-1]
    assert [s.chips for s in last.ending if s.chips] == [6 * STACK]

    # Places and prizes: exactly the structure's; the pool paid in is paid out; the escrow is zero.
    places = {r.player_id: r for r in info.results}
    assert sorted(places) == sorted(players)
    assert sorted(r.place for r in info.results if r.place == r.last_place)[0] == 1
    winner = next(s.player_id for s in last.ending if s.chips)
    assert places[winner].place == 1
    assert sum(r.prize for r in info.results) == info.prize_pool == 6 * BUY_IN
    paid_out(room, tid, info)
    summary = room.wallet.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
    assert all(t.sum == 0 for t in summary.totals) and summary.negative_accounts == 0
    # the dealer's table is closed by the tournament's end, nobody left on it
    deadline = time.monotonic() + 30
    while not (
        state := room.tables.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=1))
    ).closed:
        assert time.monotonic() < deadline, "the tournament's table is still open on the dealer"
        time.sleep(0.2)
    assert not state.seats and state.hands_played == len(hands) - len(rolled)


def test_bots_enter_a_sit_and_go_through_the_gateway_and_play_it_to_the_end(room: Room) -> None:
    """``cardroom bots --tournament ID``: six bots funded through the operator API, registered and
    playing their Pot-Limit Omaha tournament table on the dealer through the gateway's Play, to the end."""
    tid = f"bots-{room.run}"
    room.operator.CreateTournament(
        pb.CreateTournamentRequest(
            tournament_id=tid,
            format=pb.TOURNAMENT_FORMAT_SNG,
            variant="PO",  # PL Omaha: issue 15's "6-player PL Omaha sit & go played to the end by bots"
            buy_in=BUY_IN,
            fee=FEE,
            starting_stack=STACK,
            max_entrants=6,
            level_seconds=15,
            hand_interval_seconds=0.05,
            action_seconds=3,
        ),
        timeout=20,
    )
    bots = TournamentBots(
        TournamentBotSettings(
            gateway=room.procs["gateway"].address,
            operator_token=OPERATOR_TOKEN,
            tournament_id=tid,
            players=6,
            fund=FUNDS,
            seed=15,
            timeout=300,
        )
    )
    places = asyncio.run(bots.run())
    # every bot placed (players out in the same hand with the same starting chips share a place), one winner
    assert len(places) == 6 and all(places.values()) and list(places.values()).count(1) == 1
    assert bots.stats.actions > 0  # they played: the hands were not all timeouts
    info = room.operator.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=10)
    assert info.status == pb.TOURNAMENT_STATUS_FINISHED
    assert {r.player_id: r.place for r in info.results} == places
    paid_out(room, tid, info)
    assert not disagreements(room, tid)
    hands = hands_of(room, tid, 1500)
    assert hands and all(sum(s.chips for s in h.starting) == sum(s.chips for s in h.ending) for h in hands)


def test_a_30_entrant_multi_table_tournament_is_played_to_the_end_on_the_dealer_by_bots(room: Room) -> None:
    """Issue 15's acceptance: a 30-entrant NL Hold'em freeze-out on 6-max tables, played on the
    dealer by bots through the gateway — tables broken and players moved by the tournament between
    hands (the bots follow them), to one winner, with the tournament service and then the dealer
    killed (-9) while it plays; every hand conserves the chips (a hand the dealer's kill interrupted
    is rolled back and dealt again), the places and prizes are the payout table's, the pool paid in
    is paid out and its escrow ends at zero.

    rules/000: "the payoffs will be exactly according to the prize payout structure"; "as players are
    eliminated, players will be moved randomly from one table to another in order to keep the number
    of players at each table as balanced as possible"."""
    tid = f"mtt-{room.run}"
    entrants = 30
    room.operator.CreateTournament(
        pb.CreateTournamentRequest(
            tournament_id=tid,
            format=pb.TOURNAMENT_FORMAT_MTT,
            variant="NT",
            buy_in=BUY_IN,
            fee=FEE,
            starting_stack=STACK,
            min_entrants=entrants,
            max_entrants=entrants,
            start_in_seconds=25,
            late_registration_seconds=0,
            unregister_before_seconds=0,
            seats=6,
            level_seconds=20,
            hand_interval_seconds=0.05,
            action_seconds=3,
        ),
        timeout=20,
    )
    bots = TournamentBots(
        TournamentBotSettings(
            gateway=room.procs["gateway"].address,
            operator_token=OPERATOR_TOKEN,
            tournament_id=tid,
            players=entrants,
            fund=FUNDS,
            seed=30,
            timeout=900,
            progress_every=30,
        )
    )
    restarts: list[str] = []

    def kill_midway() -> None:
        """kill -9 the tournament service as soon as the tournament runs, then the dealer as soon as
        the tournament service is back. The tables deal only when the tournament asks, so no hand is
        dealt while it is down and the event cannot end between the two kills, however fast the bots
        play (on CI they once played all 30 entrants out in under 6 s, before a kill at a hand count)."""

        def running() -> bool:
            info = room.operator.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=5)
            return info.status == pb.TOURNAMENT_STATUS_RUNNING

        wait_for(running, timeout=300, interval=0.05, what="the tournament running")
        for name in ("tournament", "dealer"):
            room.restart(name)
            restarts.append(name)
            print(f"killed and restarted the {name}", flush=True)

    killer = threading.Thread(target=kill_midway, daemon=True)
    killer.start()
    places = asyncio.run(bots.run())
    killer.join(30)
    assert restarts == ["tournament", "dealer"], "the tournament ended before both were killed"
    # wait_for_ready: the channel may still be backing off from the service killed meanwhile
    info = room.operator.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=30, wait_for_ready=True)
    assert info.status == pb.TOURNAMENT_STATUS_FINISHED
    assert len(places) == entrants and list(places.values()).count(1) == 1
    assert {r.player_id: r.place for r in info.results} == places
    assert bots.stats.actions > 0
    hands = hands_of(room, tid, 1500)
    tables = {h.table for h in hands}
    assert len(tables) >= 5  # five tables at the start, broken down to the final one
    assert all(sum(s.chips for s in h.starting) == sum(s.chips for s in h.ending) for h in hands)
    for rolled in (h for h in hands if h.rolled_back):  # the dealer's kill: rolled back, dealt again
        again = [
            h for h in hands if (h.table, h.hand_number) == (rolled.table, rolled.hand_number) and not h.rolled_back
        ]
        assert len(again) == 1 and {s.seat: s.chips for s in again[0].starting} == {
            s.seat: s.chips for s in rolled.ending
        }
    # neither service found the other's word wrong: no hand the core could not replay, no table
    # command the dealer refused (a player seated twice, a move from an empty seat)
    errors = [r for name in ("tournament", "dealer") for r in room.procs[name].log_records() if r["level"] == "ERROR"]
    assert not errors, errors[:5]
    final = [h for h in hands if [s.chips for s in h.ending if s.chips] == [entrants * STACK]]
    assert len(final) == 1, "one hand ends the tournament: one player with every chip"
    assert sum(r.prize for r in info.results) == info.prize_pool == entrants * BUY_IN
    paid = sorted((r.place, r.prize) for r in info.results if r.prize)
    assert [p for p, _ in paid] == sorted(p for p, _ in paid) and paid[0][0] == 1
    assert all(a[1] >= b[1] for a, b in zip(paid, paid[1:], strict=False))  # a better place never pays less
    paid_out(room, tid, info)
    assert not disagreements(room, tid)
