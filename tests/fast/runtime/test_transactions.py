"""The partition writers' transactions (cardroom.runtime.transactions, docs/sharding.md "Exactly once"):
batches of one partition share a transaction, a batch retried while in flight is sent once, a failed
commit is aborted and fails only its batches, and a writer whose transactional id was taken over
refuses everything after and gives the partition up. The broker's side (fencing, read_committed) is
tests/services/test_transactions.py."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from kafka.errors import KafkaTimeoutError, ProducerFencedError

from cardroom.runtime.partitions import table_partition
from cardroom.runtime.transactions import (
    NotHeld,
    Outgoing,
    PartitionWriters,
    TransactionalWriter,
    TransactionFenced,
    TransactionStuck,
)
from cardroom.v1 import dealer_pb2


class FakeProducer:
    """A transactional producer's calls, in order; ``hold`` keeps a commit waiting."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.hold = threading.Event()
        self.hold.set()
        self.committing = threading.Event()
        self.fail_commit: BaseException | None = None
        self.stuck = False

    def init_transactions(self) -> None:
        self.calls.append(("init", None))

    def begin_transaction(self) -> None:
        self.calls.append(("begin", None))

    def send(self, topic: str, *, key: bytes, value: bytes, headers: list[tuple[str, bytes]]) -> None:
        self.calls.append(("send", key.decode()))

    def commit_within(self, seconds: float) -> bool:
        self.committing.set()
        self.hold.wait(10)
        if self.fail_commit is not None:
            error, self.fail_commit = self.fail_commit, None
            raise error
        if self.stuck:
            self.calls.append(("stuck", None))
            return False
        self.calls.append(("commit", None))
        return True

    def abort_within(self, seconds: float) -> bool:
        self.calls.append(("abort", None))
        return True

    def close(self, timeout: float | None = None) -> None:
        self.calls.append(("close", None))

    def transactions(self) -> list[list[str]]:
        """The keys sent in each committed transaction."""
        done, current = [], []
        for call, arg in self.calls:
            if call == "begin":
                current = []
            elif call == "send":
                current.append(arg)
            elif call == "commit":
                done.append(current)
        return done


def records(key: str, n: int = 2) -> list[Outgoing]:
    return [Outgoing("t", "x", key, i, dealer_pb2.TableClosed(reason=key), f"{key}:{i}") for i in range(n)]


def writer_of(producer: FakeProducer) -> TransactionalWriter:
    writer = TransactionalWriter("dealer.tables.0", "dealer", lambda: producer)
    writer.open()
    return writer


def test_batches_queued_while_a_commit_runs_go_out_together_in_the_next_transaction() -> None:
    producer = FakeProducer()
    writer = writer_of(producer)
    committed: list[int] = []
    writer.on_commit = committed.append
    producer.hold.clear()
    first = writer.submit("a", records("a"))
    assert producer.committing.wait(5)
    later = [writer.submit(k, records(k)) for k in ("b", "c", "d")]
    producer.hold.set()
    for f in (first, *later):
        f.result(5)
    assert producer.transactions() == [["a", "a"], ["b", "b", "c", "c", "d", "d"]]
    assert committed == [1, 3]
    assert producer.calls[0] == ("init", None)
    writer.close()


def test_a_batch_submitted_again_while_in_flight_is_the_same_future_and_goes_out_once() -> None:
    producer = FakeProducer()
    writer = writer_of(producer)
    producer.hold.clear()
    first = writer.submit("hand-1", records("a"))
    assert producer.committing.wait(5)
    again = writer.submit("hand-1", records("a"))  # a caller that timed out tries again
    assert again is first
    producer.hold.set()
    first.result(5)
    assert producer.transactions() == [["a", "a"]]
    writer.close()


def test_a_failed_commit_is_aborted_fails_its_batch_only_and_the_next_batch_commits() -> None:
    producer = FakeProducer()
    writer = writer_of(producer)
    producer.fail_commit = KafkaTimeoutError("broker gone")
    with pytest.raises(KafkaTimeoutError):
        writer.submit("a", records("a")).result(5)
    assert ("abort", None) in producer.calls
    writer.submit("a", records("a")).result(5)  # the retry: a new transaction
    assert producer.transactions() == [["a", "a"]]
    writer.close()


