"""Kafka transactions per partition of the tables: records that go out together or not at all, and
never from a producer that lost the partition (docs/sharding.md, "Exactly once").

A :class:`TransactionalWriter` is one transactional producer (``transactional_id``: the partition's,
e.g. ``dealer.cardroom.table.snapshots.3``) and one committer thread. Callers :meth:`~TransactionalWriter.submit` a
*batch* (a hand's record, its settlement and the table's snapshot); the thread takes every batch
queued, sends them in one transaction and commits it, so tables of one partition share the commit's
cost. A batch submitted again while it is in flight (a caller that timed out retries) gets the same
future: it is never sent twice.

:meth:`~TransactionalWriter.open` calls ``init_transactions``: the broker aborts any transaction a
previous holder of the id left open (a replica killed, or paused past its session) and refuses every
later write or commit of that holder (``ProducerFencedError``). Readers use
``isolation_level=read_committed`` and never see an aborted record.

:class:`PartitionWriters` holds the writers of the partitions a dealer holds and routes a table's
batch to its partition's writer.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf.message import Message

from cardroom.runtime.events import headers_for, make_envelope
from cardroom.runtime.kafka_auth import KafkaCredentials, client_settings
from cardroom.runtime.partitions import TablePartitioner, table_partition
from cardroom.v1 import events_pb2

log = logging.getLogger("cardroom.runtime.transactions")


class TransactionFenced(Exception):
    """A later holder of the transactional id took over: this writer may never write again."""


class NotHeld(ConnectionError):
    """No writer for the table's partition here (not held, or given up)."""


@dataclass(frozen=True)
class Outgoing:
    """One record of a batch."""

    topic: str
    type: str
    key: str
    sequence: int
    payload: Message
    event_id: str | None = None


class Producer(Protocol):
    """What the writer uses of a transactional producer (:class:`BoundedTransactions` around
    kafka-python's ``KafkaProducer``). ``commit_within`` / ``abort_within``: False when the
    transaction has not ended after ``seconds`` (raises what the broker answered)."""

    def init_transactions(self) -> None: ...

    def begin_transaction(self) -> None: ...

    def send(self, topic: str, *, key: bytes, value: bytes, headers: list[tuple[str, bytes]]) -> Any: ...

    def commit_within(self, seconds: float) -> bool: ...

    def abort_within(self, seconds: float) -> bool: ...

    def close(self, timeout: float | None = None) -> None: ...


class TransactionStuck(TimeoutError):
    """A commit or abort did not end in time: the writer makes its producer again."""


#: How long a commit (or abort) may take before the writer gives its producer up and makes a new one.
END_SECONDS = 20.0
#: Pause between two attempts to take the transactional id again after a stuck transaction.
REOPEN_PAUSE_SECONDS = 1.0


@dataclass
class _Batch:
    id: str
    records: list[tuple[str, events_pb2.EventEnvelope]]
    future: concurrent.futures.Future[None]


_STOP = object()


