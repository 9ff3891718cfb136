"""Session-wide fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kafka_broker import KafkaBroker

STACKS = "stacks"


def is_stack(item: pytest.Item) -> bool:
    """A test that runs a whole card room (every service a process, with bots, Envoy or Prometheus)."""
    return item.get_closest_marker("stack") is not None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Scheduling for `make test` (pytest-xdist `--dist loadgroup --no-loadscope-reorder`).

    Every file is one work unit (its module fixtures and fixed ports stay on one worker), except that
    the tests running a whole card room are one unit together, queued first: on a 2-core machine two
    card rooms at once (each a dozen processes, bots and a broker's worth of topics) starved each
    other's brokers into fencing themselves. xdist's default order (most tests first) also left these
    long, few-test files to the end of the run, all at once.
    """
    for item in items:
        group = STACKS if is_stack(item) else item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: not is_stack(item))  # stable: the stacks first, the rest as collected


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaBroker]:
    """The real Kafka broker (started fresh once per session, stopped at the end)."""
    broker = KafkaBroker()
    broker.start(fresh=True)
    try:
        yield broker
    finally:
        broker.stop()
