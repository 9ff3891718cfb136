"""The tournament service as a real process beside a real wallet process and the real Kafka broker
(issue 15): whole tournaments played to the end on the in-process tables, every cent checked
against the wallet's ledger (pool in = pool out, escrow zero, fee to the house), events on
``cardroom.tournament.events`` keyed by tournament id, precise statuses for bad input, and a
kill -9 mid-tournament after which it finishes with the right places and prizes.

Tables do not yet run on the dealer: the tournament service plays them in-process
(services/tournament/inprocess.py); the dealer's contract is protos/cardroom/v1/tournament_tables.proto.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest

from cardroom.runtime.errors import reason_of
from cardroom.runtime.events import decode_envelope
from cardroom.v1 import tournament_pb2 as pb, tournament_pb2_grpc, wallet_pb2 as w, wallet_pb2_grpc
from tests.kafka_read import records_so_far
from tests.services.conftest import make_wallet_env
from tests.services.procs import ServiceProcess, metric_value, tournament_service

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
FEES = "tournament_fees:house:cash"
FUNDS = 20_000


@dataclass
class Room:
    wallet: ServiceProcess
    tournament: ServiceProcess
    topic: str
    wallet_stub: wallet_pb2_grpc.WalletStub
    stub: tournament_pb2_grpc.TournamentStub
    run: str

    def name(self, what: str) -> str:
        return f"{what}-{self.run}-{uuid.uuid4().hex[:4]}"

    def players(self, n: int, funds: int = FUNDS) -> list[str]:
        out = []
        for i in range(n):
            player = self.name(f"p{i}")
            account = self.wallet_stub.OpenAccount(
                w.OpenAccountRequest(kind=w.ACCOUNT_KIND_PLAYER_CASH, owner=player), timeout=10
            ).account.account_id
            self.wallet_stub.Deposit(
                w.DepositRequest(account_id=account, amount=funds, idempotency_key=f"fund-{player}"), timeout=10
            )
            out.append(player)
        return out

    def cash(self, player: str) -> int:
        return self.balance(f"player_cash:{player}:cash")

    def balance(self, account: str) -> int:
        return self.wallet_stub.GetBalance(w.GetBalanceRequest(account_id=account), timeout=10).balance

    def fees(self) -> int:
        try:
            return self.balance(FEES)
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.NOT_FOUND
            return 0

    def register_all(self, tid: str, players: list[str]) -> None:
        for p in players:
            self.stub.Register(
                pb.TournamentEntryRequest(tournament_id=tid, player_id=p, request_id=f"reg-{p}"), timeout=20
            )

    def wait(self, tid: str, *statuses: int, timeout: float = 240) -> pb.TournamentInfo:
        deadline = time.monotonic() + timeout
        while True:
            info = self.stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=10)
            if info.status in statuses:
                return info
            assert time.monotonic() < deadline, f"{tid} still {pb.TournamentStatus.Name(info.status)}"
            time.sleep(0.2)

    def transfers(self, account: str) -> list[w.Transfer]:
        out: list[w.Transfer] = []
        token = ""
        while True:
            page = self.wallet_stub.ListTransfers(
                w.ListTransfersRequest(account_id=account, page_size=500, page_token=token), timeout=10
            )
            out.extend(page.transfers)
            token = page.next_page_token
            if not token:
                return out

    def settled_pool(self, tid: str, timeout: float = 60) -> list[w.Transfer]:
        """The pool's transfers once every owed one is in the ledger (balance back to zero)."""
        pool = f"tournament_prize_pool:{tid}:cash"
        deadline = time.monotonic() + timeout
        while True:
            # the balance first: prizes still being paid while the list was read made the list short
            # of them although the balance read after it was already zero
            empty = self.balance(pool) == 0
            moves = self.transfers(pool)
            if (
                moves
                and empty
                and sum(m.amount for m in moves if m.to_account == pool)
                == sum(m.amount for m in moves if m.from_account == pool)
            ):
                return moves
            assert time.monotonic() < deadline, f"the pool of {tid} holds {self.balance(pool)}"
            time.sleep(0.3)

    def check_ledger(self) -> None:
        summary = self.wallet_stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
        assert all(t.sum == 0 for t in summary.totals) and summary.negative_accounts == 0
        assert summary.mismatched_accounts == 0


