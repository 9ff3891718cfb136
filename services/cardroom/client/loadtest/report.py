"""The report of a run: a terminal summary (rich), ``report.json`` and ``report.html`` with PNG plots
beside it (matplotlib): latency percentiles over time, hands/s and actions/s, CPU and RSS per service
process, errors by status, players seated."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.services import ProcessSampler
from cardroom.client.stats import percentile


def series(recorder: Recorder, end: float) -> dict[str, list[float]]:
    """Per-second time series (x = seconds since the start of the ramp)."""
    xs = list(range(int(end) + 1))
    out: dict[str, list[float]] = {"t": [float(x) for x in xs]}
    for name in ("hands", "actions", "errors"):
        out[name] = []
    for p in (50, 90, 99):
        out[f"act_p{p}_ms"] = []
    for x in xs:
        b = recorder.buckets.get(x)
        out["hands"].append(b.hands if b else 0)
        out["actions"].append(b.actions if b else 0)
        out["errors"].append(sum(b.errors.values()) if b else 0)
        ms = [v * 1000 for v in b.latencies] if b else []
        for p in (50, 90, 99):
            out[f"act_p{p}_ms"].append(percentile(ms, p) if ms else float("nan"))
    return out


def errors_over_time(recorder: Recorder) -> dict[str, dict[int, int]]:
    by: dict[str, dict[int, int]] = {}
    for second, b in recorder.buckets.items():
        for status, n in b.errors.items():
            by.setdefault(status, {})[second] = by.setdefault(status, {}).get(second, 0) + n
    return by


def write_json(summary: dict[str, Any], out: Path) -> Path:
    path = out / "report.json"
    path.write_text(json.dumps(summary, indent=2, sort_keys=False, default=str) + "\n")
    return path


def plot(summary: dict[str, Any], recorder: Recorder, sampler: ProcessSampler, out: Path) -> list[Path]:
    """The PNG plots; the start of the steady state is marked on each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ramp = summary["settings"].get("steady_from_s", summary["settings"]["ramp_s"])
    end = ramp + summary["settings"]["steady_s"]
    s = series(recorder, end)
    paths = []

    def save(fig: Any, name: str) -> None:
        for ax in fig.axes:
            ax.axvline(ramp, color="grey", linestyle=":", linewidth=1)
            ax.set_xlabel("seconds since the start of the ramp")
            ax.grid(alpha=0.3)
        fig.tight_layout()
        path = out / name
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)

    fig, ax = plt.subplots(figsize=(9, 3.6))
    for p in (50, 90, 99):
        ax.plot(s["t"], s[f"act_p{p}_ms"], label=f"p{p}")
    ax.set_yscale("log")
    ax.set_ylabel("act latency, ms (log)")
    ax.set_title("Act latency percentiles per second (sent -> result, at the player)")
    ax.legend()
    save(fig, "latency.png")

    fig, ax = plt.subplots(figsize=(9, 3.6))
    ax.plot(s["t"], s["actions"], label="actions/s")
    ax.set_ylabel("actions/s")
    ax2 = ax.twinx()
    ax2.plot(s["t"], s["hands"], color="tab:orange", label="hands/s")
    ax2.set_ylabel("hands/s")
    ax.set_title("Throughput")
    ax.legend(loc="upper left")
    ax2.legend(loc="upper right")
    save(fig, "throughput.png")

    save(_processes(plt, sampler), "processes.png")

    fig, ax = plt.subplots(figsize=(9, 3.6))
    by = errors_over_time(recorder)
    if by:
        bottom = [0.0] * len(s["t"])
        for status, per_second in sorted(by.items(), key=lambda kv: -sum(kv[1].values())):
            heights = [per_second.get(int(t), 0) for t in s["t"]]
            ax.bar(s["t"], heights, bottom=bottom, label=f"{status} ({sum(per_second.values())})", width=1.0)
            bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "no errors", ha="center", va="center", transform=ax.transAxes, fontsize=14)
    ax.set_ylabel("errors per second")
    ax.set_title("Errors by status")
    save(fig, "errors.png")

    fig, ax = plt.subplots(figsize=(9, 3.0))
    ax.plot([t for t, _, _ in recorder.gauges], [n for _, n, _ in recorder.gauges], label="seated")
    ax.plot([t for t, _, _ in recorder.gauges], [n for _, _, n in recorder.gauges], label="Play streams open")
    ax.set_ylabel("players")
    ax.set_title("Players")
    ax.legend()
    save(fig, "players.png")
    return paths


