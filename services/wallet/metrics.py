"""Wallet metrics (Prometheus, default registry)."""

from __future__ import annotations

import contextlib
from typing import Any

from prometheus_client import Counter, Gauge

TRANSFERS = Counter("wallet_transfers_total", "Transfers committed to the ledger.", ["kind"])
REPLAYS = Counter(
    "wallet_transfer_replays_total", "Requests answered from an earlier transfer with the same key.", ["kind"]
)
RAKE = Counter("wallet_rake_collected_total", "Rake moved to house rake, minor units.", ["currency"])
ESCROWS_RECONCILED = Counter(
    "wallet_escrows_reconciled_total",
    "Table escrows whose unseated players' positions ReconcileEscrow paid back.",
    ["currency"],
)
ESCROW_CHIPS_RETURNED = Counter(
    "wallet_escrow_chips_returned_total", "Chips ReconcileEscrow paid back to players, minor units.", ["currency"]
)
IMBALANCE = Gauge("wallet_ledger_imbalance", "Sum of all account balances per currency; must read 0.", ["currency"])
TABLE_ESCROW = Gauge(
    "wallet_table_escrow_cents",
    "Sum of the table escrow accounts' balances per currency (minor units): what the dealers' cash tables hold.",
    ["currency"],
)
OUTBOX_PENDING = Gauge("wallet_outbox_pending", "Ledger events written but not yet relayed to Kafka.")
OUTBOX_LAG = Gauge("wallet_outbox_lag_seconds", "Age of the oldest event not yet relayed (0 when drained).")
OUTBOX_PUBLISHED = Counter("wallet_outbox_published_total", "Ledger events relayed to Kafka.")
HANDS = Counter(
    "wallet_hand_settled_events_total",
    "Hand-settled events consumed, by outcome.",
    ["outcome"],  # applied | duplicate | zero_rake | rejected | ignored | fenced
)
FENCED = Counter(
    "wallet_fenced_total",
    "Calls and hand settlements of a dealer replica refused for a stale epoch (a later claim of its tables).",
    ["kind"],  # settlement | transfer | reconcile | claim
)
FENCED_KINDS = ("settlement", "transfer", "reconcile", "claim")
CONSUMER_LAG = Gauge(
    "wallet_consumer_lag_messages", "Hand-settled records on Kafka the wallet has not read yet (sum over partitions)."
)


def consumer_lag(consumer: Any) -> int:
    """Records behind the partition ends, from what the consumer already knows: the high-water marks
    of its last fetch and its positions."""
    lag = 0
    for partition in consumer.assignment():
        end = consumer.highwater(partition)
        if end is not None:
            lag += max(0, end - consumer.position(partition))
    return lag


def record_consumer_lag(consumer: Any) -> None:
    """Set CONSUMER_LAG; a consumer that cannot tell (rebalancing, broker away) leaves the last value,
    and never fails the consume loop over a metric."""
    with contextlib.suppress(Exception):  # a metric must not stop the consumer
        CONSUMER_LAG.set(consumer_lag(consumer))


def _zero_known_labels() -> None:
    """Known label values start at 0, so "nothing happened" reads 0 instead of no data."""
    from cardroom.v1 import wallet_pb2

    for name in wallet_pb2.TransferKind.keys():  # noqa: SIM118 - a protobuf EnumTypeWrapper, not a dict
        if name != "TRANSFER_KIND_UNSPECIFIED":
            kind = name.removeprefix("TRANSFER_KIND_").lower()
            TRANSFERS.labels(kind)
            REPLAYS.labels(kind)
    for currency in ("cash", "play"):
        RAKE.labels(currency)
        ESCROWS_RECONCILED.labels(currency)
        ESCROW_CHIPS_RETURNED.labels(currency)
    for outcome in ("applied", "duplicate", "zero_rake", "rejected", "ignored", "fenced"):
        HANDS.labels(outcome)
    for kind in FENCED_KINDS:
        FENCED.labels(kind)


_zero_known_labels()
