"""What the players saw, in one-second buckets since the start of the run: hands, actions, act
latencies, errors by status, joins/leaves/reconnects, lobby calls. The summary covers a window
(the steady state); the buckets are the time series of the report's plots."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from cardroom.client.stats import percentile


def refusal_kind(code: str, reason: str) -> str:
    """A refusal's key among the errors by status: ``"FAILED_PRECONDITION/OUT_OF_TURN"``."""
    return f"{code}/{reason}" if reason else code


#: How many of a run's first errors the report shows in words (then only the first of each kind).
FIRST_EXAMPLES = 20


@dataclass
class Bucket:
    hands: int = 0
    actions: int = 0
    latencies: list[float] = field(default_factory=list)  # act: sent -> result/error, seconds
    errors: Counter[str] = field(default_factory=Counter)  # "STATUS" or "STATUS/REASON"
    events: Counter[str] = field(default_factory=Counter)  # joins, leaves, reconnects, lobby calls
    lobby_latencies: list[float] = field(default_factory=list)
    reconnect_latencies: list[float] = field(default_factory=list)  # stream re-opened -> snapshot

    def add(self, b: Bucket) -> None:
        self.hands += b.hands
        self.actions += b.actions
        self.latencies.extend(b.latencies)
        self.errors.update(b.errors)
        self.events.update(b.events)
        self.lobby_latencies.extend(b.lobby_latencies)
        self.reconnect_latencies.extend(b.reconnect_latencies)


@dataclass
class Recorder:
    started: float = field(default_factory=time.monotonic)
    started_at: float = field(default_factory=time.time)  # the same instant on the wall clock (the services' logs)
    buckets: dict[int, Bucket] = field(default_factory=dict)
    tables: int = 0  # tables created
    seated: int = 0  # players seated now
    connected: int = 0  # Play streams open now
    arrived: int = 0  # players whose first sit-down has ended (seated, or given up)
    steady_from: float | None = None  # when the steady state began (seconds since the start)
    gauges: list[tuple[float, int, int]] = field(default_factory=list)  # (t, seated, connected) per tick
    #: The first :data:`FIRST_EXAMPLES` errors in words, and after them the first of each kind not yet shown
    #: (a run's errors by status name kinds that its first ones may not show: what each was, said once).
    examples: list[str] = field(default_factory=list)
    example_kinds: list[str] = field(default_factory=list)  # each example's kind ("" for none), in step
    heard_until: float | None = None
    """Seconds since the start up to which every load-generator process has sent its buckets (whole
    seconds); None: the players record here directly, everything up to now is in."""

    def tick(self) -> None:
        self.gauges.append((round(self.now(), 2), self.seated, self.connected))

    def now(self) -> float:
        return time.monotonic() - self.started

    def bucket(self, at: float | None = None) -> Bucket:
        second = int(self.now() if at is None else at)
        found = self.buckets.get(second)
        if found is None:
            found = self.buckets[second] = Bucket()
        return found

    def hand(self) -> None:
        self.bucket().hands += 1

    def action(self, latency: float) -> None:
        b = self.bucket()
        b.actions += 1
        b.latencies.append(latency)

    def example(self, text: str, kind: str = "") -> None:
        """Keep the first few errors in words, and the first of each ``kind`` (the key of its count in the
        report's errors by status), for the report."""
        self.keep(f"{self.now():.1f}s {text}", kind)

    def keep(self, text: str, kind: str = "") -> bool:
        """``text`` (already stamped) kept when among the first :data:`FIRST_EXAMPLES` or the first of its kind."""
        first_of_kind = bool(kind) and kind not in self.example_kinds
        if len(self.examples) >= FIRST_EXAMPLES and not first_of_kind:
            return False
        self.examples.append(text)
        self.example_kinds.append(kind)
        return True

    def refused(self, latency: float, code: str, reason: str) -> None:
        b = self.bucket()
        b.latencies.append(latency)
        b.errors[refusal_kind(code, reason)] += 1

    def error(self, where: str, code: str, detail: str = "") -> None:
        kind = f"{code} ({where})"
        self.bucket().errors[kind] += 1
        self.example(f"{where}: {code} {detail}".strip(), kind)

    def event(self, name: str, latency: float | None = None) -> None:
        b = self.bucket()
        b.events[name] += 1
        if latency is not None and name == "lobby":
            b.lobby_latencies.append(latency)
        if latency is not None and name == "reconnect":
            b.reconnect_latencies.append(latency)

    def drain(self) -> dict[int, Bucket]:
        """The buckets recorded since the last drain, handed over (a load-generator process sends them
        to the coordinating one, which merges them: :meth:`merge`)."""
        out, self.buckets = self.buckets, {}
        return out

    def merge(self, buckets: dict[int, Bucket]) -> None:
        """Another recorder's buckets added to these, second by second (the run's clock is the same:
        ``started`` is the machine's monotonic clock, shared by its processes)."""
        for second, theirs in buckets.items():
            mine = self.buckets.get(second)
            if mine is None:
                self.buckets[second] = theirs
            else:
                mine.add(theirs)

    def window(self, start: float, end: float | None = None) -> Window:
        """Everything recorded in [start, end) seconds since the start (end: now)."""
        w = Window(start=start, end=self.now() if end is None else end)
        for second, b in self.buckets.items():
            if start <= second < w.end:
                w.add(b)
        return w


@dataclass
class Window(Bucket):
    """The buckets of [start, end) added up."""

    start: float = 0.0
    end: float = 0.0

    @property
    def seconds(self) -> float:
        return max(1e-9, self.end - self.start)

    def ms(self, p: float, samples: list[float] | None = None) -> float:
        return percentile([x * 1000 for x in (self.latencies if samples is None else samples)], p)

    def summary(self) -> dict[str, Any]:
        return {
            "seconds": round(self.seconds, 3),
            "hands": self.hands,
            "actions": self.actions,
            "hands_per_s": round(self.hands / self.seconds, 3),
            "actions_per_s": round(self.actions / self.seconds, 3),
            "act_latency_ms": {f"p{p}": round(self.ms(p), 3) for p in (50, 90, 99, 99.9)}
            | {"max": round(max(self.latencies, default=0.0) * 1000, 3), "samples": len(self.latencies)},
            "errors": sum(self.errors.values()),
            "errors_by_status": dict(self.errors.most_common()),
            "events": dict(self.events),
            "lobby_latency_ms": {f"p{p}": round(self.ms(p, self.lobby_latencies), 3) for p in (50, 99)}
            | {"samples": len(self.lobby_latencies)},
            "reconnect_latency_ms": {f"p{p}": round(self.ms(p, self.reconnect_latencies), 3) for p in (50, 99)}
            | {"samples": len(self.reconnect_latencies)},
        }
