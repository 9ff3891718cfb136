"""Session-wide fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kafka_broker import KafkaBroker


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaBroker]:
    """The real Kafka broker (started fresh once per session, stopped at the end)."""
    broker = KafkaBroker()
    broker.start(fresh=True)
    try:
        yield broker
    finally:
        broker.stop()
