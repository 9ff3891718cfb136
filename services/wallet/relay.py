"""The outbox relay: publishes committed ledger events to Kafka, oldest first, then marks them.

At-least-once: a crash between the broker's ack and the mark re-sends those events with the same
event id and sequence, which consumers use to deduplicate. A second thread refreshes the ledger
gauges (imbalance, outbox backlog and lag) every second, Kafka or not.
"""

from __future__ import annotations

import logging
import threading
import time

from google.protobuf.any_pb2 import Any as AnyProto

from cardroom.runtime.events import EventProducer
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import events_pb2
from wallet import ledger, metrics
from wallet.store_api import EVENT_ACCOUNT_OPENED, EVENT_TRANSFER_POSTED, LedgerStore, OutboxRow

log = logging.getLogger("wallet.relay")

SOURCE = "wallet"
_PAYLOAD_TYPES = {
    EVENT_ACCOUNT_OPENED: events_pb2.AccountOpened.DESCRIPTOR.full_name,
    EVENT_TRANSFER_POSTED: events_pb2.TransferPosted.DESCRIPTOR.full_name,
}


def envelope_of(row: OutboxRow) -> events_pb2.EventEnvelope:
    """The envelope for one outbox row (id, time and sequence fixed when the row was written)."""
    envelope = events_pb2.EventEnvelope(
        event_id=row.event_id,
        type=row.type,
        source=SOURCE,
        key=row.key,
        sequence=row.seq,
        payload=AnyProto(type_url=f"type.googleapis.com/{_PAYLOAD_TYPES[row.type]}", value=row.payload),
    )
    envelope.time.CopyFrom(timestamp(row.created_us / 1e6))
    return envelope


class OutboxRelay:
    """A daemon thread relaying the outbox (when ``bootstrap`` is set) and refreshing gauges."""

    def __init__(
        self, store: LedgerStore, bootstrap: str | None, topic: str, interval: float = 0.2, batch: int = 500
    ) -> None:
        self.store = store
        self.topic = topic
        self.bootstrap = bootstrap
        self.interval = interval
        self.batch = batch
        self._stop = threading.Event()
        self._producer: EventProducer | None = None
        self._thread = threading.Thread(target=self._loop, name="outbox-relay", daemon=True)
        # Gauges on their own thread: they must stay fresh while Kafka is down and the relay blocks.
        self._gauges = threading.Thread(target=self._gauge_loop, name="ledger-gauges", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._gauges.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._gauges.join(timeout)
        self._thread.join(timeout)
        if self._producer is not None:
            try:
                self._producer.close()
            except Exception:
                log.warning("closing the Kafka producer failed", exc_info=True)

    def _loop(self) -> None:
        backoff = self.interval
        while not self._stop.is_set():
            try:
                sent = self.relay_once() if self.bootstrap else 0
                backoff = self.interval
                if sent < self.batch:
                    self._stop.wait(self.interval)
            except Exception:
                log.warning("outbox relay failed; retrying", exc_info=True)
                self._drop_producer()
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)

    def _drop_producer(self) -> None:
        if self._producer is not None:
            try:
                self._producer.close(timeout=1)
            except Exception:
                pass
            self._producer = None

    def relay_once(self) -> int:
        """Publish one batch of pending events and mark it; returns how many were sent."""
        rows = self.store.outbox_batch(self.batch)
        if not rows:
            return 0
        if self._producer is None:
            assert self.bootstrap
            self._producer = EventProducer(self.bootstrap, SOURCE)
        futures = [self._producer.send(self.topic, envelope_of(row)) for row in rows]
        self._producer.flush(timeout=30)
        for future in futures:
            future.get(timeout=30)  # raises if the broker did not acknowledge
        self.store.mark_published([row.seq for row in rows])
        metrics.OUTBOX_PUBLISHED.inc(len(rows))
        return len(rows)

    def _gauge_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.refresh_gauges()
            except Exception:
                log.warning("refreshing ledger gauges failed", exc_info=True)
            self._stop.wait(1.0)

    def refresh_gauges(self) -> None:
        """Outbox backlog and lag, the per-currency sum of all balances (must be 0) and of the table
        escrows (to set against the dealer's ``dealer_table_chips``)."""
        pending, oldest = self.store.outbox_stats()
        metrics.OUTBOX_PENDING.set(pending)
        metrics.OUTBOX_LAG.set(0 if oldest is None else max(0.0, time.time() - oldest / 1e6))
        totals = self.store.balances_by_currency()
        for currency, slug in ledger.CURRENCY_SLUG.items():
            metrics.IMBALANCE.labels(slug).set(totals.get(currency, 0))
        escrows = self.store.balances_by_currency(ledger.AK.ACCOUNT_KIND_TABLE_ESCROW)
        for currency, slug in ledger.CURRENCY_SLUG.items():
            metrics.TABLE_ESCROW.labels(slug).set(escrows.get(currency, 0))
