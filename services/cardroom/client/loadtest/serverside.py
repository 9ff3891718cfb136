"""What the services themselves counted during the steady state, from two /metrics scrapes:
counter deltas and histogram percentiles (the gateway's act time, the dealer's action latency)."""

from __future__ import annotations

import math
import re

from cardroom.client.loadtest.services import pick

_LE = re.compile(r'le="([^"]+)"')


def delta(before: dict[str, float], after: dict[str, float], name: str) -> float:
    return sum(pick(after, name).values()) - sum(pick(before, name).values())


def histogram_quantile(before: dict[str, float], after: dict[str, float], name: str, q: float) -> float | None:
    """The q-quantile (seconds) of the observations between the scrapes, from the cumulative buckets
    summed over label sets; linear inside the bucket it falls in, as Prometheus does."""
    buckets: dict[float, float] = {}
    for key, value in pick(after, f"{name}_bucket").items():
        match = _LE.search(key)
        if match:
            le = float(match.group(1))
            buckets[le] = buckets.get(le, 0.0) + value - before.get(key, 0.0)
    if not buckets:
        return None
    edges = sorted(buckets)
    total = buckets[edges[-1]]
    if total <= 0:
        return None
    rank, lower, below = q * total, 0.0, 0.0
    for le in edges:
        if buckets[le] >= rank:
            if math.isinf(le):
                return lower
            inside = buckets[le] - below
            return lower + (le - lower) * ((rank - below) / inside if inside else 0.0)
        lower, below = le, buckets[le]
    return lower


#: The collector's generations: a full collection, and the young ones.
FULL, YOUNG = ("2",), ("0", "1")


def gc_collections(
    before: dict[str, float], after: dict[str, float], generations: tuple[str, ...] = FULL
) -> tuple[int, float | None]:
    """A service's garbage collections of ``generations`` (:data:`FULL` or :data:`YOUNG`) between the
    scrapes and their mean pause in ms (``python_gc_pause_seconds{generation}``,
    cardroom.runtime.collector); None without any."""
    labels = tuple(f'generation="{generation}"' for generation in generations)

    def total(values: dict[str, float], suffix: str) -> float:
        prefix = f"python_gc_pause_seconds_{suffix}{{"
        return sum(v for k, v in values.items() if k.startswith(prefix) and any(label in k for label in labels))

    count = total(after, "count") - total(before, "count")
    seconds = total(after, "sum") - total(before, "sum")
    return int(count), (round(1000 * seconds / count, 1) if count > 0 else None)


def loop_lag(before: dict[str, float], after: dict[str, float]) -> dict[str, float | None]:
    """How late a service's event loop ran what fell due between the scrapes (``python_asyncio_loop_lag_seconds``,
    cardroom.runtime.looplag): p50 and p99 in ms, and how many wakes were measured."""
    out: dict[str, float | None] = {}
    for q in (0.5, 0.99):
        value = histogram_quantile(before, after, "python_asyncio_loop_lag_seconds", q)
        out[f"p{int(q * 100)}_ms"] = None if value is None else round(value * 1000, 2)
    out["samples"] = delta(before, after, "python_asyncio_loop_lag_seconds_count")
    return out


def server_side(before: dict[str, dict[str, float]], after: dict[str, dict[str, float]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for kind, generations in (("full", FULL), ("young", YOUNG)):
        out[f"gc_{kind}_collections"] = {
            name: dict(
                zip(("count", "mean_pause_ms"), gc_collections(before.get(name, {}), values, generations), strict=True)
            )
            for name, values in sorted(after.items())
            if values
        }
    out["loop_lag_ms"] = {
        name: lag
        for name, values in sorted(after.items())
        if values and (lag := loop_lag(before.get(name, {}), values))["samples"]
    }
    gw_b, gw_a = before.get("gateway", {}), after.get("gateway", {})
    if gw_a:
        for q in (0.5, 0.99):
            value = histogram_quantile(gw_b, gw_a, "gateway_act_seconds", q)
            out[f"gateway_act_ms_p{int(q * 100)}"] = None if value is None else round(value * 1000, 2)
        out["gateway_play_events"] = delta(gw_b, gw_a, "gateway_play_events_total")
        out["gateway_rate_limited"] = delta(gw_b, gw_a, "gateway_rate_limited_total")
    de_b, de_a = before.get("dealer", {}), after.get("dealer", {})
    if de_a:
        for q in (0.5, 0.99):
            value = histogram_quantile(de_b, de_a, "dealer_action_latency_seconds", q)
            out[f"dealer_action_ms_p{int(q * 100)}"] = None if value is None else round(value * 1000, 2)
        out["dealer_hands_dealt"] = delta(de_b, de_a, "dealer_hands_dealt_total")
        out["dealer_snapshots"] = delta(de_b, de_a, "dealer_snapshots_total")
        out["dealer_timeouts"] = delta(de_b, de_a, "dealer_timeouts_total")
        out["dealer_disconnects"] = delta(de_b, de_a, "dealer_disconnects_total")
    cm_b, cm_a = before.get("connection_monitor", {}), after.get("connection_monitor", {})
    if cm_a:
        out["monitor_disconnects"] = delta(cm_b, cm_a, "connection_monitor_disconnects_total")
        out["monitor_reconnects"] = delta(cm_b, cm_a, "connection_monitor_reconnects_total")
    return out
