"""Session-wide fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import scheduling, tempdirs
from tests.kafka_broker import KafkaBroker


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    scheduling.mark_and_order(items)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` (make test) schedules by :mod:`tests.scheduling`; other modes as xdist does."""
    if config.getvalue("dist") == "loadfile":
        return scheduling.scheduler(config, log)
    return None


@pytest.fixture(scope="session", autouse=True)
def harness_temp_dirs(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The harness's temp dirs under pytest's base temp, which pytest rotates (:mod:`tests.tempdirs`)."""
    tempdirs.use_base(tmp_path_factory.getbasetemp() / "harness")


@pytest.fixture(scope="session")
def kafka() -> Iterator[KafkaBroker]:
    """The real Kafka broker (started fresh once per session, stopped at the end)."""
    broker = KafkaBroker()
    broker.start(fresh=True)
    try:
        yield broker
    finally:
        broker.stop()
