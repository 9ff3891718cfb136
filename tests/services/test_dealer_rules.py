"""Dealer commands: every illegal command gets its precise status and changes nothing (table
state and wallet balances); the action clock plays for absent players."""

from __future__ import annotations

import uuid

import grpc
import pytest

from cardroom.v1 import common_pb2, dealer_pb2 as d
from tests.services.dealer_fixtures import Watch, balance, dealer_stack, nl_config, player_account, wait_for
from tests.services.procs import metric_value

__all__ = ["dealer_stack"]

IA = grpc.StatusCode.INVALID_ARGUMENT
NF = grpc.StatusCode.NOT_FOUND
FP = grpc.StatusCode.FAILED_PRECONDITION
AE = grpc.StatusCode.ALREADY_EXISTS


def _state_key(state: d.TableState) -> bytes:
    """The table state without the clock deadline (equal states, equal keys)."""
    copy = d.TableState()
    copy.CopyFrom(state)
    copy.to_act.ClearField("deadline")
    return copy.SerializeToString(deterministic=True)


def test_illegal_commands_have_precise_statuses_and_change_nothing(dealer_stack) -> None:
    stack = dealer_stack
    dealer, wallet = stack.dealer_stub(), stack.wallet_stub()
    run = uuid.uuid4().hex[:6]
    ann, bob, cat, poor, ghost = (f"{n}-{run}" for n in ("ann", "bob", "cat", "poor", "ghost"))
    accounts = {
        p: player_account(wallet, p, amount) for p, amount in ((ann, 5000), (bob, 5000), (cat, 5000), (poor, 100))
    }
    config = nl_config(seats=2, clock=d.ClockSettings(action_seconds=120))
    table = dealer.CreateTable(d.CreateTableRequest(table_id=f"hu-{run}", config=config), timeout=10).table_id
    for seat, p in ((1, ann), (2, bob)):
        dealer.SitDown(d.SitDownRequest(table_id=table, player_id=p, seat=seat, buy_in=1000), timeout=10)
    state = wait_for(
        lambda: (
            (s := dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5)).in_hand and s.HasField("to_act") and s
        ),
        what="a hand",
    )
    on_turn = state.to_act.player_id
    waiting = bob if on_turn == ann else ann
    before = _state_key(dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5))
    balances = {p: balance(wallet, a) for p, a in accounts.items()}
    escrow = balance(wallet, f"table_escrow:{table}:cash")

    def act(player: str, action: int, amount: int = 0, **kw) -> d.ActRequest:
        return d.ActRequest(table_id=table, player_id=player, action=action, amount=amount, **kw)

    bad_nl = nl_config()
    bad_nl.variant = "NX"
    no_blinds = nl_config(stakes=d.Stakes(small_blind=0, big_blind=0))
    too_many = nl_config(seats=11)
    cases = [
        (dealer.CreateTable, d.CreateTableRequest(config=bad_nl), IA, "variant"),
        (dealer.CreateTable, d.CreateTableRequest(config=no_blinds), IA, "stakes"),
        (dealer.CreateTable, d.CreateTableRequest(config=too_many), IA, "seats"),
        (dealer.CreateTable, d.CreateTableRequest(table_id="bad id!", config=nl_config()), IA, "table_id"),
        (dealer.CreateTable, d.CreateTableRequest(table_id=table, config=nl_config()), AE, "already exists"),
        (dealer.GetTable, d.GetTableRequest(table_id=f"nope-{run}"), NF, "no table"),
        (dealer.SitDown, d.SitDownRequest(table_id="", player_id=cat, buy_in=500), IA, "table_id"),
        (dealer.SitDown, d.SitDownRequest(table_id=f"nope-{run}", player_id=cat, buy_in=500), NF, "no table"),
        (dealer.SitDown, d.SitDownRequest(table_id=table, player_id=cat, buy_in=500), FP, "full"),
        (dealer.SitDown, d.SitDownRequest(table_id=table, player_id=ann, buy_in=500), AE, "already seated"),
        # during his hand chips are queued for the next (issue 13); over the maximum that is refused too
        (dealer.AddChips, d.AddChipsRequest(table_id=table, player_id=ann, amount=10**9), FP, "maximum"),
        (dealer.AddChips, d.AddChipsRequest(table_id=table, player_id=ann, amount=0), IA, "amount"),
        (dealer.AddChips, d.AddChipsRequest(table_id=table, player_id=cat, amount=100), NF, "not seated"),
        (dealer.ComeBack, d.SeatCommandRequest(table_id=table, player_id=ann), FP, "not sitting out"),
        (dealer.StandUp, d.SeatCommandRequest(table_id=table, player_id=ghost), NF, "not seated"),
        (dealer.Act, act(cat, d.ACTION_TYPE_CALL), NF, "not seated"),
        (dealer.Act, act(waiting, d.ACTION_TYPE_CALL), FP, "not your turn"),
        (dealer.Act, act(on_turn, d.ACTION_TYPE_UNSPECIFIED), IA, "action"),
        (dealer.Act, act(on_turn, d.ACTION_TYPE_CHECK), FP, "not a legal action"),
        (dealer.Act, act(on_turn, d.ACTION_TYPE_RAISE, 11), FP, "raise"),
        (dealer.Act, act(on_turn, d.ACTION_TYPE_CALL, -1), IA, "amount"),
        (dealer.Act, act(on_turn, d.ACTION_TYPE_DRAW, discards=["Xx"]), IA, "discards"),
        (dealer.Act, act(on_turn, d.ACTION_TYPE_CALL, hand_number=state.hand_number + 5), FP, "in progress"),
    ]
    for rpc, request, code, fragment in cases:
        with pytest.raises(grpc.RpcError) as info:
            rpc(request, timeout=10)
        assert info.value.code() == code, (request, info.value.details())
        assert fragment in info.value.details().lower(), (fragment, info.value.details())

    # a second table for the seat / buy-in / wallet cases
    other = dealer.CreateTable(d.CreateTableRequest(table_id=f"six-{run}", config=nl_config()), timeout=10).table_id
    dealer.SitDown(d.SitDownRequest(table_id=other, player_id=cat, seat=3, buy_in=500), timeout=10)
    other_before = _state_key(dealer.GetTable(d.GetTableRequest(table_id=other), timeout=5))
    cat_balance = balance(wallet, accounts[cat])
    cases = [
        (d.SitDownRequest(table_id=other, player_id=poor, buy_in=100), FP, "below the table minimum"),
        (d.SitDownRequest(table_id=other, player_id=poor, buy_in=5000), FP, "above the table maximum"),
        (d.SitDownRequest(table_id=other, player_id=poor, buy_in=500), FP, "buy-in"),  # wallet: 100 only
        (d.SitDownRequest(table_id=other, player_id=ghost, buy_in=500), FP, "wallet account"),
        (d.SitDownRequest(table_id=other, player_id=poor, seat=3, buy_in=500), AE, "taken"),
        (d.SitDownRequest(table_id=other, player_id=poor, seat=7, buy_in=500), IA, "seat"),
        (d.SitDownRequest(table_id=other, player_id="no good", buy_in=500), IA, "player_id"),
        (d.SitDownRequest(table_id=other, player_id=poor, buy_in=0), IA, "buy_in"),
        (d.SitDownRequest(table_id=other, player_id=poor, buy_in=-5), IA, "buy_in"),
    ]
    for request, code, fragment in cases:
        with pytest.raises(grpc.RpcError) as info:
            dealer.SitDown(request, timeout=10)
        assert info.value.code() == code, (request, info.value.details())
        assert fragment in info.value.details().lower(), (fragment, info.value.details())
    with pytest.raises(grpc.RpcError) as info:
        dealer.AddChips(d.AddChipsRequest(table_id=other, player_id=cat, amount=1600), timeout=10)
    assert info.value.code() == FP and "maximum" in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        dealer.Act(d.ActRequest(table_id=other, player_id=cat, action=d.ACTION_TYPE_CHECK), timeout=10)
    assert info.value.code() == FP and "no hand in progress" in info.value.details()
    watch = Watch(stack.dealer.address, f"nope-{run}")
    watch.thread.join(5)
    assert watch.error is not None and watch.error.code() == NF
    watch.close()

    # idempotency: the same request id with other content is refused, the same request replays
    first = dealer.AddChips(
        d.AddChipsRequest(table_id=other, player_id=cat, amount=100, request_id=f"add-{run}"), timeout=10
    )
    replay = dealer.AddChips(
        d.AddChipsRequest(table_id=other, player_id=cat, amount=100, request_id=f"add-{run}"), timeout=10
    )
    assert first == replay and first.seat.stack == 600
    with pytest.raises(grpc.RpcError) as info:
        dealer.AddChips(
            d.AddChipsRequest(table_id=other, player_id=cat, amount=50, request_id=f"add-{run}"), timeout=10
        )
    assert info.value.code() == AE and "request_id" in info.value.details()
    assert balance(wallet, accounts[cat]) == cat_balance - 100

    # nothing else changed
    assert _state_key(dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5)) == before
    assert {p: balance(wallet, a) for p, a in accounts.items() if p != cat} == {
        p: v for p, v in balances.items() if p != cat
    }
    assert balance(wallet, f"table_escrow:{table}:cash") == escrow
    after = dealer.GetTable(d.GetTableRequest(table_id=other), timeout=5)
    assert after.seats[0].stack == 600 and len(after.seats) == 1 and other_before
    closed = dealer.CloseTable(d.CloseTableRequest(table_id=other), timeout=30)
    assert [(s.player_id, s.stack) for s in closed.cashed_out] == [(cat, 600)]
    wait_for(lambda: balance(wallet, accounts[cat]) == 5000, what="cat's cash-out")


