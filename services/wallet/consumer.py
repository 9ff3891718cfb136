"""Consumes the dealer's hand-settled events and books each hand once: its rake, and each seat's
net to its player's position in the table escrow (:mod:`wallet.escrow`), in one transaction.

Delivery is at least once (offsets are committed after the hand is in the ledger); the effect
is exactly once because the store books a hand once per hand id (and its rake transfer's
idempotency key is ``rake:<hand id>``).

The consumer verifies what it applies (issue 14: "consumers verify what they apply"), beside the
broker's ACLs that let only the dealer write the topic: the envelope must be the dealer's
hand-settled event for that table (type, source, key, the event id the dealer fixes per hand), the
hand id must be one of that table's hands, and the per-seat results must be there and balance with
the rake, each naming its player. Anything else is counted as ``rejected`` and moves nothing.

Fencing (docs/sharding.md): a settlement whose ``fence.epoch`` is above 0 and below the highest epoch
already applied for its table is a late write of a dealer replica that lost the table; it is not
applied, logged (WARNING), counted as ``fenced`` (and in ``wallet_fenced_total{kind="settlement"}``),
and its offset is committed like any other record's. Otherwise the hand is applied and the table's
epoch raised to the settlement's, in one transaction.
"""

from __future__ import annotations

import logging

from cardroom.core import ids
from cardroom.runtime.consumer import ConsumerLoop, ConsumerSettings
from cardroom.runtime.events import decode_envelope
from cardroom.v1 import events_pb2
from wallet import metrics
from wallet.fencing import fence_of
from wallet.ledger import LedgerError
from wallet.rake import hand_settlement
from wallet.service import record, record_fenced
from wallet.store import LedgerStore
from wallet.store_api import Fenced

log = logging.getLogger("wallet.consumer")

#: What the dealer writes (services/dealer/writeahead.py): its envelope type and source.
SETTLED_TYPE = "cardroom.dealer.hand_settled.v1"
SETTLED_SOURCE = "dealer"


def forgery(envelope: events_pb2.EventEnvelope, event: events_pb2.HandSettled) -> str | None:
    """Why this hand-settled record is not the dealer's settlement of one of the table's hands (None
    when it is)."""
    if envelope.type != SETTLED_TYPE:
        return f"envelope type {envelope.type!r} is not {SETTLED_TYPE!r}"
    if envelope.source != SETTLED_SOURCE:
        return f"envelope source {envelope.source!r} is not the dealer"
    if envelope.key != event.table_id:
        return "the record is not keyed by the hand's table"
    if envelope.event_id != f"{event.hand_id}:settled":
        return "the event id is not the one the dealer gives this hand"
    try:
        hand = ids.parse_hand_id(event.hand_id)
    except ids.InvalidId as exc:
        return str(exc)
    if hand.table_id != event.table_id:
        return f"hand {event.hand_id!r} is not a hand of table {event.table_id!r}"
    if len(event.results) < 2:
        return "a hand has at least two players' results"
    return None


#: What a batch of hand settlements may reach before the broker answers the fetch at once (far more than
#: ``batch_ms`` of any room's hands: the wait, not the size, ends a batch).
BATCH_BYTES = 1 << 20


def _batched(batch_ms: int) -> dict[str, int]:
    """The fetch settings that let the broker gather ``batch_ms`` of settlements into one answer (0: each
    one as soon as it is there, kafka-python's defaults)."""
    return {"fetch_max_wait_ms": batch_ms, "fetch_min_bytes": BATCH_BYTES} if batch_ms > 0 else {}


class HandSettledConsumer:
    """The runtime's consumer loop on ``topic`` in consumer group ``group`` (offsets committed
    after each batch is in the ledger; a database error re-reads the batch)."""

    def __init__(
        self,
        store: LedgerStore,
        bootstrap: str,
        topic: str,
        group: str,
        instance_id: str | None = None,
        batch_ms: int = 0,
    ) -> None:
        self.store = store
        self.instance_id = instance_id
        self.bootstrap = bootstrap
        self.topic = topic
        self.group = group
        settings = ConsumerSettings(
            bootstrap,
            (topic,),
            client_id="cardroom-wallet",
            group_id=group,
            auto_offset_reset="earliest",
            max_poll_records=200,
            group_instance_id=instance_id,
            session_timeout_ms=10_000,
            **_batched(batch_ms),
        )
        self._loop = ConsumerLoop(
            settings,
            lambda record: self.handle(record.value or b""),
            name="hand-settled-consumer",
            after_poll=metrics.record_consumer_lag,
        )

    def start(self) -> None:
        self._loop.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._loop.stop(timeout)

    def handle(self, value: bytes) -> str:
        """Apply one record; returns the outcome label. Database errors propagate (retry)."""
        try:
            envelope = decode_envelope(value)
            event = events_pb2.HandSettled()
            if not envelope.payload.Unpack(event):
                metrics.HANDS.labels("ignored").inc()
                return "ignored"
        except Exception:
            log.warning("undecodable record on %s", self.topic)
            metrics.HANDS.labels("ignored").inc()
            return "ignored"
        problem = forgery(envelope, event)
        if problem is not None:
            log.warning("hand-settled record refused", extra={"hand_id": event.hand_id[:150], "reason": problem})
            metrics.HANDS.labels("rejected").inc()
            return "rejected"
        try:
            settlement = hand_settlement(event.hand_id, event.table_id, event.currency, event.rake, event.results)
            if settlement.rake is not None:
                settlement.rake.validate(self.store.limits.max_transfer)
            fence = fence_of(event.fence)
            transfer, replayed = self.store.settle_hand(settlement, fence)
            if transfer is not None:
                record(transfer, replayed)
            if replayed:
                outcome = "duplicate"
            else:
                outcome = "applied" if transfer is not None else "zero_rake"
        except Fenced as err:
            record_fenced("settlement", err, hand_id=event.hand_id)
            outcome = "fenced"
        except LedgerError as err:
            log.warning("hand-settled event rejected", extra={"hand_id": event.hand_id, "reason": err.message})
            outcome = "rejected"
        metrics.HANDS.labels(outcome).inc()
        return outcome
