"""Consumes the dealer's hand-settled events and posts each hand's rake once.

Delivery is at least once (offsets are committed after the rake is in the ledger); the effect
is exactly once because the rake transfer's idempotency key is ``rake:<hand id>``.
"""

from __future__ import annotations

import logging

from cardroom.runtime.consumer import ConsumerLoop, ConsumerSettings
from cardroom.runtime.events import decode_envelope
from cardroom.v1 import events_pb2
from wallet import metrics
from wallet.ledger import LedgerError
from wallet.rake import rake_spec
from wallet.service import record
from wallet.store import LedgerStore

log = logging.getLogger("wallet.consumer")


class HandSettledConsumer:
    """The runtime's consumer loop on ``topic`` in consumer group ``group`` (offsets committed
    after each batch is in the ledger; a database error re-reads the batch)."""

    def __init__(
        self, store: LedgerStore, bootstrap: str, topic: str, group: str, instance_id: str | None = None
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
        try:
            spec = rake_spec(event.hand_id, event.table_id, event.currency, event.rake, event.results)
            if spec is None:
                outcome = "zero_rake"
            else:
                spec.validate(self.store.limits.max_transfer)
                transfer, replayed = self.store.transfer(spec)
                record(transfer, replayed)
                outcome = "duplicate" if replayed else "applied"
        except LedgerError as err:
            log.warning("hand-settled event rejected", extra={"hand_id": event.hand_id, "reason": err.message})
            outcome = "rejected"
        metrics.HANDS.labels(outcome).inc()
        return outcome