@pytest.fixture(scope="module")
def room(request, kafka) -> Iterator[Room]:
    run = uuid.uuid4().hex[:6]
    wallet = ServiceProcess("wallet", make_wallet_env(request, "sqlite", kafka)).start()
    tournament, topic = tournament_service(kafka.bootstrap, wallet.address, run, tick_seconds=0.02)
    wchan = grpc.insecure_channel(wallet.address)
    tchan = grpc.insecure_channel(tournament.address)
    try:
        yield Room(
            wallet, tournament, topic, wallet_pb2_grpc.WalletStub(wchan), tournament_pb2_grpc.TournamentStub(tchan), run
        )
    finally:
        wchan.close()
        tchan.close()
        tournament.stop()
        wallet.stop()


def fast(tid: str, fmt: int, **kw: object) -> pb.CreateTournamentRequest:
    base: dict[str, object] = {
        "tournament_id": tid,
        "format": fmt,
        "variant": "NT",
        "buy_in": 1000,
        "fee": 100,
        "starting_stack": 1500,
        "level_seconds": 4,
        "hand_interval_seconds": 0.02,
    }
    base.update(kw)
    return pb.CreateTournamentRequest(**base)  # type: ignore[arg-type]


def check_finished(
    room: Room, tid: str, players: list[str], collected: int, fees_before: int, fee: int = 100
) -> pb.TournamentInfo:
    """rules/000: 'the payoffs will be exactly according to the prize payout structure'; the pool
    paid in is the pool paid out, the escrow ends at zero, the fees are the house's."""
    info = room.wait(tid, pb.TOURNAMENT_STATUS_FINISHED)
    places = {r.player_id: r for r in info.results}
    assert sorted(places) == sorted(players)
    assert sorted(r.place for r in info.results if r.last_place == r.place) == sorted(
        r.place for r in info.results if r.last_place == r.place
    )
    assert sum(r.prize for r in info.results) == info.prize_pool == collected
    moves = room.settled_pool(tid)
    pool = f"tournament_prize_pool:{tid}:cash"
    pool_in = sum(m.amount for m in moves if m.to_account == pool)
    pool_out = sum(m.amount for m in moves if m.from_account == pool)
    assert pool_in == pool_out == collected
    prizes = {m.to_account.split(":")[1]: m.amount for m in moves if m.kind == w.TRANSFER_KIND_TOURNAMENT_PRIZE}
    assert prizes == {p: r.prize for p, r in places.items() if r.prize}
    assert room.balance(FEES) - fees_before >= fee * len(players)
    room.check_ledger()
    return info


def kafka_events(room: Room, kafka, tid: str) -> list[dict]:
    out = []
    for record in records_so_far(kafka.bootstrap, room.topic, linger=4):
        if record.key == tid.encode():
            envelope = decode_envelope(record.value)
            message = pb.TournamentEventMessage()
            assert envelope.payload.Unpack(message) and envelope.key == tid
            out.append({"sequence": message.sequence, **json.loads(message.json)})
    return out


def test_a_pot_limit_omaha_sit_and_go_is_played_to_the_end_every_cent_in_the_ledger(room: Room, kafka) -> None:
    tid = room.name("sng")
    fees_before = room.fees()
    room.stub.CreateTournament(fast(tid, pb.TOURNAMENT_FORMAT_SNG, variant="PO", max_entrants=6), timeout=20)
    players = room.players(6)
    room.register_all(tid, players)
    stream = room.stub.WatchTournament(pb.WatchTournamentRequest(tournament_id=tid), timeout=240)
    seen = [m.type for m in stream]
    assert seen[0] == "Registered" and seen[-1] == "Finished" and "Started" in seen
    info = check_finished(room, tid, players, 6000, fees_before)
    for r in info.results:
        assert room.cash(r.player_id) == FUNDS - 1100 + r.prize
    events = kafka_events(room, kafka, tid)  # keyed by tournament id, in order, each once
    deadline = time.monotonic() + 30
    while not events or events[-1]["type"] != "Finished":
        assert time.monotonic() < deadline
        time.sleep(0.5)
        events = kafka_events(room, kafka, tid)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events] == seen
    text = room.tournament.metrics()
    # bounded labels (issue 17): by state and format, never by tournament id
    assert metric_value(text, "tournament_tournaments", state="finished", format="sng") >= 1
    assert metric_value(text, "tournament_registrations_total", format="sng", op="register") >= 6
    assert f'tournament="{tid}"' not in text


