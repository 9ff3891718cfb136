"""A bounded fuzz of the dealer as a real process (issue 14, "Proof kept in the suite": "A fuzz test
(bounded, a few thousand requests per service, fixed seed) with 0 UNKNOWN/INTERNAL and state
unchanged by rejected requests"; the wallet and the evaluator are fuzzed in test_fuzz_inputs.py).

A fixed seed draws requests for every unary Dealer method: garbage bytes, truncated and bit-flipped
bodies, over-long and odd strings, edge integers, unknown enum values, configs with bad variants,
stakes, seat counts and clocks. No answer may be UNKNOWN, INTERNAL, RESOURCE_EXHAUSTED, UNAVAILABLE
or DEADLINE_EXCEEDED. A table with a hand in progress is watched throughout: after every rejected
request its state, the table list and the players' and escrow's balances are what they were; the
player to act is never among the fuzzed players, so no request can move the hand on.
"""

from __future__ import annotations

import random
import uuid
from collections import Counter

import grpc
import pytest

from cardroom.v1 import common_pb2, dealer_pb2 as d
from tests.services.dealer_fixtures import balance, dealer_stack, nl_config, player_account, wait_for
from tests.services.fuzz import (
    FORBIDDEN,
    INT32_MAX,
    INT32_MIN,
    answer,
    enum,
    garbage,
    integer,
    settled,
    state_key,
    text,
)
from tests.services.trusted import no_tracebacks

__all__ = ["dealer_stack"]
pytestmark = [pytest.mark.slow, pytest.mark.kafka]

SEED = 20261202
REQUESTS = 600
METHODS = (
    "CreateTable",
    "CloseTable",
    "ListTables",
    "GetTable",
    "SitDown",
    "AddChips",
    "SitOut",
    "ComeBack",
    "StandUp",
    "Act",
    "PlayerHands",
)
VARIANTS = ["NT", "PO/8", "F7S", "F2L3D", "FSK", "N5CD", "NX", "", "nt", "N" * 300]


def _config(rng: random.Random) -> d.TableConfig:
    return d.TableConfig(
        name=text(rng, ["fuzz"]),
        variant=rng.choice(VARIANTS),
        currency=enum(rng, [common_pb2.CURRENCY_CASH, common_pb2.CURRENCY_PLAY]),
        seats=rng.choice([0, 1, 2, 6, 9, 10, 11, -1, INT32_MAX, INT32_MIN]),
        stakes=d.Stakes(small_blind=integer(rng, [1, 100]), big_blind=integer(rng, [2, 200])),
        min_buy_in=integer(rng, [40, 1000]),
        max_buy_in=integer(rng, [200, 10_000]),
        clock=d.ClockSettings(action_seconds=rng.choice([0.0, -1.0, 1e9, float("nan"), float("inf"), 30.0])),
        hand_pause_seconds=rng.choice([0.0, -1.0, 1e12, float("nan"), 600.0]),
        owner=text(rng, ["ops"]),
    )


def _message(rng: random.Random, method: str, tables: list[str], players: list[str], seated: list[str]) -> object:
    table, player, rid = text(rng, tables), text(rng, players), text(rng, ["r1", ""])
    if method == "CreateTable":
        return d.CreateTableRequest(table_id=text(rng, ["", "fz-new", *tables]), config=_config(rng), request_id=rid)
    if method == "CloseTable":  # never the watched table: a close is a legal change of everything
        return d.CloseTableRequest(table_id=text(rng, [t for t in tables if t != tables[0]]), request_id=rid)
    if method == "ListTables":
        return d.ListTablesRequest(variant=rng.choice(VARIANTS))
    if method == "GetTable":
        return d.GetTableRequest(table_id=table, viewer_player_id=text(rng, [*players, ""]))
    if method == "SitDown":
        return d.SitDownRequest(
            table_id=table,
            player_id=text(rng, [*players, *seated]),
            seat=rng.choice([0, 1, 2, 3, -1, INT32_MAX, INT32_MIN]),
            buy_in=integer(rng, [40, 200, 1000]),
            post_now=rng.random() < 0.5,
            request_id=rid,
        )
    if method == "AddChips":  # the seated players too: in a hand he is in, more chips wait (queued)
        return d.AddChipsRequest(table_id=table, player_id=player, amount=integer(rng, [1, 1000]), request_id=rid)
    if method == "StandUp":  # not the seated players: one standing up would end the hand
        return d.SeatCommandRequest(table_id=table, player_id=text(rng, players[1:]), request_id=rid)
    if method in ("SitOut", "ComeBack"):
        return d.SeatCommandRequest(table_id=table, player_id=player, request_id=rid, post_now=rng.random() < 0.5)
    if method == "Act":
        return d.ActRequest(
            table_id=table,
            player_id=player,
            action=enum(rng, list(d.ActionType.values())),
            amount=integer(rng, [2, 4, 1000]),
            discards=[text(rng, ["As", "Kd", "xx"]) for _ in range(rng.choice([0, 1, 5, 40]))],
            hand_number=integer(rng, [1]),
            request_id=rid,
        )
    return d.PlayerHandsRequest(player_id=player, limit=rng.choice([0, 1, -1, INT32_MAX, INT32_MIN]))


