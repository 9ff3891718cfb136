"""The outbox relay over the in-memory store, with an in-memory producer standing in for Kafka
(the real broker path is tests/services/test_wallet_api.py): what is published, in which order,
when rows are marked, and that a failed send marks nothing (at-least-once)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from prometheus_client import REGISTRY

from cardroom.v1 import common_pb2, events_pb2
from tests.fast.wallet.store_contract import FakeClock, deposit, spec
from wallet import ledger
from wallet.ledger import AK, TK
from wallet.relay import OutboxRelay, envelope_of
from wallet.store_api import EVENT_ACCOUNT_OPENED, EVENT_TRANSFER_POSTED
from wallet.store_memory import MemoryStore


@dataclass
class Sent:
    error: Exception | None = None

    def get(self, timeout: float | None = None) -> None:
        if self.error is not None:
            raise self.error


@dataclass
class MemoryProducer:
    """Records what the relay sends; ``fail_from`` makes the n-th and later sends unacknowledged."""

    fail_from: int | None = None
    sent: list[tuple[str, events_pb2.EventEnvelope]] = field(default_factory=list)

    def send(self, topic: str, envelope: events_pb2.EventEnvelope) -> Sent:
        self.sent.append((topic, envelope))
        if self.fail_from is not None and len(self.sent) >= self.fail_from:
            return Sent(TimeoutError("no acknowledgement from the broker"))
        return Sent()

    def flush(self, timeout: float | None = None) -> None:
        pass

    def close(self, timeout: float = 5.0) -> None:
        pass


def _relay(store: MemoryStore, producer: MemoryProducer) -> OutboxRelay:
    relay = OutboxRelay(store, "in-memory", "test.ledger", batch=3)
    relay._producer = producer  # type: ignore[assignment]  # the fast tier's stand-in for Kafka
    return relay


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore(FakeClock())
    alice = store.open_account(AK.ACCOUNT_KIND_PLAYER_CASH, "alice", common_pb2.CURRENCY_CASH)[0].account_id
    store.transfer(deposit(alice, 500, "dep"))
    return store


def test_an_envelope_carries_the_rows_id_key_sequence_type_and_payload(store: MemoryStore) -> None:
    row = store.outbox_batch(100)[-1]
    envelope = envelope_of(row)
    assert (envelope.event_id, envelope.key, envelope.sequence, envelope.type, envelope.source) == (
        row.event_id,
        row.key,
        row.seq,
        EVENT_TRANSFER_POSTED,
        "wallet",
    )
    posted = events_pb2.TransferPosted()
    assert envelope.payload.Unpack(posted) and posted.transfer.idempotency_key == "dep"
    assert envelope.time.ToMicroseconds() == row.created_us


def test_the_relay_publishes_oldest_first_in_batches_and_marks_what_was_acknowledged(store: MemoryStore) -> None:
    pending = store.outbox_batch(100)
    producer = MemoryProducer()
    relay = _relay(store, producer)
    sent = 0
    while batch := relay.relay_once():
        assert batch <= 3
        sent += batch
    assert sent == len(pending) == 6  # 4 built-in accounts, alice's account, the deposit
    assert [e.sequence for _, e in producer.sent] == [row.seq for row in pending]
    assert {topic for topic, _ in producer.sent} == {"test.ledger"}
    assert [e.type for _, e in producer.sent].count(EVENT_ACCOUNT_OPENED) == 5
    assert store.outbox_stats() == (0, None)


def test_an_unacknowledged_send_marks_nothing_of_its_batch_and_the_next_try_resends_it(store: MemoryStore) -> None:
    before = store.outbox_batch(100)
    failing = MemoryProducer(fail_from=2)
    with pytest.raises(TimeoutError):
        _relay(store, failing).relay_once()
    assert store.outbox_batch(100) == before  # nothing marked: at least once, never lost
    retry = MemoryProducer()
    relay = _relay(store, retry)
    while relay.relay_once():
        pass
    assert [e.event_id for _, e in retry.sent] == [row.event_id for row in before]  # same ids: consumers dedupe


def test_the_gauges_show_the_backlog_and_a_zero_sum_per_currency(store: MemoryStore) -> None:
    relay = _relay(store, MemoryProducer())
    relay.refresh_gauges()
    assert REGISTRY.get_sample_value("wallet_outbox_pending") == 6
    assert REGISTRY.get_sample_value("wallet_outbox_lag_seconds") > 0
    for slug in ledger.CURRENCY_SLUG.values():
        assert REGISTRY.get_sample_value("wallet_ledger_imbalance", {"currency": slug}) == 0
    while relay.relay_once():
        pass
    relay.refresh_gauges()
    assert REGISTRY.get_sample_value("wallet_outbox_pending") == 0
    assert REGISTRY.get_sample_value("wallet_outbox_lag_seconds") == 0


def test_the_table_escrow_gauge_is_the_sum_of_the_table_escrows_per_currency(store: MemoryStore) -> None:
    alice = ledger.account_id(AK.ACCOUNT_KIND_PLAYER_CASH, "alice", common_pb2.CURRENCY_CASH)
    relay = _relay(store, MemoryProducer())
    relay.refresh_gauges()
    assert REGISTRY.get_sample_value("wallet_table_escrow_cents", {"currency": "cash"}) == 0
    assert REGISTRY.get_sample_value("wallet_table_escrow_cents", {"currency": "play"}) == 0
    tables = [
        store.open_account(AK.ACCOUNT_KIND_TABLE_ESCROW, t, common_pb2.CURRENCY_CASH)[0].account_id
        for t in ("t1", "t2")
    ]
    store.transfer(spec(alice, tables[0], 200, TK.TRANSFER_KIND_BUY_IN, "b1"))
    store.transfer(spec(alice, tables[1], 120, TK.TRANSFER_KIND_BUY_IN, "b2"))
    store.transfer(spec(tables[0], alice, 50, TK.TRANSFER_KIND_CASH_OUT, "c1"))
    relay.refresh_gauges()
    assert REGISTRY.get_sample_value("wallet_table_escrow_cents", {"currency": "cash"}) == 150 + 120
    assert REGISTRY.get_sample_value("wallet_table_escrow_cents", {"currency": "play"}) == 0
    assert REGISTRY.get_sample_value("wallet_ledger_imbalance", {"currency": "cash"}) == 0