def test_a_small_mtt_survives_a_kill_9_and_finishes_with_the_right_places_and_prizes(room: Room) -> None:
    """rules/000: 'In the event of a server crash, the hands in progress at every table will be
    restored by rolling back these hands' — the service is killed mid-tournament, rebuilt from its
    store, and the tournament goes on: no cent lost, nobody seated twice."""
    tid = room.name("mtt")
    fees_before = room.fees()
    room.stub.CreateTournament(
        fast(
            tid,
            pb.TOURNAMENT_FORMAT_MTT,
            start_in_seconds=3,
            seats=6,
            late_registration_seconds=0,
            level_seconds=5,
            hand_interval_seconds=0.1,
        ),
        timeout=20,
    )
    players = room.players(14)
    room.register_all(tid, players)
    info = room.wait(tid, pb.TOURNAMENT_STATUS_RUNNING, pb.TOURNAMENT_STATUS_FINISHED)
    assert info.status == pb.TOURNAMENT_STATUS_RUNNING and 1 <= len(info.tables) <= 3
    deadline = time.monotonic() + 120
    while info.remaining > 9 and info.status == pb.TOURNAMENT_STATUS_RUNNING:
        assert time.monotonic() < deadline
        time.sleep(0.1)
        info = room.stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=10)
    assert info.status == pb.TOURNAMENT_STATUS_RUNNING
    room.tournament.kill()
    room.tournament.start()
    after = room.stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=10)
    assert after.entrants == 14 and after.remaining <= info.remaining
    # every player still in sits at exactly one seat
    seats = set()
    for p in players:
        status = room.stub.GetPlayerStatus(pb.GetTournamentPlayerRequest(tournament_id=tid, player_id=p), timeout=10)
        if status.status == "active":
            assert (status.table, status.seat) not in seats
            seats.add((status.table, status.seat))
    check_finished(room, tid, players, 14_000, fees_before)
    # the whole story, before and after the kill: three tables drawn, broken down to the final table
    events = [
        (m.type, json.loads(m.json)) for m in room.stub.WatchTournament(pb.WatchTournamentRequest(tournament_id=tid))
    ]
    started = [e for t, e in events if t == "Started"]
    assert len(started) == 1 and started[0]["tables"] == 3 and started[0]["entrants"] == 14
    assert sum(1 for t, _ in events if t == "TableBroken") == 2 and any(t == "FinalTable" for t, _ in events)
    eliminated = [e["player"] for t, e in events if t == "Eliminated"]
    assert len(eliminated) == len(set(eliminated)) == 13 and events[-1][0] == "Finished"
    room.check_ledger()


def test_rebuys_and_add_ons_go_into_the_pool_and_all_of_it_is_paid_out(room: Room) -> None:
    """rules/000: 'all Re-buys and Add-ons are added to the tournament prize pool'."""
    tid = room.name("rebuy")
    fees_before = room.fees()
    room.stub.CreateTournament(
        fast(
            tid,
            pb.TOURNAMENT_FORMAT_REBUY,
            start_in_seconds=3,
            seats=6,
            late_registration_seconds=0,
            level_seconds=10,
            break_every_seconds=3,
            break_seconds=1,
            bot_rebuys=3,
            bot_add_on=True,
            hand_interval_seconds=0.2,
        ),
        timeout=20,
    )
    players = room.players(8)
    room.register_all(tid, players)
    room.wait(tid, pb.TOURNAMENT_STATUS_RUNNING, pb.TOURNAMENT_STATUS_FINISHED, timeout=30)
    info = room.wait(tid, pb.TOURNAMENT_STATUS_FINISHED)
    assert info.rebuys >= 1 and info.add_ons >= 1
    collected = 8 * 1000 + (info.rebuys + info.add_ons) * 1000
    check_finished(room, tid, players, collected, fees_before)
    paid = sum(FUNDS - room.cash(p) for p in players)
    assert paid == 8 * 100  # only the fees left the players: the pool went back to them as prizes


