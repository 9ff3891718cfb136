"""The publisher's fired records (best effort): a record that cannot be made is logged and never raised to
the table that fired it; records fired before the producer is connected are counted as pending while they
linger and logged when they cannot be handed over."""

from __future__ import annotations

import asyncio
import logging

import pytest

from cardroom.runtime.publisher import AsyncPublisher
from cardroom.v1 import common_pb2, events_pb2

SETTLED = events_pb2.HandSettled(hand_id="h", table_id="t1", currency=common_pb2.CURRENCY_CASH)


def test_a_record_that_cannot_be_made_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    publisher = AsyncPublisher("127.0.0.1:1", "dealer", connect=False, linger_ms=50)
    with caplog.at_level(logging.WARNING, logger="cardroom.runtime.publisher"):
        publisher.fire("topic", type="x.v1", key="t1", sequence=1, payload=object())  # type: ignore[arg-type]
    assert publisher.pending == 0
    assert any(r.getMessage() == "event not published" for r in caplog.records)


def test_records_fired_before_the_producer_linger_then_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    publisher = AsyncPublisher("127.0.0.1:1", "dealer", connect=False, linger_ms=50)

    async def run() -> None:
        for sequence in (1, 2):
            publisher.fire("topic", type="x.v1", key="t1", sequence=sequence, payload=SETTLED)
        assert publisher.pending == 2  # lingering on the loop
        await asyncio.sleep(0.2)  # past the linger: handed over, but there is no producer yet

    with caplog.at_level(logging.WARNING, logger="cardroom.runtime.publisher"):
        asyncio.run(run())
    assert publisher.pending == 0
    assert any(r.getMessage() == "events not published" for r in caplog.records)