def _processes(plt: Any, sampler: ProcessSampler) -> Any:
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for name, samples in sampler.samples.items():
        ax.plot([x.at for x in samples], [x.cpu for x in samples], label=name)
        ax2.plot([x.at for x in samples], [x.rss / 2**20 for x in samples], label=name)
    if sampler.machine:
        at = [m.at for m in sampler.machine]
        ax.plot(at, [m.others for m in sampler.machine], "k--", linewidth=1, label="other processes")
        ax.plot(at, [m.steal for m in sampler.machine], "k:", linewidth=1, label="steal (hypervisor)")
    ax.set_ylabel("CPU, cores")
    ax.set_title("CPU and RSS per process")
    ax2.set_ylabel("RSS, MiB")
    if sampler.samples:
        ax.legend(fontsize=8, ncol=4)
    return fig


def plot_burst(summary: dict[str, Any], burst: Any, sampler: ProcessSampler, out: Path) -> list[Path]:
    """The tournament burst's plots: each call's latency against when it was answered (register, the
    retries, unregister), and CPU / RSS per process."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    fig, ax = plt.subplots(figsize=(9, 3.6))
    for label, calls in (
        ("register", burst.register),
        ("retry (same id)", burst.retry),
        ("unregister (its own burst, later)", burst.unregister),
    ):
        if calls.latencies:
            ax.scatter(
                calls.completed, [x * 1000 for x in calls.latencies], s=8, label=f"{label} ({len(calls.latencies)})"
            )
    ax.set_xlabel("seconds since the burst started (each call: when it was answered)")
    ax.set_ylabel("latency, ms")
    ax.set_title("Tournament registration burst: latency per call at the player")
    ax.grid(alpha=0.3)
    if burst.register.latencies:
        ax.legend(fontsize=8)
    fig.tight_layout()
    for name, figure in (("burst.png", fig), ("processes.png", _processes(plt, sampler))):
        if name == "processes.png":
            for a in figure.axes:
                a.set_xlabel("seconds since the run started")
                a.grid(alpha=0.3)
            figure.tight_layout()
        path = out / name
        figure.savefig(path, dpi=90)
        plt.close(figure)
        paths.append(path)
    return paths


def _rows(d: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    rows = []
    for k, v in d.items():
        if isinstance(v, dict):
            rows.extend(_rows(v, f"{prefix}{k}."))
        else:
            rows.append((f"{prefix}{k}", str(v)))
    return rows


def write_html(summary: dict[str, Any], plots: list[Path], out: Path) -> Path:
    slo = summary.get("slo", [])
    verdict = "PASS" if all(o["met"] for o in slo) else "FAIL"
    parts = [
        "<!doctype html><meta charset='utf-8'><title>cardroom loadtest</title>",
        (
            "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}"
            "td,th{padding:2px 8px;text-align:left}table{border-collapse:collapse}"
            "tr:nth-child(even){background:#f3f3f3}.pass{color:green}.fail{color:#b00}</style>"
        ),
        f"<h1>cardroom loadtest — {html.escape(summary['settings']['scenario'])}</h1>",
        f"<p>{html.escape(summary['headline'])}</p>",
    ]
    if slo:
        parts.append(f"<h2>SLO: <span class='{verdict.lower()}'>{verdict}</span></h2><table>")
        parts.append("<tr><th>objective</th><th>limit</th><th>value</th><th></th></tr>")
        for o in slo:
            mark = "met" if o["met"] else "MISSED"
            parts.append(
                f"<tr><td>{html.escape(o['what'])} ({o['name']})</td><td>{o['direction']} {o['limit']:g}</td>"
                f"<td>{o['value']}</td><td class='{'pass' if o['met'] else 'fail'}'>{mark}</td></tr>"
            )
        parts.append("</table>")
    for p in plots:
        parts.append(f"<h2>{html.escape(p.stem)}</h2><img src='{html.escape(p.name)}' style='max-width:100%'>")
    for name, prof in (summary.get("profiles") or {}).items():
        parts.append(f"<h2>profile: {html.escape(name)} ({prof['samples']} py-spy samples)</h2><table>")
        # the kernel's CPU per thread first: py-spy's shares count threads waiting in select as busy
        heads = ["threads, CPU cores (kernel)"] if "thread_cpu_cores" in prof else []
        heads += ["threads, % of samples", "own time, %", "inclusive, %"]
        parts.append("<tr>" + "".join(f"<th>{h}</th>" for h in heads) + "</tr>")
        columns = [prof["threads_pct"], prof["own_pct"], prof["inclusive_pct"]]
        formats = ["{:5.1f}"] * 3
        if "thread_cpu_cores" in prof:
            columns.insert(0, prof["thread_cpu_cores"])
            formats.insert(0, "{:.3f}")
        for i in range(max(len(c) for c in columns)):
            cells = [
                f"{fmt.format(c[i][1])} {html.escape(c[i][0])}" if i < len(c) else ""
                for c, fmt in zip(columns, formats, strict=True)
            ]
            parts.append("<tr>" + "".join(f"<td><code>{c}</code></td>" for c in cells) + "</tr>")
        parts.append("</table>")
    for section in (
        "burst",
        "steady",
        "ramp",
        "run",
        "baseline",
        "ratio",
        "processes",
        "load_generator_gc",
        "load_generator_loop_lag_ms",
        "machine",
        "costs",
        "invariants",
        "escrow_vs_stacks",
        "balances",
        "server_side",
        "settings",
        "first_errors",
        "notes",
    ):
        value = summary.get(section)
        if value is None:
            continue
        parts.append(f"<h2>{section}</h2><table>")
        if isinstance(value, dict):
            rows = _rows(value)
        elif isinstance(value, list):
            rows = [("", str(v)) for v in value]
        else:
            rows = [("", str(value))]
        for k, v in rows:
            parts.append(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>")
        parts.append("</table>")
    path = out / "report.html"
    path.write_text("\n".join(parts) + "\n")
    return path


def print_burst(summary: dict[str, Any], console: Console) -> None:
    b = summary["burst"]
    table = Table(title=f"cardroom loadtest: tournament-burst — {b['tournament_id']}", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")

    def latency(calls: dict[str, Any]) -> str:
        lat = calls["latency_ms"]
        return f"{lat['p50']:.1f} / {lat['p90']:.1f} / {lat['p99']:.1f} / {lat['max']:.1f}"

    def refused(calls: dict[str, Any]) -> str:
        return f"{calls['errors']}  " + ", ".join(f"{k} {v}" for k, v in calls["errors_by_status"].items())

    reg, after = b["register"], b["after_register"]
    rows = [
        ("players registering at once / of them retrying", f"{b['entrants_target']} / {b['retrying_players']}"),
        ("burst wall time, s / registrations/s", f"{b['register_wall_s']:.2f} / {b['registrations_per_s']}"),
        ("register latency p50 / p90 / p99 / max, ms", latency(reg)),
        ("register refused", refused(reg)),
        ("retries (same request id): calls / replayed", f"{b['retries']['calls']} / {b['retries']['replayed']}"),
        ("retries refused", refused(b["retries"])),
        ("entrants (expected)", f"{after['entrants']} ({after['expected_entrants']})"),
        ("prize pool (expected)", f"{after['prize_pool']} ({after['expected_prize_pool']})"),
        ("unregister latency p50 / p90 / p99 / max, ms", latency(b["unregister"])),
        ("unregister refused", refused(b["unregister"])),
        (
            "after unregistering: entrants / pool",
            f"{b['after_unregister']['entrants']} / {b['after_unregister']['prize_pool']}",
        ),
        ("checks", "OK" if not b["failed_checks"] else "FAILED: " + "; ".join(b["failed_checks"])),
    ]
    for name, p in summary["processes"].items():
        rows.append((f"{name}: CPU cores / RSS MiB", f"{p['cpu_cores_mean']:.2f} / {p['rss_mib_mean']:.0f}"))
    rows.extend(_machine_rows(summary))
    rows.extend(_invariant_rows(summary))
    for k, v in rows:
        table.add_row(k, v)
    console.print(table)
    _print_slo(summary, console)


def _invariant_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    inv, esc = summary["invariants"], summary["escrow_vs_stacks"]
    return [
        (
            "chip invariants (must be 0)",
            ", ".join(f"{k.split(': ', 1)[-1]}={v:g}" for k, v in inv["values"].items())
            + (f"  MISSING {inv['missing']}" if inv["missing"] else ""),
        ),
        (
            "Kafka backlogs at the end (dealer publish, wallet outbox; 0 once settled)",
            ", ".join(
                f"{k.split(': ', 1)[-1]}={'not read' if v is None else f'{v:g}'}"
                for k, v in inv.get("backlogs", {}).items()
            ),
        ),
        (
            "wallet table escrows − dealer cash-table chips (must be 0)",
            f"{esc['difference']}  "
            + ", ".join(f"{c}: {v['wallet_escrow']:g} − {v['dealer_chips']:g}" for c, v in esc["by_currency"].items())
            + (f"  MISSING {esc['missing']}" if esc["missing"] else "")
            + f"  ({esc['reads']} reads)",
        ),
    ]


def _print_slo(summary: dict[str, Any], console: Console) -> None:
    for o in summary.get("slo", []):
        style = "green" if o["met"] else "bold red"
        console.print(
            f"[{style}]SLO {o['name']} {'<=' if o['direction'] == 'max' else '>='} {o['limit']:g}: "
            f"{o['value']} — {'met' if o['met'] else 'MISSED'}[/{style}]"
        )
    console.print(f"report: {summary['files']['html']}  json: {summary['files']['json']}")


def _ramp_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """When the steady state began (every player seated) against the planned ramp, and the act
    latency until then: a sit-down backlog shows here, not in the steady state's figures."""
    ramp = summary.get("ramp")
    if not ramp:
        return []
    se, lat = summary["settings"], ramp["act_latency_ms"]
    return [
        (
            "ramp: steady state from, s (planned ramp) / act latency p50 / p99 until then, ms",
            f"{se['steady_from_s']:.0f} ({se['ramp_s']:.0f}) / {lat['p50']:.1f} / {lat['p99']:.1f}",
        )
    ]


