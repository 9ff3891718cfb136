"""The hand-settled consumer turns a record the ledger cannot take into "rejected" (logged, counted,
offset committed) instead of a storage error that re-reads the same batch for ever: a hand id with a
NUL (PostgreSQL cannot store it) or another control character is bad input, and the next hand applies."""

from __future__ import annotations

import pytest

from cardroom.runtime.events import make_envelope
from cardroom.v1 import common_pb2, events_pb2, wallet_pb2 as w
from wallet import ledger
from wallet.consumer import HandSettledConsumer
from wallet.ledger import AK, TK, TransferSpec
from wallet.store_memory import MemoryStore


def _record(hand_id: str, rake: int) -> bytes:
    """A hand-settled record as the dealer writes it (the consumer checks its shape first)."""
    results = [w.SeatResult(seat=1, player_id="ann", net=10), w.SeatResult(seat=2, player_id="bo", net=-10 - rake)]
    event = events_pb2.HandSettled(
        hand_id=hand_id, table_id="t-1", currency=common_pb2.CURRENCY_CASH, rake=rake, results=results
    )
    envelope = make_envelope(
        type="cardroom.dealer.hand_settled.v1",
        source="dealer",
        key="t-1",
        sequence=1,
        payload=event,
        event_id=f"{hand_id}:settled",
    )
    return envelope.SerializeToString()


@pytest.mark.parametrize("hand_id", ["t-1-\x001", "t-1-1\x1b[2J", "t\x00-1-1"])
def test_a_hand_id_with_control_characters_is_rejected_not_retried(hand_id: str) -> None:
    store = MemoryStore()
    table = store.open_account(AK.ACCOUNT_KIND_TABLE_ESCROW, "t-1", common_pb2.CURRENCY_CASH)[0].account_id
    player = store.open_account(AK.ACCOUNT_KIND_PLAYER_CASH, "ann", common_pb2.CURRENCY_CASH)[0].account_id
    deposit = TransferSpec(
        ledger.external_account(common_pb2.CURRENCY_CASH), player, 100, TK.TRANSFER_KIND_DEPOSIT, "", "d"
    )
    store.transfer(deposit)
    store.transfer(TransferSpec(player, table, 100, TK.TRANSFER_KIND_BUY_IN, "", "b"))
    before = store.summary()
    consumer = HandSettledConsumer(store, "127.0.0.1:1", "test.hand.settled", "g")  # never started: no broker
    assert consumer.handle(_record(hand_id, 5)) == "rejected"
    assert consumer.handle(_record("t-1-2", 5)) == "applied"
    after = store.summary()
    assert after.transfers == before.transfers + 1
    assert store.get_account(ledger.house_rake_account(common_pb2.CURRENCY_CASH)).balance == 5
    assert [t.kind for t in store.list_transfers(table, 0, 10)] == [w.TRANSFER_KIND_BUY_IN, w.TRANSFER_KIND_RAKE]
