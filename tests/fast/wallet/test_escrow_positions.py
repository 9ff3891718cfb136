"""Per-player positions in a table escrow (issue 14 item 7: "every escrow left without a seat after
recovery is reconciled back to its owner automatically")."""

from __future__ import annotations

import pytest

from cardroom.v1 import common_pb2
from wallet import ledger
from wallet.escrow import EscrowPositions, player_account, reconcile_plan
from wallet.ledger import TK, LedgerError, TransferSpec

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


def test_a_hand_driving_a_position_negative_changes_nothing() -> None:
    pos = EscrowPositions(ESCROW, {ALICE: 100, BOB: 100})
    with pytest.raises(LedgerError):
        pos.apply_hand([(ALICE, 150), (BOB, -150)])
    assert pos.positions == {ALICE: 100, BOB: 100}