def test_a_satellite_awards_seats_and_registers_the_winners_in_the_target(room: Room) -> None:
    """rules/000: 'Satellite tournaments are events where prizes are entries into other larger
    tournaments' and 'All satellite tournaments end when all players have won or qualified'."""
    target = room.name("main")
    room.stub.CreateTournament(
        fast(target, pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=3600, buy_in=2500, fee=250), timeout=20
    )
    tid = room.name("sat")
    room.stub.CreateTournament(
        fast(
            tid,
            pb.TOURNAMENT_FORMAT_SATELLITE,
            start_in_seconds=3,
            late_registration_seconds=0,
            satellite_target=target,
        ),
        timeout=20,
    )
    players = room.players(6)
    room.register_all(tid, players)
    info = room.wait(tid, pb.TOURNAMENT_STATUS_FINISHED)
    seats = [r.player_id for r in info.results if r.seat_won]
    assert len(seats) == 2 and info.payouts[:2] == [2750, 2750]
    room.settled_pool(tid)
    deadline = time.monotonic() + 30
    while True:
        main = room.stub.GetTournament(pb.GetTournamentRequest(tournament_id=target), timeout=10)
        if main.entrants == 2:
            break
        assert time.monotonic() < deadline
        time.sleep(0.3)
    for p in seats:  # 'Players who have won their seats through a satellite cannot unregister'
        with pytest.raises(grpc.RpcError) as caught:
            room.stub.Unregister(
                pb.TournamentEntryRequest(tournament_id=target, player_id=p, request_id="u"), timeout=10
            )
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert room.balance(f"tournament_prize_pool:{target}:cash") == 2 * 2500
    room.check_ledger()


def test_cancelled_before_the_start_every_entry_comes_back(room: Room) -> None:
    """rules/000: 'If a tournament is cancelled prior to starting, all players will receive a
    refund of their full tournament registration fees'."""
    tid = room.name("cxl")
    room.stub.CreateTournament(fast(tid, pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=3600), timeout=20)
    players = room.players(3)
    room.register_all(tid, players)
    reply = room.stub.CancelTournament(pb.CancelTournamentRequest(tournament_id=tid, request_id="c1"), timeout=20)
    assert reply.policy == "before_start" and {p.player_id: p.amount for p in reply.payouts} == {
        p: 1100 for p in players
    }
    again = room.stub.CancelTournament(pb.CancelTournamentRequest(tournament_id=tid, request_id="c1"), timeout=20)
    assert again.replayed
    room.settled_pool(tid)
    deadline = time.monotonic() + 30
    while any(room.cash(p) != FUNDS for p in players):
        assert time.monotonic() < deadline
        time.sleep(0.3)
    room.check_ledger()


def test_cancelled_in_progress_fifty_fifty_and_fees_back(room: Room) -> None:
    """rules/000: 'awarding 50% of the prize pool to all remaining players and the other 50% ...
    proportionately based on each players chip count. All remaining players will also receive
    their entry fee.'"""
    tid = room.name("cxl")
    room.stub.CreateTournament(
        # one hand (dealt at the start), then 30 s to the next: cancelled before anyone can be in the
        # money (with a hand every 0.3 s, six of nine were out within 1.4 s and it was in_the_money)
        fast(tid, pb.TOURNAMENT_FORMAT_SNG, max_entrants=9, level_seconds=30, hand_interval_seconds=30),
        timeout=20,
    )
    players = room.players(9)
    room.register_all(tid, players)
    room.wait(tid, pb.TOURNAMENT_STATUS_RUNNING)
    time.sleep(0.5)
    reply = room.stub.CancelTournament(pb.CancelTournamentRequest(tournament_id=tid, request_id="c"), timeout=20)
    assert reply.policy == "fifty_fifty" and reply.distributed == 9000
    got = {p.player_id: p.amount for p in reply.payouts}
    assert sum(got.values()) == 9000 + 100 * len(got)
    room.settled_pool(tid)
    deadline = time.monotonic() + 30
    while any(room.cash(p) != FUNDS - 1100 + got.get(p, 0) for p in players):
        assert time.monotonic() < deadline
        time.sleep(0.3)
    room.check_ledger()


