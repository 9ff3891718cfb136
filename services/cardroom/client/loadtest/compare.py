"""A/B runs of the load test on a noisy machine (docs/capacity.md: the machine's own speed moves as much
between runs as most changes do): the two settings run alternately, each run with its bare-gRPC baseline
beside it, and the comparison is of the means and of each pair, never of one run each.

:func:`plan` orders the runs (A, B, A, B, ...); :func:`figures` reads what a run's report.json says;
:func:`compare` puts the runs of both sides side by side with their means and the B ÷ A ratios."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from cardroom.client.loadtest.services import is_load_generator

#: Processes whose CPU per hand is added up as "the dealers" (every replica).
DEALERS = ("dealer",)


@dataclass(frozen=True)
class Run:
    """One load-test run of one side."""

    side: str
    index: int
    out: Path
    env: dict[str, str]


@dataclass(frozen=True)
class Figures:
    """What one run's report says, for the comparison."""

    actions_per_s: float
    act_p99_ms: float
    bare_bidi: float
    """Bare grpc.aio bidi round trips per second in the same run (the machine's speed then)."""
    ratio: float
    """actions/s ÷ bare bidi."""
    fanout_ratio: float
    """actions/s ÷ the bare 6-seat tables' rounds/s (0: not measured)."""
    dealers_ms_per_hand: float
    gateway_ms_per_hand: float
    kafka_ms_per_hand: float
    services_ms_per_hand: float
    """Every process's CPU per hand but the load generator's: the card room's whole cost."""
    steal_cores: float
    """The hypervisor's steal in the steady state, cores: a run with more was on a slower machine."""
    errors: int


def plan(pairs: int, env_a: dict[str, str], env_b: dict[str, str], out: Path) -> list[Run]:
    """``pairs`` runs of each side, alternating, A first."""
    if pairs < 1:
        raise ValueError("pairs: at least 1")
    runs: list[Run] = []
    for i in range(1, pairs + 1):
        runs.append(Run("A", i, out / f"a-{i}", dict(env_a)))
        runs.append(Run("B", i, out / f"b-{i}", dict(env_b)))
    return runs


def parse_env(items: list[str]) -> dict[str, str]:
    """``["NAME=value", ...]`` as a dict (ValueError for an item without ``=`` or a name)."""
    env: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"{item!r}: expected NAME=value")
        env[name] = value
    return env


def figures(report: dict[str, Any]) -> Figures:
    steady = report["steady"]
    bare = report.get("baseline") or {}
    bidi = float(bare.get("bidi_round_trips_per_s") or 0.0)
    fanout = float(bare.get("fanout_rounds_per_s") or 0.0)
    actions = float(steady["actions_per_s"])
    per_hand = report.get("costs", {}).get("cpu_ms_per_hand", {})
    dealers = sum(v for k, v in per_hand.items() if k.split("-")[0] in DEALERS)
    return Figures(
        actions_per_s=actions,
        act_p99_ms=float(steady["act_latency_ms"]["p99"]),
        bare_bidi=bidi,
        ratio=actions / bidi if bidi else 0.0,
        fanout_ratio=actions / fanout if fanout else 0.0,
        dealers_ms_per_hand=float(dealers),
        gateway_ms_per_hand=float(per_hand.get("gateway", 0.0)),
        kafka_ms_per_hand=float(per_hand.get("kafka", 0.0)),
        services_ms_per_hand=float(sum(v for k, v in per_hand.items() if not is_load_generator(k))),
        steal_cores=float((report.get("machine") or {}).get("steal_cores_mean", 0.0)),
        errors=int(report.get("run", {}).get("errors", 0)),
    )


def read(run: Run) -> Figures | None:
    """The run's figures; None when it left no report (it failed)."""
    path = run.out / "report.json"
    if not path.exists():
        return None
    return figures(json.loads(path.read_text()))


FIELDS = tuple(Figures.__dataclass_fields__)


def compare(results: list[tuple[Run, Figures | None]]) -> dict[str, Any]:
    """Each side's runs and means, and B's mean ÷ A's for every figure (None where a side has no run)."""
    sides: dict[str, list[Figures]] = {"A": [], "B": []}
    runs = []
    for run, got in results:
        runs.append(
            {
                "side": run.side,
                "index": run.index,
                "out": str(run.out),
                "env": run.env,
                "figures": asdict(got) if got is not None else None,
            }
        )
        if got is not None:
            sides[run.side].append(got)
    means = {
        side: {f: fmean(getattr(x, f) for x in got) for f in FIELDS} if got else None for side, got in sides.items()
    }
    a, b = means["A"], means["B"]
    ratios = {f: (b[f] / a[f] if a and b and a[f] else None) for f in FIELDS}
    return {"runs": runs, "means": means, "b_over_a": ratios}


def render(summary: dict[str, Any]) -> str:
    """The comparison as a plain-text table: every run, then the means and B ÷ A."""
    head = [
        "run",
        "actions/s",
        "act p99 ms",
        "bare bidi/s",
        "÷ bare",
        "÷ bare tables",
        "dealers ms/hand",
        "gateway ms/hand",
        "kafka ms/hand",
        "services ms/hand",
        "steal cores",
        "errors",
    ]
    rows = [head]

    def line(label: str, f: dict[str, Any] | None) -> list[str]:
        if f is None:
            return [label, "(no report)"] + [""] * (len(head) - 2)
        return [
            label,
            f"{f['actions_per_s']:.1f}",
            f"{f['act_p99_ms']:.1f}",
            f"{f['bare_bidi']:.0f}",
            f"{f['ratio']:.4f}",
            f"{f['fanout_ratio']:.3f}",
            f"{f['dealers_ms_per_hand']:.1f}",
            f"{f['gateway_ms_per_hand']:.1f}",
            f"{f['kafka_ms_per_hand']:.1f}",
            f"{f['services_ms_per_hand']:.1f}",
            f"{f['steal_cores']:.2f}",
            f"{f['errors']:.0f}",
        ]

    for run in summary["runs"]:
        rows.append(line(f"{run['side']}{run['index']}", run["figures"]))
    for side in ("A", "B"):
        rows.append(line(f"mean {side}", summary["means"][side]))
    ratio = summary["b_over_a"]
    rows.append(["B ÷ A"] + [("" if ratio[f] is None else f"{ratio[f]:.3f}") for f in FIELDS])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))) for r in rows
    )