def test_clock_plays_for_absent_players(dealer_stack) -> None:
    stack = dealer_stack
    dealer, wallet = stack.dealer_stub(), stack.wallet_stub()
    run = uuid.uuid4().hex[:6]
    players = [f"idle{i}-{run}" for i in range(2)]
    accounts = [player_account(wallet, p, 2000) for p in players]
    # (never sat out for timing out: the clock plays every hand here; issue 13's sit-out is tested elsewhere)
    config = nl_config(
        currency=common_pb2.CURRENCY_CASH, clock=d.ClockSettings(action_seconds=0.2, sit_out_after_timeouts=-1)
    )
    table = dealer.CreateTable(d.CreateTableRequest(table_id=f"clock-{run}", config=config), timeout=10).table_id
    watch = Watch(stack.dealer.address, table)
    for p in players:
        dealer.SitDown(d.SitDownRequest(table_id=table, player_id=p, buy_in=1000), timeout=10)
    wait_for(
        lambda: dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5).info.hands_dealt >= 4,
        timeout=30,
        what="hands played by the clock",
    )
    timed_out = [ev.action for ev in watch.events if ev.WhichOneof("event") == "action" and ev.action.timeout]
    assert timed_out and {a.action for a in timed_out} <= {d.ACTION_TYPE_FOLD, d.ACTION_TYPE_CHECK}
    metrics = stack.dealer.metrics()
    assert metric_value(metrics, "dealer_timeouts_total", variant="NT", decision="fold") >= 1
    closed = dealer.CloseTable(d.CloseTableRequest(table_id=table), timeout=30)
    assert sorted(s.player_id for s in closed.cashed_out) == sorted(players)
    # every hand ended before the flop (the clock folds): no rake, all chips back
    wait_for(
        lambda: (
            sum(balance(wallet, a) for a in accounts) == 4000 and balance(wallet, f"table_escrow:{table}:cash") == 0
        ),
        what="cash-out at close",
    )
    assert not any(t.table_id == table for t in dealer.ListTables(d.ListTablesRequest(), timeout=5).tables)
    watch.close()