def test_fuzzed_dealer_requests_get_precise_statuses_and_rejections_change_nothing(dealer_stack) -> None:
    stack = dealer_stack
    dealer, wallet = stack.dealer_stub(), stack.wallet_stub()
    run = uuid.uuid4().hex[:6]
    ann, bob = f"fa-{run}", f"fb-{run}"
    accounts = {p: player_account(wallet, p, 5000) for p in (ann, bob)}
    config = nl_config(seats=2, clock=d.ClockSettings(action_seconds=3600), hand_pause_seconds=60)
    table = dealer.CreateTable(d.CreateTableRequest(table_id=f"fz-{run}", config=config), timeout=10).table_id
    for seat, p in ((1, ann), (2, bob)):
        dealer.SitDown(d.SitDownRequest(table_id=table, player_id=p, seat=seat, buy_in=1000), timeout=10)
    state = wait_for(
        lambda: (
            (s := dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5)).in_hand and s.HasField("to_act") and s
        ),
        what="a hand in progress",
    )
    on_turn = state.to_act.player_id
    waiting = bob if on_turn == ann else ann
    escrow = f"table_escrow:{table}:cash"

    def world() -> tuple[bytes, frozenset[str], tuple[int, ...]]:
        listed = frozenset(t.table_id for t in dealer.ListTables(d.ListTablesRequest(), timeout=10).tables)
        money = tuple(balance(wallet, a) for a in (*accounts.values(), escrow))
        return state_key(dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5)), listed, money

    rng = random.Random(SEED)
    tables = [table, f"ghost-{run}", "", "t" * 200]
    players = [waiting, f"ghost-{run}", "", "p" * 200]  # never the player to act: the hand cannot move on
    before = world()
    codes: Counter[grpc.StatusCode] = Counter()
    channel = grpc.insecure_channel(stack.dealer.address)
    try:
        for _ in range(REQUESTS):
            method = rng.choice(METHODS)
            body = _message(rng, method, tables, players, [ann, bob]).SerializeToString()  # type: ignore[attr-defined]
            if rng.random() < 0.2:
                body = garbage(rng, body)
            code = answer(channel, f"/cardroom.v1.Dealer/{method}", body)
            codes[code] += 1
            assert code not in FORBIDDEN, (method, body[:200], code)
            if code == grpc.StatusCode.OK:
                before = settled(world)  # an accepted request may change things (a new table, a top-up)
                continue
            after = world()
            if after != before:
                pytest.fail(f"a rejected {method} changed the dealer or the wallet: {body[:200]!r}")
    finally:
        channel.close()
    assert codes[grpc.StatusCode.INVALID_ARGUMENT] > REQUESTS / 4, codes
    # The hand waits for the same player, and the table still deals: he may act.
    final = dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5)
    assert final.in_hand and final.to_act.player_id == on_turn
    dealer.Act(d.ActRequest(table_id=table, player_id=on_turn, action=d.ACTION_TYPE_FOLD), timeout=10)
    wait_for(lambda: not dealer.GetTable(d.GetTableRequest(table_id=table), timeout=5).in_hand, what="the hand to end")
    assert no_tracebacks(stack.dealer) == []
