"""Fast tier: how late a service's event loop runs what falls due (cardroom.runtime.looplag), and the
load test's reading of it per process."""

from __future__ import annotations

import asyncio
import time

import pytest

from cardroom.runtime import looplag


def test_a_blocked_loop_is_observed_as_late() -> None:
    lags: list[float] = []

    async def main() -> asyncio.Task[None]:
        task = asyncio.create_task(looplag.observe_lag(0.02, lags.append))
        await asyncio.sleep(0.1)  # a few wakes on time
        assert len(lags) >= 2
        time.sleep(0.15)  # a long callback: the next wake comes that much late
        await asyncio.sleep(0.05)
        await looplag.stop(task)
        return task

    task = asyncio.run(main())
    assert all(lag >= 0 for lag in lags)
    assert max(lags) >= 0.1, lags
    assert task.cancelled()


@pytest.mark.parametrize("raw", ["nan", "0.001", "61", "-1", "soon"])
def test_a_bad_period_stops_the_service(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("LOOP_LAG_PERIOD", raw)

    async def main() -> None:
        looplag.start()

    with pytest.raises(SystemExit, match="LOOP_LAG_PERIOD"):
        asyncio.run(main())


def test_the_period_is_a_setting_and_0_turns_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> None:
        monkeypatch.setenv("LOOP_LAG_PERIOD", "0")
        assert looplag.start() is None
        monkeypatch.setenv("LOOP_LAG_PERIOD", "0.05")
        task = looplag.start()
        assert task is not None and not task.done()
        await looplag.stop(task)
        assert task.cancelled()
        await looplag.stop(None)  # off: nothing to stop

    asyncio.run(main())


def test_the_load_test_reports_each_process_loop_lag() -> None:
    from cardroom.client.loadtest import report
    from cardroom.client.loadtest.runner import lag_summary
    from cardroom.client.loadtest.serverside import server_side

    def scraped(fast: int, slow: int) -> dict[str, float]:
        """``fast`` wakes under 1 ms late, ``slow`` between 25 and 50 ms."""
        return {
            'python_asyncio_loop_lag_seconds_bucket{le="0.001"}': fast,
            'python_asyncio_loop_lag_seconds_bucket{le="0.025"}': fast,
            'python_asyncio_loop_lag_seconds_bucket{le="0.05"}': fast + slow,
            'python_asyncio_loop_lag_seconds_bucket{le="+Inf"}': fast + slow,
            "python_asyncio_loop_lag_seconds_count": fast + slow,
        }

    before = {"gateway": scraped(100, 0), "dealer": scraped(100, 0), "kafka": {}}
    after = {"gateway": scraped(1100, 0), "dealer": scraped(1050, 50), "old": {"up": 1.0}}
    out = server_side(before, after)["loop_lag_ms"]
    assert out["gateway"] == {"p50_ms": 0.5, "p99_ms": 0.99, "samples": 1000}
    assert out["dealer"]["p50_ms"] == 0.53 and out["dealer"]["samples"] == 1000  # 500 of its 950 under 1 ms
    assert 25 < out["dealer"]["p99_ms"] < 50  # 5 % of its wakes were that late
    assert "old" not in out  # a process without the metric is left out
    own = lag_summary([0.001] * 98 + [0.02, 0.3])
    assert own == {"p50_ms": 1.0, "p99_ms": 20.0, "max_ms": 300.0, "samples": 100}
    rows = dict(report._lag_rows({"server_side": {"loop_lag_ms": out}, "load_generator_loop_lag_ms": own}))
    row = rows["event loop lag in the steady state, p50 / p99 ms"]
    assert row.startswith("dealer 0.5 / ") and "gateway 0.5 / 1.0" in row and row.endswith("load generator 1.0 / 20.0")
