"""The load generator's own garbage collection: its pauses are not the card room's latency.

A full collection of a heap holding thousands of players' clients takes hundreds of milliseconds (seen:
0.25–0.6 s in a 300-table run), and every act in flight then reads that much slower. At the start of the
steady state :func:`freeze` moves everything the ramp made into the permanent generation (``gc.freeze``),
so the collections after it look only at what the steady state makes. :class:`Pauses` times every
collection, so the report says what the generator's pauses still were, and how much of them was the
collector's own work (the thread's CPU time) rather than the process waiting for a core.

Even so its young collections took 13–19 stops a minute of up to 60–140 ms at 3,600–6,000 players, on the
CPU, and freed nothing in any run (docs/capacity.md): about 1–2 % of the steady state, so a percent of the
acts read their answers that much late — the players' p99. So the collector is also :class:`Held` for the
steady state: off, with a valve (:data:`VALVE_OBJECTS` more objects than freed since the last collection
make one, timed as any other), and one collection at its end that says what the steady state left for it."""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Pauses:
    """Every collection's duration while installed, by generation."""

    started: float = 0.0
    started_cpu: float = 0.0
    seconds: dict[int, list[float]] = field(default_factory=lambda: {0: [], 1: [], 2: []})
    collected: dict[int, int] = field(default_factory=lambda: {0: 0, 1: 0, 2: 0})  # unreachable objects freed
    cpu: dict[int, float] = field(default_factory=lambda: {0: 0.0, 1: 0.0, 2: 0.0})  # the thread's CPU seconds

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started, self.started_cpu = time.perf_counter(), time.thread_time()
        else:
            self.seconds[info["generation"]].append(time.perf_counter() - self.started)
            self.cpu[info["generation"]] += time.thread_time() - self.started_cpu
            self.collected[info["generation"]] += info.get("collected", 0)

    def install(self) -> Pauses:
        gc.callbacks.append(self._callback)
        return self

    def remove(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def reset(self) -> None:
        for found in self.seconds.values():
            found.clear()
        self.collected = dict.fromkeys(self.collected, 0)
        self.cpu = dict.fromkeys(self.cpu, 0.0)

    def summary(self) -> dict[str, Any]:
        """Per generation: how many collections, their longest and total milliseconds, of those the
        milliseconds on the CPU, the objects they freed."""
        return {
            f"gen{generation}": {
                "collections": len(found),
                "max_ms": round(1000 * max(found, default=0.0), 1),
                "total_ms": round(1000 * sum(found), 1),
                "cpu_ms": round(1000 * self.cpu[generation], 1),
                "collected": self.collected[generation],
            }
            for generation, found in self.seconds.items()
        }


#: With the collector held, a collection once this many more tracked objects were made than freed
#: (``gc.get_count()[0]``): a run that makes cyclic garbage grows by that much at most between two.
VALVE_OBJECTS = 1_000_000


@dataclass
class Held:
    """The collector off (``gc.disable``) from :meth:`hold` to :meth:`release`; :meth:`valve` (called
    now and then) collects when :data:`VALVE_OBJECTS` is passed."""

    valve_objects: int = VALVE_OBJECTS
    held: bool = False
    valves: int = 0

    def hold(self) -> None:
        if not self.held:
            self.held = True
            gc.disable()

    def valve(self) -> bool:
        """Collect when too many objects were made since the last collection; whether it did."""
        if self.held and gc.get_count()[0] >= self.valve_objects:
            self.valves += 1
            gc.collect()
            return True
        return False

    def release(self) -> tuple[int, float]:
        """The collector on again, after one collection: (objects it freed, its milliseconds); (0, 0.0)
        when it was not held."""
        if not self.held:
            return 0, 0.0
        self.held = False
        started = time.perf_counter()
        freed = gc.collect()
        gc.enable()
        return freed, 1000 * (time.perf_counter() - started)


def freeze() -> None:
    """What exists now is never collected again (the ramp's players, their clients and streams)."""
    gc.freeze()


def unfreeze() -> None:
    gc.unfreeze()
