"""Dealer service end to end on real processes (wallet, evaluator, dealer) and real Kafka:
buy-ins into escrow, hands through Act with redacted Watch streams, hand records replayable
and verifiable, rake posted by the wallet from hand-settled events, chips conserved."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tomllib
import uuid

import grpc

from cardroom.v1 import dealer_pb2 as d, events_pb2, wallet_pb2 as w
from tests.services.dealer_fixtures import (
    Watch,
    balance,
    dealer_stack,
    nl_config,
    pause_table,
    play_until,
    player_account,
    read_topic,
    wait_for,
)
from tests.services.procs import metric_value

__all__ = ["dealer_stack"]  # the fixture, imported for pytest

DEPOSIT = 5_000
BUY_IN = 1_000


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cardroom.cli.main", *args], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_hands_money_streams_and_records(dealer_stack, tmp_path) -> None:
    stack = dealer_stack
    dealer, wallet = stack.dealer_stub(), stack.wallet_stub()
    run = uuid.uuid4().hex[:6]
    players = [f"p{i}-{run}" for i in range(3)]
    accounts = [player_account(wallet, p, DEPOSIT) for p in players]
    info = dealer.CreateTable(
        d.CreateTableRequest(table_id=f"nl-{run}", config=nl_config(), request_id=f"create-{run}"), timeout=10
    )
    table_id = info.table_id
    assert info.min_buy_in == 200 and info.max_buy_in == 2000 and info.config.variant == "NT"
    assert any(t.table_id == table_id for t in dealer.ListTables(d.ListTablesRequest(), timeout=5).tables)

    watches = {p: Watch(stack.dealer.address, table_id, p) for p in players}
    observer = Watch(stack.dealer.address, table_id)
    for seat, p in enumerate(players, start=1):
        reply = dealer.SitDown(
            d.SitDownRequest(table_id=table_id, player_id=p, seat=seat, buy_in=BUY_IN, request_id=f"sit-{p}"),
            timeout=10,
        )
        assert reply.seat.stack == BUY_IN
    # a retried SitDown (same request id) does not move the money twice
    again = dealer.SitDown(
        d.SitDownRequest(
            table_id=table_id, player_id=players[0], seat=1, buy_in=BUY_IN, request_id=f"sit-{players[0]}"
        ),
        timeout=10,
    )
    assert again.seat.stack == BUY_IN
    escrow = f"table_escrow:{table_id}:cash"
    assert [balance(wallet, a) for a in accounts] == [DEPOSIT - BUY_IN] * 3
    assert balance(wallet, escrow) == 3 * BUY_IN

    rng = random.Random(7)
    hands = 12
    play_until(dealer, table_id, hands, rng)
    state = pause_table(dealer, table_id, players, rng)
    assert state.info.hands_dealt >= hands and not state.in_hand

    # hand records: exactly one per hand, replayable, verifiable; rake matches the wallet
    def records_ready():
        recs = read_topic(stack.kafka_bootstrap, stack.topics["records"], d.HandRecordPublished, 1500)
        mine = [(e, r) for e, r in recs if r.table_id == table_id]
        return mine if len({r.hand_number for _, r in mine}) >= state.info.hands_dealt else None

    records = wait_for(records_ready, what="hand records")
    by_number: dict[int, d.HandRecordPublished] = {}
    for envelope, rec in records:
        assert envelope.key == table_id
        by_number.setdefault(rec.hand_number, rec)
        assert envelope.event_id == f"{rec.hand_id}:record"
    assert sorted(by_number) == list(range(1, state.info.hands_dealt + 1))
    assert len({e.event_id for e, _ in records}) == len(by_number), "one record (event id) per hand"
    total_rake = 0
    paths = []
    for number, rec in sorted(by_number.items()):
        paths.append(str(tmp_path / f"hand{number}.phh"))
        (tmp_path / f"hand{number}.phh").write_text(rec.phh)
        total_rake += int(next(line.split("=")[1] for line in rec.phh.splitlines() if line.startswith("_rake ")))
    replay = _cli("phh", "replay", *paths)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    replayed = [json.loads(line) for line in replay.stdout.splitlines()]
    assert len(replayed) == len(paths)
    for line, (_, rec) in zip(replayed, sorted(by_number.items()), strict=True):
        assert line["finishing_stacks"] == tomllib.loads(rec.phh)["finishing_stacks"], rec.phh
    verdict = _cli("verify-hand", *paths)
    assert verdict.returncode == 0, verdict.stdout
    assert verdict.stdout.count('"ok": true') == len(paths)
    tampered = by_number[1].phh.replace('_seed = "', '_seed = "00', 1)
    bad = _cli("verify-hand", "-", stdin=tampered)
    assert bad.returncode == 1 and '"ok": false' in bad.stdout

    settled = [
        s
        for _, s in read_topic(stack.kafka_bootstrap, stack.topics["settled"], events_pb2.HandSettled)
        if s.table_id == table_id
    ]
    assert {s.hand_id for s in settled} == {r.hand_id for r in by_number.values()}
    for s in settled:
        assert sum(r.net for r in s.results) + s.rake == 0
    assert sum({s.hand_id: s.rake for s in settled}.values()) == total_rake

    # escrow == the stacks once the wallet has posted every rake from the hand-settled events
    stacks = sum(seat.stack for seat in dealer.GetTable(d.GetTableRequest(table_id=table_id), timeout=5).seats)
    assert stacks + total_rake == 3 * BUY_IN
    wait_for(lambda: balance(wallet, escrow) == stacks, timeout=60, what="the wallet to post the rake")
    assert balance(wallet, "house_rake:house:cash") >= total_rake
    metrics = stack.dealer.metrics()
    assert metric_value(metrics, "dealer_escrow_imbalance") == 0
    assert metric_value(metrics, "dealer_hands_dealt_total", variant="NT") >= hands
    assert metric_value(metrics, "dealer_players_seated", variant="NT") >= 3
    # showdowns were cross-checked with the evaluator service, which agreed with the engine
    assert metric_value(metrics, "dealer_showdown_checks_total", outcome="match") >= 1, metrics
    assert metric_value(metrics, "dealer_showdown_checks_total", outcome="mismatch") == 0
    assert metric_value(metrics, "dealer_showdown_checks_total", outcome="error") == 0

    # redaction: nobody's stream carried another player's face-down cards before a showdown
    for p, watch in [*watches.items(), ("", observer)]:
        assert watch.error is None
        assert watch.events and watch.events[0].WhichOneof("event") == "snapshot"
        my_seat = players.index(p) + 1 if p else None
        own_cards = 0
        for ev in watch.events:
            if ev.WhichOneof("event") == "cards_dealt" and not ev.cards_dealt.face_up:
                if ev.cards_dealt.seat == my_seat:
                    own_cards += 1
                    assert "??" not in ev.cards_dealt.cards
                else:
                    assert set(ev.cards_dealt.cards) == {"??"}, (p, ev)
        assert (own_cards > 0) if p else own_cards == 0
    shown = [ev for ev in observer.events if ev.WhichOneof("event") == "hand_shown"]
    assert all("??" not in ev.hand_shown.cards for ev in shown)
    finished = [ev.hand_finished for ev in observer.events if ev.WhichOneof("event") == "hand_finished"]
    assert finished and all(f.seed and f.commitment for f in finished)

    # everyone stands up: stacks back in the wallet, escrow empty, the ledger sums to zero
    for p in players:
        dealer.StandUp(d.SeatCommandRequest(table_id=table_id, player_id=p, request_id=f"up-{p}"), timeout=10)
    wait_for(
        lambda: balance(wallet, escrow) == 0 and sum(balance(wallet, a) for a in accounts) == 3 * DEPOSIT - total_rake,
        what="cash-outs",
    )
    summary = wallet.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)
    assert all(t.sum == 0 for t in summary.totals)
    closed = dealer.CloseTable(d.CloseTableRequest(table_id=table_id, request_id=f"close-{run}"), timeout=10)
    assert list(closed.cashed_out) == []
    for watch in [*watches.values(), observer]:
        watch.close()


def test_a_closed_table_leaves_the_dealers_memory_and_answers_as_before(dealer_stack) -> None:
    """dealer/retired.py in the real process: a closed table with nothing kept for a repeat is retired by the
    once-a-second pass (its actor out of memory, its snapshot kept); a call brings it back from that snapshot
    with the same answers, and its id stays taken."""
    stack = dealer_stack
    dealer = stack.dealer_stub()

    def metric(name: str) -> float:
        return metric_value(stack.dealer.metrics(), name)

    retired, revived = metric("dealer_tables_retired"), metric("dealer_tables_revived_total")
    table_id = dealer.CreateTable(
        d.CreateTableRequest(table_id=f"gone-{uuid.uuid4().hex[:6]}", config=nl_config()), timeout=10
    ).table_id
    dealer.CloseTable(d.CloseTableRequest(table_id=table_id), timeout=10)
    before = dealer.GetTable(d.GetTableRequest(table_id=table_id), timeout=5)
    assert before.info.closed
    wait_for(lambda: metric("dealer_tables_retired") > retired, what="the closed table retired")
    after = dealer.GetTable(d.GetTableRequest(table_id=table_id), timeout=5)
    assert after == before
    assert metric("dealer_tables_revived_total") == revived + 1  # it was the one retired, back for the call
    try:
        dealer.CreateTable(d.CreateTableRequest(table_id=table_id, config=nl_config()), timeout=10)
        raise AssertionError("a closed table's id was taken again")
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.ALREADY_EXISTS and "closed" in (err.details() or "")