def test_disconnected_players_get_artificial_all_ins_from_the_monitor(dealer_stack) -> None:
    """Heartbeats stop -> the monitor publishes DISCONNECTED -> the dealer marks the seats; a
    disconnected limit player whose clock runs out facing a bet is made all-in (rules/003),
    and the use is counted by the connection monitor."""
    from cardroom.v1 import connection_monitor_pb2 as cm, connection_monitor_pb2_grpc as cm_grpc

    stack = dealer_stack
    dealer, wallet = stack.dealer_stub(), stack.wallet_stub()
    run = uuid.uuid4().hex[:6]
    players = [f"dc{i}-{run}" for i in range(2)]
    for p in players:
        player_account(wallet, p, 2000)
    config = d.TableConfig(
        name="fl",
        variant="FT",
        seats=2,
        stakes=d.Stakes(small_bet=10),
        clock=d.ClockSettings(action_seconds=0.3, sit_out_after_timeouts=-1),  # (stay dealt in)
        hand_pause_seconds=0.05,
    )
    table = dealer.CreateTable(d.CreateTableRequest(table_id=f"fl-{run}", config=config), timeout=10).table_id
    watch = Watch(stack.dealer.address, table)
    for p in players:
        dealer.SitDown(d.SitDownRequest(table_id=table, player_id=p, buy_in=500), timeout=10)
    with grpc.insecure_channel(stack.monitor.address) as channel:
        monitor = cm_grpc.ConnectionMonitorStub(channel)
        for p in players:  # one heartbeat each, then silence
            monitor.Heartbeats(iter([cm.Heartbeat(player_id=p, session_id=f"s-{p}")]), timeout=10)
        wait_for(
            lambda: all(not s.connected for s in dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5).seats),
            timeout=20,
            what="the dealer to see both players disconnected",
        )
        wait_for(
            lambda: any(
                ev.WhichOneof("event") == "action" and ev.action.timeout and ev.action.all_in for ev in watch.events
            ),
            timeout=20,
            what="an artificial all-in",
        )
        left = wait_for(
            lambda: [
                a
                for p in players
                if (a := monitor.GetAllInAllowance(cm.GetAllInAllowanceRequest(player_id=p), timeout=5).left) < 2
            ],
            what="the monitor to count the use",
        )
        assert left
    artificial = [
        ev.action
        for ev in watch.events
        if ev.WhichOneof("event") == "action" and ev.action.all_in and ev.action.timeout and ev.action.added == 0
    ]
    assert artificial and all(a.action == d.ACTION_TYPE_ARTIFICIAL_ALL_IN for a in artificial)  # not a "call"
    changes = [ev.seat_changed.change for ev in watch.events if ev.WhichOneof("event") == "seat_changed"]
    assert changes.count("disconnected") == 2
    metrics = stack.dealer.metrics()
    assert metric_value(metrics, "dealer_timeouts_total", variant="FT", decision="artificial_all_in") >= 1
    assert metric_value(metrics, "dealer_disconnects_total", variant="FT") == 2
    dealer.CloseTable(d.CloseTableRequest(table_id=table), timeout=30)
    assert metric_value(stack.dealer.metrics(), "dealer_escrow_imbalance") == 0
    watch.close()