def player(room: Room, tid: str, player_id: str) -> pb.TournamentPlayerStatus:
    return room.stub.GetPlayerStatus(pb.GetTournamentPlayerRequest(tournament_id=tid, player_id=player_id), timeout=10)


def test_bad_input_gets_a_precise_status_and_changes_nothing(room: Room) -> None:
    tid = room.name("bad")
    room.stub.CreateTournament(
        fast(
            tid,
            pb.TOURNAMENT_FORMAT_REBUY,
            start_in_seconds=4,
            unregister_before_seconds=2,
            late_registration_seconds=0,
            level_seconds=30,
            break_every_seconds=600,
            break_seconds=60,
            rebuy_seconds=2,
            hand_interval_seconds=30,
        ),
        timeout=20,
    )
    ann, bob, cat = room.players(3)
    poor = room.players(1, funds=500)[0]
    room.register_all(tid, [ann, bob])

    def refused(call, request, code: grpc.StatusCode, reason: str) -> None:
        before = (
            [room.cash(p) for p in (ann, bob, cat, poor)],
            room.stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=10).entrants,
        )
        with pytest.raises(grpc.RpcError) as caught:
            call(request, timeout=10)
        assert (caught.value.code(), reason_of(caught.value)) == (code, reason), caught.value.details()
        after = (
            [room.cash(p) for p in (ann, bob, cat, poor)],
            room.stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=10).entrants,
        )
        assert after == before

    entry = pb.TournamentEntryRequest
    refused(
        room.stub.Register,
        entry(tournament_id=tid, player_id=ann, request_id="again"),
        grpc.StatusCode.ALREADY_EXISTS,
        "ALREADY_REGISTERED",
    )
    refused(
        room.stub.Register,
        entry(tournament_id="no-such", player_id=ann, request_id="x"),
        grpc.StatusCode.NOT_FOUND,
        "TOURNAMENT_NOT_FOUND",
    )
    refused(
        room.stub.Register,
        entry(tournament_id=tid, player_id=poor, request_id="x"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "INSUFFICIENT_FUNDS",
    )
    refused(
        room.stub.Register,
        entry(tournament_id=tid, player_id="bad id!", request_id="x"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ID",
    )
    time.sleep(2.5)  # past the unregistration deadline (2 s before the start)
    refused(
        room.stub.Unregister,
        entry(tournament_id=tid, player_id=ann, request_id="u"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "UNREGISTER_DEADLINE_PASSED",
    )
    room.wait(tid, pb.TOURNAMENT_STATUS_RUNNING, timeout=30)
    # rules/000: a re-buy 'ONLY if their chip count is less than or equal to' the starting stack: the
    # player at or below it re-buys until his stack is above it, then is refused
    short = min((ann, bob), key=lambda p: player(room, tid, p).chips)
    bought = 0
    while player(room, tid, short).chips <= 1500:
        room.stub.Rebuy(
            pb.TournamentRebuyRequest(tournament_id=tid, player_id=short, request_id=f"rb{bought}"), timeout=10
        )
        bought += 1
    assert bought >= 1
    refused(
        room.stub.Rebuy,
        pb.TournamentRebuyRequest(tournament_id=tid, player_id=short, request_id="above"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "REBUY_NOT_ALLOWED",
    )
    refused(
        room.stub.AddOn,
        entry(tournament_id=tid, player_id=ann, request_id="a"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "ADD_ON_NOT_ALLOWED",
    )
    time.sleep(2.5)  # past the re-buy period
    refused(
        room.stub.Rebuy,
        pb.TournamentRebuyRequest(tournament_id=tid, player_id=ann, request_id="r"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "REBUY_NOT_ALLOWED",
    )
    refused(
        room.stub.CreateTournament,
        fast(room.name("x"), pb.TOURNAMENT_FORMAT_SNG, max_entrants=1),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
    )
    try:  # heads-up with fast levels may already be over
        room.stub.CancelTournament(pb.CancelTournamentRequest(tournament_id=tid, request_id="end"), timeout=20)
    except grpc.RpcError as err:
        assert reason_of(err) == "TOURNAMENT_OVER"
    room.settled_pool(tid)
    room.check_ledger()
