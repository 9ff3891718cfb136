"""Latency samples and progress lines for the bots."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from cardroom.runtime.errors import in_words


def percentile(samples: list[float], p: float) -> float:
    if not samples:
        return 0.0
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


@dataclass
class Stats:
    started: float = field(default_factory=time.monotonic)
    hands: int = 0
    actions: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)  # seconds, action sent -> answer
    reasons: Counter[str] = field(default_factory=Counter)  # why actions were refused (ErrorInfo reasons)

    said: dict[str, str] = field(default_factory=dict)  # reason -> the last message with it

    def refused(self, reason: str, code: str, message: str = "") -> None:
        self.errors += 1
        self.reasons[reason or code] += 1
        if message:
            self.said[reason or code] = message

    def errors_said(self) -> list[str]:
        """What the errors were, one line per reason with its last message, most frequent first."""
        return [
            f"{in_words(r)} ({n}x): {self.said[r]}" if r in self.said else f"{in_words(r)} ({n}x)"
            for r, n in self.reasons.most_common()
        ]

    def reasons_line(self) -> str:
        """The refusals in words, most frequent first: "refused: out of turn 3, capped 1"."""
        if not self.reasons:
            return ""
        return "refused: " + ", ".join(f"{in_words(r)} {n}" for r, n in self.reasons.most_common())

    def line(self) -> str:
        elapsed = max(1e-9, time.monotonic() - self.started)
        ms = [x * 1000 for x in self.latencies]
        return (
            f"{elapsed:7.1f}s  hands {self.hands:>6}  {self.hands / elapsed:6.2f} hands/s"
            f"  actions {self.actions:>7}"
            f"  errors {self.errors:>4}  act latency ms p50 {percentile(ms, 50):.1f} p95 {percentile(ms, 95):.1f}"
            f" p99 {percentile(ms, 99):.1f}" + (f"  ({self.reasons_line()})" if self.reasons else "")
        )