def test_a_stuck_commit_fails_its_batch_and_the_writer_goes_on_with_a_new_producer() -> None:
    """kafka-python's commit can stay stuck for good after a broker restart (runtime/transactions.py,
    BoundedTransactions): the batch fails (its caller retries it), the stuck producer is closed, the
    transactional id is taken again by a new producer, and the retry commits on it."""
    made: list[FakeProducer] = []

    def factory() -> FakeProducer:
        made.append(FakeProducer())
        return made[-1]

    writer = TransactionalWriter("dealer.tables.0", "dealer", factory)
    writer.reopen_pause = 0.01
    writer.open()
    made[0].stuck = True
    with pytest.raises(TransactionStuck):
        writer.submit("a", records("a")).result(5)
    writer.submit("a", records("a")).result(5)  # the retry, on the new producer
    assert len(made) == 2 and writer.reopened == 1
    assert ("close", None) in made[0].calls and made[0].transactions() == []
    assert made[1].calls[0] == ("init", None) and made[1].transactions() == [["a", "a"]]
    writer.close()


def test_after_a_stuck_commit_the_id_is_taken_again_only_while_the_partition_is_ours() -> None:
    made: list[FakeProducer] = []

    def factory() -> FakeProducer:
        made.append(FakeProducer())
        return made[-1]

    answers = [None, None, True]  # not known yet (the wallet away), then ours
    writer = TransactionalWriter("dealer.tables.0", "dealer", factory)
    writer.reopen_pause = 0.01
    writer.may_reopen = lambda: answers.pop(0)
    writer.open()
    made[0].stuck = True
    with pytest.raises(TransactionStuck):
        writer.submit("a", records("a")).result(5)
    writer.submit("b", records("b")).result(5)
    assert answers == [] and len(made) == 2
    writer.close()

    lost = TransactionalWriter("dealer.tables.1", "dealer", factory)
    lost.may_reopen = lambda: False  # a later claim of the partition exists: never take its id back
    lost.open()
    made[-1].stuck = True
    with pytest.raises(TransactionStuck):
        lost.submit("a", records("a")).result(5)
    with pytest.raises(TransactionFenced):
        lost.submit("b", records("b")).result(5)
    assert lost.fenced and len(made) == 3  # no new producer


def test_a_writer_whose_id_was_taken_over_refuses_every_later_batch() -> None:
    producer = FakeProducer()
    writer = writer_of(producer)
    producer.fail_commit = ProducerFencedError()
    with pytest.raises(TransactionFenced):
        writer.submit("a", records("a")).result(5)
    assert writer.fenced
    with pytest.raises(TransactionFenced):
        writer.submit("b", records("b")).result(5)
    assert producer.transactions() == []


def test_a_closed_writer_refuses_batches_and_a_failed_init_leaves_nothing_open() -> None:
    producer = FakeProducer()
    writer = writer_of(producer)
    writer.close()
    with pytest.raises(NotHeld):
        writer.submit("a", records("a")).result(5)

    class Refused(FakeProducer):
        def init_transactions(self) -> None:
            raise KafkaTimeoutError("no coordinator")

    refused = Refused()
    with pytest.raises(KafkaTimeoutError):
        TransactionalWriter("dealer.tables.1", "dealer", lambda: refused).open()
    assert refused.calls == [("close", None)]


def test_the_partition_writers_route_a_table_to_its_partition_and_give_up_a_fenced_one() -> None:
    async def scenario() -> None:
        producers: dict[str, FakeProducer] = {}

        def make(transactional_id: str) -> TransactionalWriter:
            producers[transactional_id] = FakeProducer()
            return TransactionalWriter(transactional_id, "dealer", lambda: producers[transactional_id])

        fenced: list[int] = []
        writers = PartitionWriters("dealer.tables.", make, on_fenced=fenced.append)
        with pytest.raises(NotHeld):  # the partition count not known yet
            await writers.commit("table-1", "h1", records("table-1"))
        writers.partitions = 6
        mine = table_partition("table-1", 6)
        other = next(t for t in (f"table-{i}" for i in range(2, 50)) if table_partition(t, 6) != mine)
        writers.open(mine)
        await writers.commit("table-1", "h1", records("table-1"))
        assert producers[f"dealer.tables.{mine}"].transactions() == [["table-1", "table-1"]]
        with pytest.raises(NotHeld):  # another partition: not held here
            await writers.commit(other, "h2", records(other))
        producers[f"dealer.tables.{mine}"].fail_commit = ProducerFencedError()
        with pytest.raises(TransactionFenced):
            await writers.commit("table-1", "h3", records("table-1"))
        assert fenced == [mine] and mine not in writers.writers
        writers.close_all()

    asyncio.run(scenario())
