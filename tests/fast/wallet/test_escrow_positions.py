"""Per-player positions in a table escrow (issue 14 item 7: "every escrow left without a seat after
recovery is reconciled back to its owner automatically")."""

from __future__ import annotations

import pytest

from cardroom.v1 import common_pb2, wallet_pb2 as w
from wallet import ledger
from wallet.escrow import EscrowPositions, hand_nets, player_account, reconcile_plan, reconcile_request
from wallet.ledger import TK, ErrorKind, LedgerError, TransferSpec

CASH = common_pb2.CURRENCY_CASH
ESCROW = ledger.table_escrow_account("t1", CASH)
ALICE = player_account("alice", CASH)
BOB = player_account("bob", CASH)


def buy_in(account: str, amount: int, key: str) -> TransferSpec:
    return TransferSpec(account, ESCROW, amount, TK.TRANSFER_KIND_BUY_IN, "t1", key)


def test_buy_ins_hands_and_rake_keep_positions_equal_to_the_balance() -> None:
    pos = EscrowPositions(ESCROW)
    pos.apply_transfer(buy_in(ALICE, 1000, "a"))
    pos.apply_transfer(buy_in(BOB, 500, "b"))
    balance = 1500
    pos.apply_hand([(ALICE, 190), (BOB, -200)])  # rake 10 leaves the escrow
    balance -= 10
    assert pos.positions == {ALICE: 1190, BOB: 300}
    assert pos.total() == balance
    pos.apply_transfer(TransferSpec(ESCROW, BOB, 300, TK.TRANSFER_KIND_CASH_OUT, "t1", "c"))
    assert pos.positions == {ALICE: 1190}


def test_reconcile_pays_each_position_back_and_refuses_a_mismatch() -> None:
    pos = EscrowPositions(ESCROW, {ALICE: 700, BOB: 300})
    plan = reconcile_plan(pos, 1000, "r1")
    assert [(s.to_account, s.amount) for s in plan] == [(ALICE, 700), (BOB, 300)]
    assert sum(s.amount for s in plan) == 1000
    assert plan == reconcile_plan(pos, 1000, "r1")  # same keys on replay
    with pytest.raises(LedgerError, match="add up to 1000, the balance is 999"):
        reconcile_plan(pos, 999, "r1")


def test_a_cash_out_before_its_hand_is_applied_goes_negative_for_a_while_and_blocks_reconciling() -> None:
    """Hand results reach the wallet over Kafka after the dealer settled the hand, so a winner's
    cash-out can be booked first: his position dips below zero until the hand arrives."""
    pos = EscrowPositions(ESCROW, {ALICE: 100, BOB: 100})
    pos.apply_transfer(TransferSpec(ESCROW, ALICE, 200, TK.TRANSFER_KIND_CASH_OUT, "t1", "c"))
    assert pos.positions == {ALICE: -100, BOB: 100} and pos.total() == 0
    with pytest.raises(LedgerError, match="negative") as err:
        reconcile_plan(pos, 0, "r1")
    assert err.value.kind is ErrorKind.PRECONDITION
    pos.apply_hand([(ALICE, 100), (BOB, -100)])
    assert pos.positions == {} and reconcile_plan(pos, 0, "r1") == []


def test_seated_players_keep_their_positions() -> None:
    pos = EscrowPositions(ESCROW, {ALICE: 700, BOB: 300})
    plan = reconcile_plan(pos, 1000, "r2", seated={ALICE})
    assert [(s.to_account, s.amount, s.key) for s in plan] == [(BOB, 300, f"reconcile:r2:{BOB}")]


def test_a_hand_past_the_int64_range_changes_nothing() -> None:
    pos = EscrowPositions(ESCROW, {ALICE: ledger.INT64_MAX - 1, BOB: 1})
    with pytest.raises(LedgerError) as err:
        pos.apply_hand([(ALICE, 2), (BOB, -2)])
    assert err.value.kind is ErrorKind.OUT_OF_RANGE
    assert pos.positions == {ALICE: ledger.INT64_MAX - 1, BOB: 1}


@pytest.mark.parametrize(
    ("escrow", "seated", "hand", "field"),
    [
        ("player_cash:alice:cash", [], "", "escrow_account"),
        ("table_escrow:t1", [], "", "escrow_account"),
        (ESCROW, ["bad player"], "", "seated_player_ids"),
        (ESCROW, [], "t2-7", "settled_hand_id"),
        (ESCROW, [], "nonsense", "settled_hand_id"),
    ],
)
def test_a_reconcile_request_names_what_is_wrong(escrow: str, seated: list[str], hand: str, field: str) -> None:
    with pytest.raises(LedgerError) as err:
        reconcile_request("r1", escrow, seated, hand)
    assert err.value.kind is ErrorKind.INVALID and err.value.message.startswith(f"{field}:"), err.value.message


def test_a_reconcile_request_needs_an_id_and_maps_players_to_the_tables_currency() -> None:
    with pytest.raises(LedgerError, match="^request_id:"):
        reconcile_request("", ESCROW, [])
    play = reconcile_request("r1", ledger.table_escrow_account("t1", common_pb2.CURRENCY_PLAY), ["bob", "alice", "bob"])
    assert play.seated == ("player_play:alice:play", "player_play:bob:play")
    assert reconcile_request("r1", ESCROW, ["alice"], "t1-9").seated == (ALICE,)


def test_every_seat_of_a_hand_names_its_player() -> None:
    results = [w.SeatResult(seat=1, player_id="alice", net=5), w.SeatResult(seat=2, net=-5)]
    with pytest.raises(LedgerError, match="^results: seat 2 has no player_id"):
        hand_nets(results, CASH)
    results[1].player_id = "bob"
    assert hand_nets(results, CASH) == ((ALICE, 5), (BOB, -5))
