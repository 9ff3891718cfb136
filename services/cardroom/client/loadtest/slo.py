"""SLO flags: ``--slo act_p99_ms=50 --slo errors=0``; a missed one makes the run exit non-zero."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Summary = dict[str, Any]

#: name -> (what it measures, "max" (at most) or "min" (at least), how to read it from the report)
OBJECTIVES: dict[str, tuple[str, str, Callable[[Summary], float | None]]] = {
    "act_p50_ms": ("act latency p50, ms", "max", lambda s: s["steady"]["act_latency_ms"]["p50"]),
    "act_p90_ms": ("act latency p90, ms", "max", lambda s: s["steady"]["act_latency_ms"]["p90"]),
    "act_p99_ms": ("act latency p99, ms", "max", lambda s: s["steady"]["act_latency_ms"]["p99"]),
    "act_p999_ms": ("act latency p99.9, ms", "max", lambda s: s["steady"]["act_latency_ms"]["p99.9"]),
    "errors": ("errors over the whole run", "max", lambda s: s["run"]["errors"]),
    "hands_per_s": ("hands/s in the steady state", "min", lambda s: s["steady"]["hands_per_s"]),
    "actions_per_s": ("actions/s in the steady state", "min", lambda s: s["steady"]["actions_per_s"]),
    "imbalance": (
        "sum of |chip invariants| at the end (a missing one fails)",
        "max",
        lambda s: (
            None
            if s["invariants"]["missing"] or not s["invariants"]["values"]
            else sum(abs(v) for v in s["invariants"]["values"].values())
        ),
    ),
    "escrow_vs_stacks": (
        "|wallet table escrows - dealer cash-table chips| at the end, summed over currencies (a missing gauge fails)",
        "max",
        lambda s: s["escrow_vs_stacks"]["difference"],
    ),
    "balance_drift": (
        "players' chips after - before (+ rake), through the gateway",
        "max",
        lambda s: None if s["balances"]["drift"] is None else abs(s["balances"]["drift"]),
    ),
    "ratio_bidi": ("actions/s / bare bidi round trips/s", "min", lambda s: (s.get("ratio") or {}).get("bidi")),
    "lobby_p99_ms": ("lobby call latency p99, ms", "max", lambda s: s["steady"]["lobby_latency_ms"]["p99"]),
    "reconnect_p99_ms": (
        "stream re-open to snapshot p99, ms",
        "max",
        lambda s: s["run"]["reconnect_latency_ms"]["p99"],
    ),
    "register_p99_ms": (
        "tournament burst: RegisterTournament latency p99, ms",
        "max",
        lambda s: s["burst"]["register"]["latency_ms"]["p99"],
    ),
    "burst_failed_checks": (
        "tournament burst: failed checks (entrants, prize pool, each player charged once, all refunded)",
        "max",
        lambda s: len(s["burst"]["failed_checks"]),
    ),
}


@dataclass(frozen=True)
class Objective:
    name: str
    limit: float

    @classmethod
    def parse(cls, text: str) -> Objective:
        name, sep, value = text.partition("=")
        if not sep or name not in OBJECTIVES:
            raise ValueError(f"--slo {text!r}: expected NAME=NUMBER, NAME one of {', '.join(OBJECTIVES)}")
        try:
            return cls(name, float(value))
        except ValueError:
            raise ValueError(f"--slo {text!r}: {value!r} is not a number") from None

    def check(self, summary: Summary) -> dict[str, Any]:
        what, direction, read = OBJECTIVES[self.name]
        try:
            value = read(summary)
        except (KeyError, TypeError):
            value = None
        met = value is not None and (value <= self.limit if direction == "max" else value >= self.limit)
        return {
            "name": self.name,
            "what": what,
            "limit": self.limit,
            "direction": direction,
            "value": value,
            "met": met,
        }


def check_all(objectives: list[Objective], summary: Summary) -> list[dict[str, Any]]:
    return [o.check(summary) for o in objectives]
