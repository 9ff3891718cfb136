"""How late a service's event loop runs what falls due: ``python_asyncio_loop_lag_seconds``.

Everything a grpc.aio service does runs on its one asyncio loop. A callback that runs long (a full
garbage collection, a table's hand end, a presence beat listing every player) delays every other
call of the process by as much, and the machine's other processes take the loop's core away too.
Every call's latency then includes the wait, whatever its own handler costs; this is the measure of
that wait. A task asks to wake every ``LOOP_LAG_PERIOD`` seconds (default 0.1; 0 turns it off) and
observes how much later than asked the loop woke it. A stall of L seconds meets a wake with a chance of
about L / period (at most 1): the histogram reads like the wait of a call arriving at a random moment.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from cardroom.runtime.config import env_float
from cardroom.runtime.metrics import LOOP_LAG

#: seconds between two wakes (``LOOP_LAG_PERIOD``)
PERIOD = 0.1


async def observe_lag(period: float, observe: Callable[[float], object] = LOOP_LAG.observe) -> None:
    """Observe how late each wake comes, every ``period`` seconds, until cancelled."""
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + period
        await asyncio.sleep(period)
        observe(max(0.0, loop.time() - due))


def start(period: float | None = None) -> asyncio.Task[None] | None:
    """Start observing (in the running loop) every ``period`` seconds, ``LOOP_LAG_PERIOD`` by default;
    None when it is 0 (off). Cancel the task to stop."""
    seconds = env_float("LOOP_LAG_PERIOD", PERIOD) if period is None else period
    if seconds == 0:
        return None
    if not 0.01 <= seconds <= 60:  # NaN too
        raise SystemExit(f"LOOP_LAG_PERIOD={seconds}: 0.01 to 60 seconds (or 0: off)")
    return asyncio.create_task(observe_lag(seconds), name="loop-lag")


async def stop(task: asyncio.Task[None] | None) -> None:
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