def kafka_producer(
    bootstrap: str,
    transactional_id: str,
    source: str,
    request_timeout_ms: int = 10_000,
    credentials: KafkaCredentials | None = None,
) -> Producer:
    """kafka-python's transactional producer, records placed as every table-keyed record is."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        **client_settings(credentials),
        bootstrap_servers=bootstrap,
        client_id=f"cardroom-{source}-tx",
        transactional_id=transactional_id,
        enable_idempotence=True,
        acks="all",
        partitioner=TablePartitioner(),
        # A transaction begun right after a commit waits for the commit's markers (the coordinator
        # answers CONCURRENT_TRANSACTIONS): retried after 10 ms, not the default 100 ms (measured on
        # this machine: a record + settlement + snapshot commit, median 128 ms -> 37 ms).
        retry_backoff_ms=10,
        request_timeout_ms=request_timeout_ms,
        max_block_ms=request_timeout_ms,
    )
    return BoundedTransactions(producer)


class BoundedTransactions:
    """kafka-python's transactional producer, with its commit and abort waiting at most a bound.

    ``KafkaProducer.commit_transaction`` waits for its result without one, and after a broker restart
    its transaction manager was seen stuck for good, looking for the coordinator ("Got an exception
    when trying to find a node to send a transactional request") with the broker back: no commit for
    two minutes, the table's next hand waiting on it (test_dealer_crash, the broker restart under
    load). This starts the commit as ``commit_transaction`` does and waits for its result at most
    ``seconds`` (kafka-python 3.0's TransactionManager, pinned in requirements.lock)."""

    def __init__(self, producer: Any) -> None:
        self.producer = producer

    def init_transactions(self) -> None:
        self.producer.init_transactions()

    def begin_transaction(self) -> None:
        self.producer.begin_transaction()

    def send(self, topic: str, *, key: bytes, value: bytes, headers: list[tuple[str, bytes]]) -> Any:
        return self.producer.send(topic, key=key, value=value, headers=headers)

    def flush(self, timeout: float | None = None) -> None:
        self.producer.flush(timeout)

    def commit_within(self, seconds: float) -> bool:
        return self._end(self.producer._transaction_manager.begin_commit(), seconds)

    def abort_within(self, seconds: float) -> bool:
        return self._end(self.producer._transaction_manager.begin_abort(), seconds)

    def _end(self, result: Any, seconds: float) -> bool:
        self.producer._sender.wakeup()
        return bool(result.wait(timeout_ms=int(seconds * 1000)))

    def close(self, timeout: float | None = None) -> None:
        self.producer.close(timeout=timeout)


class TransactionalWriter:
    """See the module docstring. ``factory`` makes the producer (kafka-python's by default)."""

    def __init__(
        self, transactional_id: str, source: str, factory: Callable[[], Producer], *, max_batches: int = 64
    ) -> None:
        self.transactional_id = transactional_id
        self.source = source
        self._factory = factory
        self._max_batches = max_batches
        self._queue: queue.Queue[Any] = queue.Queue()
        self._inflight: dict[str, _Batch] = {}
        self._lock = threading.Lock()
        self._producer: Producer | None = None
        self._thread: threading.Thread | None = None
        self.fenced = False
        self.closed = False
        #: called on the committer thread with the number of batches of each committed transaction
        self.on_commit: Callable[[int], object] = lambda batches: None
        #: asked on the committer thread after a stuck transaction, before the id is taken again:
        #: True take it, False the partition is someone else's now (the writer counts as fenced),
        #: None not known yet (asked again after a pause)
        self.may_reopen: Callable[[], bool | None] = lambda: True
        self.end_seconds = END_SECONDS
        self.reopen_pause = REOPEN_PAUSE_SECONDS
        self.reopened = 0

    def open(self) -> None:
        """Make the producer and take the transactional id (blocking: run it in a thread)."""
        producer = self._factory()
        try:
            producer.init_transactions()
        except Exception:
            producer.close(timeout=0)
            raise
        self._producer = producer
        self._thread = threading.Thread(target=self._run, name=f"tx-{self.transactional_id}", daemon=True)
        self._thread.start()

    def submit(self, batch_id: str, records: Sequence[Outgoing]) -> concurrent.futures.Future[None]:
        """Queue ``records`` to go out in one transaction; the future resolves once it is committed.
        The same ``batch_id`` while in flight: the same future."""
        with self._lock:
            if self.fenced or self.closed:
                future: concurrent.futures.Future[None] = concurrent.futures.Future()
                future.set_exception(
                    TransactionFenced(self.transactional_id) if self.fenced else NotHeld(self.transactional_id)
                )
                return future
            existing = self._inflight.get(batch_id)
            if existing is not None:
                return existing.future
            envelopes = [
                (
                    o.topic,
                    make_envelope(
                        type=o.type,
                        source=self.source,
                        key=o.key,
                        sequence=o.sequence,
                        payload=o.payload,
                        event_id=o.event_id,
                    ),
                )
                for o in records
            ]
            batch = _Batch(batch_id, envelopes, concurrent.futures.Future())
            self._inflight[batch_id] = batch
        self._queue.put(batch)
        return batch.future

    def close(self) -> None:
        """Stop taking batches; those queued fail with :class:`NotHeld`. Never blocks on the broker:
        a commit under way finishes (or is aborted by the next holder's ``init_transactions``)."""
        with self._lock:
            self.closed = True
        self._queue.put(_STOP)
        if self._thread is None and self._producer is not None:
            self._producer.close(timeout=0)

    def _take(self) -> list[_Batch] | None:
        first = self._queue.get()
        if first is _STOP:
            return None
        batches = [first]
        while len(batches) < self._max_batches:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                break
            if more is _STOP:
                self._queue.put(_STOP)
                break
            batches.append(more)
        return batches

    def _finish(self, batches: list[_Batch], error: BaseException | None) -> None:
        with self._lock:
            for b in batches:
                self._inflight.pop(b.id, None)
        for b in batches:
            if error is None:
                b.future.set_result(None)
            else:
                b.future.set_exception(error)

    def _run(self) -> None:
        try:
            while True:
                batches = self._take()
                if batches is None or self.closed:
                    if batches:
                        self._finish(batches, NotHeld(self.transactional_id))
                    break
                producer = self._producer
                assert producer is not None
                error = self._commit(producer, batches)
                self._finish(batches, error)
                if isinstance(error, TransactionStuck):
                    self._reopen()
                if self.fenced:
                    break
        finally:
            self._drain()
            if self._producer is not None:
                self._producer.close(timeout=1)

    def _reopen(self) -> None:
        """The producer's transaction is stuck: give that producer up and take the transactional id
        with a new one (``init_transactions`` aborts the stuck transaction or completes a commit the
        coordinator had already taken), once :attr:`may_reopen` says the partition is still ours."""
        stuck, self._producer = self._producer, None
        if stuck is not None:
            try:
                stuck.close(timeout=0)
            except Exception:  # noqa: BLE001 - it is given up either way
                log.exception("stuck producer not closed", extra={"transactional_id": self.transactional_id})
        while not self.closed:
            ours = self.may_reopen()
            if ours is False:
                log.error(
                    "stuck transaction: the partition is no longer ours",
                    extra={"transactional_id": self.transactional_id},
                )
                self.fenced = True
                return
            if ours:
                producer = self._factory()
                try:
                    producer.init_transactions()
                except Exception as exc:  # noqa: BLE001 - the broker still away: try again
                    producer.close(timeout=0)
                    log.warning(
                        "transactional id not taken again yet",
                        extra={"transactional_id": self.transactional_id, "error": repr(exc)[:300]},
                    )
                else:
                    self._producer = producer
                    self.reopened += 1
                    log.warning("transactional producer made again", extra={"transactional_id": self.transactional_id})
                    return
            time.sleep(self.reopen_pause)

    def _commit(self, producer: Producer, batches: list[_Batch]) -> BaseException | None:
        from kafka.errors import InvalidProducerEpochError, ProducerFencedError

        try:
            producer.begin_transaction()
            for batch in batches:
                for topic, envelope in batch.records:
                    producer.send(
                        topic,
                        key=envelope.key.encode(),
                        value=envelope.SerializeToString(),
                        headers=headers_for(envelope),
                    )
            if not producer.commit_within(self.end_seconds):
                raise TransactionStuck(f"{self.transactional_id}: no commit after {self.end_seconds:g} s")
        except (ProducerFencedError, InvalidProducerEpochError) as exc:
            self.fenced = True
            log.error("transactional id taken over", extra={"transactional_id": self.transactional_id})
            return TransactionFenced(f"{self.transactional_id}: {exc}")
        except TransactionStuck as exc:
            log.error("transaction stuck", extra={"transactional_id": self.transactional_id, "error": str(exc)})
            return exc
        except Exception as exc:  # noqa: BLE001 - the batch fails; its callers retry it
            log.warning(
                "transaction failed", extra={"transactional_id": self.transactional_id, "error": repr(exc)[:300]}
            )
            try:
                if not producer.abort_within(self.end_seconds):
                    return TransactionStuck(f"{self.transactional_id}: no abort after {self.end_seconds:g} s")
            except Exception as abort_exc:  # noqa: BLE001 - a fatal state: this producer can do no more
                log.warning("transaction not aborted", extra={"error": repr(abort_exc)[:300]})
                return TransactionStuck(f"{self.transactional_id}: not aborted: {abort_exc!r}"[:300])
            return exc
        self.on_commit(len(batches))
        return None

    def _drain(self) -> None:
        with self._lock:
            self.closed = True
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                self._finish([item], TransactionFenced(self.transactional_id) if self.fenced else NotHeld("closed"))


class PartitionWriters:
    """One :class:`TransactionalWriter` per partition held, by the table's partition of ``partitions``.

    ``prefix``: the transactional ids are ``<prefix><partition>``. ``on_fenced(partition)``: called
    (on the event loop) when a writer learns a later holder took its id."""

    def __init__(
        self,
        prefix: str,
        make: Callable[[str], TransactionalWriter],
        *,
        on_fenced: Callable[[int], None] = lambda partition: None,
    ) -> None:
        self.prefix = prefix
        self._make = make
        self.partitions = 0
        self.writers: dict[int, TransactionalWriter] = {}
        self.on_fenced = on_fenced

    def transactional_id(self, partition: int) -> str:
        return f"{self.prefix}{partition}"

    def open(self, partition: int) -> None:
        """Take ``partition``'s transactional id (blocking): any transaction its previous holder left
        open is aborted, and that holder can write no more."""
        writer = self._make(self.transactional_id(partition))
        writer.open()
        old = self.writers.pop(partition, None)
        if old is not None:
            old.close()
        self.writers[partition] = writer

    def close(self, partition: int) -> None:
        writer = self.writers.pop(partition, None)
        if writer is not None:
            writer.close()

    def close_all(self) -> None:
        for partition in list(self.writers):
            self.close(partition)

    async def commit(self, key: str, batch_id: str, records: Sequence[Outgoing], timeout: float = 15.0) -> None:
        """``records`` in one transaction of ``key``'s partition; raises :class:`NotHeld`,
        :class:`TransactionFenced` (and ``on_fenced`` is called), a Kafka error or ``TimeoutError``."""
        if self.partitions < 1:
            raise NotHeld("the partitions of the tables are not known yet")
        partition = table_partition(key, self.partitions)
        writer = self.writers.get(partition)
        if writer is None:
            raise NotHeld(f"partition {partition} is not held here")
        future = asyncio.wrap_future(writer.submit(batch_id, records))
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # a caller gone: still retrieved
        try:
            async with asyncio.timeout(timeout):
                await asyncio.shield(future)
        except TransactionFenced:
            if self.writers.get(partition) is writer:
                self.close(partition)
                self.on_fenced(partition)
            raise
