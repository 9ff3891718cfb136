"""Python's garbage collector in a service: how long it stops the process, and what it may skip.

``python_gc_pause_seconds{generation}`` times every collection (``gc.callbacks``): a full collection
of a service holding a thousand tables or sessions stops its event loop for a tenth of a second or more,
which is every caller's latency at that moment, so operators see it beside the RPC latencies.

With ``GC_FREEZE`` on (the default), a service ready to serve moves everything it made while starting
(modules, descriptors, its configuration, restored tables) to the permanent generation
(``gc.freeze``): full collections no longer walk it. ``GC_FREEZE=0`` leaves that to Python.

``GC_THRESHOLDS=A,B,C`` sets the collector's thresholds (``gc.set_threshold``), by default
:data:`THRESHOLDS` (Python's own are 700,10,10: ``GC_THRESHOLDS=700,10,10`` brings them back). A larger
first one lets the objects of a request die young instead of reaching the oldest generation, whose
growth is what triggers full collections: with Python's, a gateway of 3,600 Play sessions made one or two
full collections of about 300 ms a minute and 180 young ones of 3.5 ms; with :data:`THRESHOLDS`, no full
one and a few young ones of 20–110 ms (docs/capacity.md, "The collectors' thresholds")."""

from __future__ import annotations

import gc
import logging
import os
import time
from typing import Any

from cardroom.runtime.config import env_int
from cardroom.runtime.metrics import GC_PAUSE as PAUSE

log = logging.getLogger("cardroom.runtime.collector")


class PauseTimer:
    """The ``gc.callbacks`` entry that observes every collection into :data:`PAUSE`."""

    def __init__(self) -> None:
        self._started = 0.0
        self._by_generation = [PAUSE.labels(str(generation)) for generation in range(3)]

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._by_generation[info["generation"]].observe(time.perf_counter() - self._started)


_TIMER: PauseTimer | None = None


def time_pauses() -> None:
    """Observe every collection from now on (once per process)."""
    global _TIMER
    if _TIMER is None:
        _TIMER = PauseTimer()
        gc.callbacks.append(_TIMER)


#: The services' thresholds unless ``GC_THRESHOLDS`` says otherwise (see the module).
THRESHOLDS = (30_000, 20, 20)


def thresholds_from_env() -> tuple[int, int, int]:
    """``GC_THRESHOLDS`` as three positive integers, :data:`THRESHOLDS` when unset (a bad value stops
    the service)."""
    raw = os.environ.get("GC_THRESHOLDS", "").strip()
    if not raw:
        return THRESHOLDS
    try:
        values = tuple(int(part) for part in raw.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or min(values) < 1:
        raise SystemExit(f"GC_THRESHOLDS={raw!r}: expected three positive integers, e.g. 700,10,10")
    return values  # type: ignore[return-value]


def set_thresholds() -> None:
    """Apply ``GC_THRESHOLDS`` (see the module), or :data:`THRESHOLDS`."""
    gc.set_threshold(*thresholds_from_env())


def freeze_start_up() -> int:
    """With ``GC_FREEZE`` on: what exists now is never collected again (see the module). Returns how many
    objects were frozen (0 with it off)."""
    if not env_int("GC_FREEZE", 1):
        return 0
    gc.collect()  # the start-up's garbage first: frozen, it would never be freed
    gc.freeze()
    frozen = gc.get_freeze_count()
    log.info("start-up objects frozen", extra={"objects": frozen})
    return frozen
