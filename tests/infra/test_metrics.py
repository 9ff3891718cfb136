"""Metric helpers added for the operations work (issue 17), in-process (fast tier)."""

from __future__ import annotations

import logging

from kafka.future import Future
from prometheus_client import REGISTRY

from connection_monitor.publisher import ConnectionEvents
from connection_monitor.tracker import Change, State
from wallet.metrics import consumer_lag


def _sample(name: str) -> float:
    value = REGISTRY.get_sample_value(name)
    return 0.0 if value is None else value


class _Consumer:
    """What consumer_lag reads from a kafka-python consumer: assignment, high-water marks, positions."""

    def __init__(self, ends: dict[int, int | None], positions: dict[int, int]) -> None:
        self.ends, self.positions = ends, positions

    def assignment(self) -> set[int]:
        return set(self.ends)

    def highwater(self, partition: int) -> int | None:
        return self.ends[partition]

    def position(self, partition: int) -> int:
        return self.positions[partition]


def test_consumer_lag_sums_partitions_and_skips_unknown_ends():
    assert consumer_lag(_Consumer({0: 10, 1: 5, 2: None}, {0: 7, 1: 5, 2: 0})) == 3
    assert consumer_lag(_Consumer({}, {})) == 0


def _change() -> Change:
    return Change(
        player_id="alice",
        state=next(iter(State)),
        at=1_700_000_000.0,
        last_seen=1_700_000_000.0,
        session_id="s1",
        offline_seconds=0.0,
    )


def test_connection_event_callbacks_count_and_log_with_kafka_pythons_argument_order(caplog):
    """kafka-python calls ``partial(f, *args)(value)``: the change comes first, then the error; the
    failure log names the player (before the fix it raised AttributeError inside the errback)."""
    change = _change()
    published, failed = (
        _sample("connection_monitor_events_published_total"),
        _sample("connection_monitor_events_failed_total"),
    )
    ok = Future()
    ok.add_callback(ConnectionEvents._published, 0.0)
    ok.success("metadata")
    assert _sample("connection_monitor_events_published_total") == published + 1
    bad = Future()
    bad.add_errback(ConnectionEvents._failed, change)
    with caplog.at_level(logging.ERROR):
        bad.failure(RuntimeError("broker gone"))
    assert _sample("connection_monitor_events_failed_total") == failed + 1
    records = [r for r in caplog.records if r.getMessage() == "connection event not published"]
    assert records and records[0].player_id == "alice"


class _Rebalancing(_Consumer):
    def position(self, partition: int) -> int:
        raise RuntimeError("no position while rebalancing")


def test_consumer_lag_metric_never_fails_the_consume_loop():
    from wallet.metrics import record_consumer_lag

    record_consumer_lag(_Consumer({0: 12}, {0: 2}))
    assert _sample("wallet_consumer_lag_messages") == 10
    record_consumer_lag(_Rebalancing({0: 50}, {}))  # no exception, last value kept
    assert _sample("wallet_consumer_lag_messages") == 10
