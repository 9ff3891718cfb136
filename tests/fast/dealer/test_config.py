"""The dealer's Kafka linger setting: read from DEALER_KAFKA_LINGER_MS, kept within 0-1000 ms, and kept by
the publisher the table events and snapshots go through."""

from __future__ import annotations

import pytest

from cardroom.runtime.publisher import AsyncPublisher
from dealer.config import DealerConfig


@pytest.mark.parametrize(("value", "linger"), [(None, 50), ("5", 5), ("0", 0), ("-3", 0), ("60000", 1000)])
def test_the_linger_comes_from_the_environment_within_its_bounds(
    monkeypatch: pytest.MonkeyPatch, value: str | None, linger: int
) -> None:
    if value is None:
        monkeypatch.delenv("DEALER_KAFKA_LINGER_MS", raising=False)
    else:
        monkeypatch.setenv("DEALER_KAFKA_LINGER_MS", value)
    assert DealerConfig.from_env().kafka_linger_ms == linger


def test_the_publisher_keeps_that_linger_and_its_producer_sends_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fired records linger on the publisher's event loop, not in kafka-python's accumulator
    (cardroom.runtime.publisher): its producer gets no linger of its own."""
    made: list[dict[str, object]] = []

    class Recorder:
        def __init__(self, *args: object, **kwargs: object) -> None:
            made.append({"args": args, **kwargs})

    monkeypatch.setattr("cardroom.runtime.publisher.EventProducer", Recorder)
    publisher = AsyncPublisher("127.0.0.1:1", "dealer", linger_ms=37)
    assert publisher.linger_ms == 37
    assert made and made[0]["linger_ms"] == 0
