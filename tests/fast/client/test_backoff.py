"""Fast tier: clients that failed together come back apart (``cardroom.client.backoff``).

The bots waited exactly 0.5, 1, 2, 4, 5 s before reconnecting and the web client 1, 2 … 5 s, so every
client dropped by one gateway restart came back in the same instant, attempt after attempt."""

from __future__ import annotations

import random
import statistics

import pytest

from cardroom.client.backoff import HIGH, LOW, jittered, reconnect_delay


def test_a_wait_is_drawn_around_its_nominal_length_and_is_that_long_on_average() -> None:
    rng = random.Random(7)
    waits = [jittered(2.0, rng) for _ in range(4000)]
    assert min(waits) >= 2.0 * LOW and max(waits) <= 2.0 * HIGH
    assert statistics.fmean(waits) == pytest.approx(2.0, rel=0.03)


def test_clients_dropped_together_come_back_spread_over_a_second_not_in_the_same_instant() -> None:
    """A thousand clients' first reconnections (nominal 0.5 s): spread over 0.25–0.75 s, no two the same,
    each tenth of the span holding about a tenth of them."""
    firsts = [reconnect_delay(1, random.Random(client)) for client in range(1000)]
    assert len(set(firsts)) == 1000
    assert min(firsts) < 0.26 and max(firsts) > 0.74
    counts = [0] * 10
    for wait in firsts:
        counts[min(9, int((wait - 0.25) / 0.05))] += 1
    assert all(60 <= n <= 140 for n in counts), counts


def test_the_nominal_wait_doubles_per_attempt_up_to_the_cap() -> None:
    class Middle(random.Random):
        def uniform(self, a: float, b: float) -> float:
            return (a + b) / 2  # the nominal length itself

    assert [reconnect_delay(n, Middle()) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert reconnect_delay(1000, Middle()) == 5.0  # no overflow however long the outage
    with pytest.raises(ValueError, match="the first is 1"):
        reconnect_delay(0)