def _gc_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The services' full garbage collections in the steady state (each stops a service: every caller
    waits), and the load generator's own (its pauses would read as the card room's latency)."""
    rows = []
    for kind in ("full", "young"):
        collections = (summary.get("server_side") or {}).get(f"gc_{kind}_collections") or {}
        if collections:
            rows.append(
                (
                    f"{kind} garbage collections in the steady state (mean pause, ms)",
                    ", ".join(
                        f"{name} {c['count']}"
                        + (f" ({c['mean_pause_ms']:.1f})" if c["mean_pause_ms"] is not None else "")
                        for name, c in collections.items()
                    ),
                )
            )
    generator_gc = summary.get("load_generator_gc") or {}
    if generator_gc:
        full = generator_gc["gen2"]
        rows.append(
            (
                "load generator's own full collections in the steady state / longest, ms",
                f"{full['collections']} / {full['max_ms']:.0f}",
            )
        )
        young = [generator_gc[g] for g in ("gen0", "gen1") if g in generator_gc]
        rows.append(
            (
                "load generator's own young collections: count / total ms / of it on the CPU ms / longest ms",
                f"{sum(y['collections'] for y in young)} / {sum(y['total_ms'] for y in young):.0f} / "
                f"{sum(y.get('cpu_ms', 0.0) for y in young):.0f} / {max((y['max_ms'] for y in young), default=0):.0f}",
            )
        )
    return rows


def _machine_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """The whole machine beside the processes: CPU that other processes or the hypervisor (steal) took
    is latency the card room did not cause."""
    m = summary.get("machine")
    if not m:
        return []
    return [
        (
            f"machine ({m['cores']} cores): busy / these processes / other processes / steal, cores",
            f"{m['busy_cores_mean']:.2f} / {m['ours_cores_mean']:.2f} / {m['others_cores_mean']:.2f}"
            f" / {m['steal_cores_mean']:.2f}",
        )
    ]


def _lag_rows(summary: dict[str, Any]) -> list[tuple[str, str]]:
    """How late each process's event loop ran what fell due in the steady state: every call through it
    waits that long, so the act latency's tail is read off here process by process."""
    lags = dict((summary.get("server_side") or {}).get("loop_lag_ms") or {})
    own = summary.get("load_generator_loop_lag_ms") or {}
    if own.get("samples"):
        lags["load generator"] = own
    if not lags:
        return []
    return [
        (
            "event loop lag in the steady state, p50 / p99 ms",
            ", ".join(f"{name} {lag['p50_ms'] or 0:.1f} / {lag['p99_ms'] or 0:.1f}" for name, lag in lags.items()),
        )
    ]


