"""Consumes the dealer's hand-settled events and posts each hand's rake once.

Delivery is at least once (offsets are committed after the rake is in the ledger); the effect
is exactly once because the rake transfer's idempotency key is ``rake:<hand id>``.
"""

from __future__ import annotations

import logging
import threading

from kafka import KafkaConsumer

from cardroom.runtime.events import decode_envelope
from cardroom.v1 import events_pb2
from wallet import metrics
from wallet.ledger import LedgerError
from wallet.rake import rake_spec
from wallet.service import record
from wallet.store import LedgerStore

log = logging.getLogger("wallet.consumer")


class HandSettledConsumer:
    """A daemon thread polling ``topic`` in consumer group ``group``."""

    def __init__(self, store: LedgerStore, bootstrap: str, topic: str, group: str, instance_id: str | None = None) -> None:
        self.store = store
        self.instance_id = instance_id
        self.bootstrap = bootstrap
        self.topic = topic
        self.group = group
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="hand-settled-consumer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        consumer: KafkaConsumer | None = None
        while not self._stop.is_set():
            try:
                if consumer is None:
                    consumer = KafkaConsumer(
                        self.topic, bootstrap_servers=self.bootstrap, group_id=self.group,
                        client_id="cardroom-wallet", enable_auto_commit=False,
                        auto_offset_reset="earliest", max_poll_records=200,
                        group_instance_id=self.instance_id, session_timeout_ms=10_000,
                    )
                batches = consumer.poll(timeout_ms=300)
                for records in batches.values():
                    for record in records:
                        self.handle(record.value)
                if batches:
                    consumer.commit()
                metrics.record_consumer_lag(consumer)
            except Exception:
                log.warning("hand-settled consumer failed; reconnecting", exc_info=True)
                if consumer is not None:
                    try:
                        consumer.close(autocommit=False)
                    except Exception:
                        pass
                    consumer = None
                self._stop.wait(1.0)
        if consumer is not None:
            consumer.close(autocommit=False)

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
                spec.validate()
                transfer, replayed = self.store.transfer(spec)
                record(transfer, replayed)
                outcome = "duplicate" if replayed else "applied"
        except LedgerError as err:
            log.warning("hand-settled event rejected", extra={"hand_id": event.hand_id, "reason": err.message})
            outcome = "rejected"
        metrics.HANDS.labels(outcome).inc()
        return outcome
