"""The one seconds → Timestamp conversion gives what the datetime round trip it replaced gave."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from cardroom.runtime.timestamps import timestamp


def via_datetime(seconds: float) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(datetime.fromtimestamp(seconds, UTC))
    return ts


@pytest.mark.parametrize(
    "seconds",
    [
        0.0,
        1.5,
        1_796_000_000.0,
        1_796_000_000.123456,
        1_796_000_000.1234565,  # half a microsecond: datetime rounds it half to even
        1_796_000_000.9999996,  # rounds up into the next second
        1_796_000_000.0000004,
        -1.25,  # before the epoch: nanos stay in [0, 1e9)
    ],
)
def test_a_timestamp_is_the_datetime_round_trip_s_to_the_microsecond(seconds: float) -> None:
    assert timestamp(seconds) == via_datetime(seconds)


def test_many_clock_readings_agree_with_the_datetime_round_trip() -> None:
    base = 1_796_000_000.0
    for i in range(20_000):
        seconds = base + i * 0.000_123_7
        assert timestamp(seconds) == via_datetime(seconds), seconds


def test_nanos_always_lie_in_the_protobuf_range() -> None:
    for seconds in (-0.0000001, 0.9999999, 12.0000004):
        ts = timestamp(seconds)
        assert 0 <= ts.nanos < 1_000_000_000
        assert ts.nanos % 1000 == 0
