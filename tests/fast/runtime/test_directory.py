"""Fast tier: cardroom.runtime.directory's lookups and waits, the records handed in as its reading
thread hands them (``take``), no Kafka: a coroutine waiting for a table's new owner wakes when a
claim arrives from another thread, and gives up after its timeout. Against the broker:
tests/services/test_dealer_directory.py."""

from __future__ import annotations

import asyncio
import threading
import time

from cardroom.runtime.directory import DealerDirectory
from tests.fast.runtime.claims_records import claim, table_in


def directory() -> DealerDirectory:
    return DealerDirectory("127.0.0.1:1", "test.directory")  # never started: no broker is asked


def test_lookups_follow_the_records_taken() -> None:
    d = directory()
    table = table_in(3)
    assert (d.owner(table), d.route(table), d.addresses(), d.epoch(3)) == (None, (None, 0), [], 0)
    assert d.take([claim(0, 3, "a:1"), claim(1, 0, "b:1"), claim(2, 1, "b:1")]) == 3
    assert (d.owner(table), d.route(table), d.epoch(3)) == ("a:1", ("a:1", 1), 1)
    assert d.addresses() == ["a:1", "b:1"]
    assert [c.partition for c in d.claims()] == [0, 1, 3]
    assert d.take([claim(0, 3, "a:1")]) == 0  # read again: nothing changes


def test_a_waiter_wakes_when_another_thread_brings_a_new_owner() -> None:
    d = directory()
    table = table_in(2)
    d.take([claim(0, 2, "a:1")])

    async def scenario() -> tuple[str | None, float]:
        writer = threading.Timer(0.2, lambda: d.take([claim(1, 0, "x:1"), claim(2, 2, "b:1")]))
        start = time.monotonic()
        writer.start()
        try:
            return await d.changed(table, "a:1", 1, timeout=10), time.monotonic() - start
        finally:
            writer.join()

    owner, waited = asyncio.run(scenario())
    assert owner == "b:1"
    assert 0.15 < waited < 5  # woken by the claim, not by the timeout


def test_a_newer_claim_by_the_same_replica_ends_the_wait_too() -> None:
    d = directory()
    table = table_in(5)
    d.take([claim(0, 5, "a:1")])

    async def scenario() -> str | None:
        asyncio.get_running_loop().call_later(0.1, lambda: d.take([claim(4, 5, "a:1")]))
        return await d.changed(table, "a:1", 1, timeout=10)

    assert asyncio.run(scenario()) == "a:1"
    assert d.epoch(5) == 5


def test_a_wait_that_sees_no_change_ends_after_its_timeout() -> None:
    d = directory()
    table = table_in(1)
    d.take([claim(0, 1, "a:1")])

    async def scenario() -> tuple[str | None, str | None, float]:
        start = time.monotonic()
        unchanged = await d.changed(table, "a:1", 1, timeout=0.3)
        waited = time.monotonic() - start
        # routed by the configured dealer (no claim known then): the first claim is a change
        known = await d.changed(table, None, 0, timeout=0.3)
        return unchanged, known, waited

    unchanged, known, waited = asyncio.run(scenario())
    assert unchanged is None and 0.25 < waited < 3
    assert known == "a:1"