def print_summary(summary: dict[str, Any], console: Console) -> None:
    if "burst" in summary:
        print_burst(summary, console)
        return
    st = summary["steady"]
    table = Table(
        title=f"cardroom loadtest: {summary['settings']['scenario']} — steady state {st['seconds']:.0f} s",
        show_header=True,
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    lat = st["act_latency_ms"]
    rows = [
        (
            "tables / players / load-generator processes",
            f"{summary['settings']['tables']} / {summary['settings']['players']} / "
            f"{summary['settings'].get('load_generators', 1)}",
        ),
        ("hands/s", f"{st['hands_per_s']:.2f}"),
        ("actions/s", f"{st['actions_per_s']:.1f}"),
        *(
            [
                (
                    "per table: hands an hour / actions a hand",
                    f"{tempo['hands_per_hour']:.0f} / {tempo['actions_per_hand']:.1f}",
                )
            ]
            if (tempo := st.get("table_tempo"))
            else []
        ),
        (
            "act latency p50 / p90 / p99 / max, ms",
            f"{lat['p50']:.1f} / {lat['p90']:.1f} / {lat['p99']:.1f} / {lat['max']:.1f}",
        ),
        *_ramp_rows(summary),
        (
            "errors (whole run)",
            f"{summary['run']['errors']}  "
            + ", ".join(f"{k} {v}" for k, v in summary["run"]["errors_by_status"].items()),
        ),
    ]
    if summary.get("baseline"):
        b, r = summary["baseline"], summary["ratio"]
        rows.append(
            (
                "bare gRPC unary calls/s / bidi round trips/s",
                f"{b['unary_calls_per_s']:.0f} / {b['bidi_round_trips_per_s']:.0f}",
            )
        )
        rows.append(("card room actions/s ÷ bare bidi / ÷ unary", f"{r['bidi']:.3f} / {r['unary']:.3f}"))
        if "fanout" in r:
            rows.append(
                (
                    "bare 6-seat tables: rounds/s (1 in, 6 out) / card room actions/s ÷ it",
                    f"{b['fanout_rounds_per_s']:.0f} / {r['fanout']:.3f}",
                )
            )
    for name, p in summary["processes"].items():
        rows.append((f"{name}: CPU cores / RSS MiB", f"{p['cpu_cores_mean']:.2f} / {p['rss_mib_mean']:.0f}"))
    rows.extend(_machine_rows(summary))
    rows.extend(_gc_rows(summary))
    rows.extend(_lag_rows(summary))
    costs = summary.get("costs", {})
    for name, c in costs.get("cpu_ms_per_hand", {}).items():
        rows.append((f"{name}: CPU ms per hand", f"{c:.1f}"))
    rows.extend(_invariant_rows(summary))
    bal = summary["balances"]
    rows.append(("players' chips after − before", f"{bal['drift']} over {bal['players']} players"))
    for k, v in rows:
        table.add_row(k, v)
    console.print(table)
    _print_slo(summary, console)