def test_request_ids_are_per_player(dealer_stack) -> None:
    """Issue 14 item 5: "Request-id de-duplication is per table instead of per player (one player's id
    blocks another's)". Two players use the same request id at one table: both are seated with their
    own buy-in; a repeat answers each with his own seat and moves no more money."""
    stack = dealer_stack
    dealer, wallet = stack.dealer_stub(), stack.wallet_stub()
    run = uuid.uuid4().hex[:6]
    ann, bob = f"ann-{run}", f"bob-{run}"
    accounts = {p: player_account(wallet, p, 5000) for p in (ann, bob)}
    config = nl_config(seats=2, clock=d.ClockSettings(action_seconds=120))
    table = dealer.CreateTable(d.CreateTableRequest(table_id=f"rid-{run}", config=config), timeout=10).table_id
    replies = {}
    for seat, (player, buy_in) in enumerate(((ann, 1000), (bob, 1500)), start=1):
        request = d.SitDownRequest(table_id=table, player_id=player, seat=seat, buy_in=buy_in, request_id="sit")
        replies[player] = dealer.SitDown(request, timeout=10)
        assert replies[player].seat.player_id == player and replies[player].seat.stack == buy_in
        again = dealer.SitDown(request, timeout=10)  # the same player's repeat: his own answer
        assert again.seat.player_id == player and again.seat.seat == seat
    assert {p: balance(wallet, a) for p, a in accounts.items()} == {ann: 4000, bob: 3500}
    seated = dealer.GetTable(d.GetTableRequest(table_id=table), timeout=10)
    assert sorted(s.player_id for s in seated.seats if s.player_id) == sorted([ann, bob])
