"""The services under test, seen from outside: their /metrics (the chip invariants at the end) and
their processes (CPU and RSS sampled once a second), found by the ports they listen on."""

from __future__ import annotations

import contextlib
import re
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import psutil
from prometheus_client.parser import text_string_to_metric_families

from cardroom.runtime.config import replica_label, replica_ports

#: The services whose /metrics the load test reads, in the order of the report.
SERVICES = ("gateway", "dealer", "wallet", "connection_monitor", "evaluator")
#: The load test's own process among the sampled ones; its generator processes are ``loadtest-gen1``, …
LOAD_GENERATOR = "loadtest"


def is_load_generator(name: str) -> bool:
    """Whether a sampled process is the load test's own (the coordinator or a generator), not the card room's."""
    return name == LOAD_GENERATOR or name.startswith(f"{LOAD_GENERATOR}-")


@dataclass
class Target:
    name: str
    metrics_url: str = ""
    port: int = 0  # a port the process listens on (its metrics or gRPC port), to find its pid
    pid: int | None = None

    def find_pid(self) -> int | None:
        if self.pid is None and self.port:
            self.pid = pid_listening_on(self.port)
        return self.pid


def default_targets(
    host: str = "127.0.0.1", metrics_offset: int = 0, kafka_port: int = 0, dealers: int = 1
) -> list[Target]:
    """Where ``make run`` (scripts/run.py) puts the services: the default ports plus an offset, and
    ``dealers`` dealer replicas (``dealer``, ``dealer-2``, … : :func:`cardroom.runtime.config.replica_ports`)."""
    targets = []
    for name in SERVICES:
        for replica in range(1, (dealers if name == "dealer" else 1) + 1):
            port = replica_ports(name, replica)[1] + metrics_offset
            targets.append(Target(replica_label(name, replica), f"http://{host}:{port}/metrics", port))
    if kafka_port:
        targets.append(Target("kafka", "", kafka_port))
    return targets


def target_from(text: str) -> Target:
    """``NAME=URL`` (a /metrics URL: the process is found by its port) or ``NAME=pid:PID``."""
    name, _, value = text.partition("=")
    if not name or not value:
        raise ValueError(f"expected NAME=URL or NAME=pid:PID, got {text!r}")
    if value.startswith("pid:"):
        return Target(name, pid=int(value[4:]))
    return Target(name, value, urlparse(value).port or 0)


def pid_listening_on(port: int) -> int | None:
    with contextlib.suppress(psutil.Error, OSError):
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                return conn.pid
    return None


@dataclass
class ProcessSample:
    at: float  # seconds since the start of the run
    cpu: float  # cores (1.0 = one core busy)
    rss: int  # bytes


@dataclass
class MachineSample:
    """The whole machine over one sampling interval, in cores (1.0 = one core the whole interval)."""

    at: float
    busy: float  # every process's CPU, the kernel's, and the steal below
    steal: float  # time the hypervisor ran another guest while this one wanted the CPU
    ours: float  # the sampled processes' CPU (the services, Kafka, the load generator)

    @property
    def others(self) -> float:
        """What neither these processes nor the hypervisor took: other processes on the machine."""
        return max(0.0, self.busy - self.steal - self.ours)


def machine_times() -> Any:
    return psutil.cpu_times()


@dataclass
class ProcessSampler:
    """CPU (cores) and RSS per target process, and the whole machine's CPU beside them (what other
    processes and the hypervisor took: a run's latency can come from there), one sample per call of
    ``sample``."""

    targets: list[Target]
    started: float
    samples: dict[str, list[ProcessSample]] = field(default_factory=dict)
    machine: list[MachineSample] = field(default_factory=list)
    _procs: dict[str, psutil.Process] = field(default_factory=dict)
    _cpu_start: dict[str, float] = field(default_factory=dict)
    _times: Any = None

    def attach(self) -> list[str]:
        """Find the processes; the names not found are returned (reported, not fatal)."""
        missing = []
        for target in self.targets:
            pid = target.find_pid()
            if pid is None:
                missing.append(target.name)
                continue
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                proc.cpu_percent(None)
                self._procs[target.name] = proc
                self._cpu_start[target.name] = sum(proc.cpu_times()[:2])
        self._procs.setdefault(LOAD_GENERATOR, psutil.Process())
        self._procs[LOAD_GENERATOR].cpu_percent(None)
        self._cpu_start.setdefault(LOAD_GENERATOR, sum(self._procs[LOAD_GENERATOR].cpu_times()[:2]))
        self._times = machine_times()
        return missing

    def sample(self) -> None:
        at = time.monotonic() - self.started
        ours = 0.0
        for name, proc in self._procs.items():
            with contextlib.suppress(psutil.Error):
                cpu = proc.cpu_percent(None) / 100
                self.samples.setdefault(name, []).append(ProcessSample(at, cpu, proc.memory_info().rss))
                ours += cpu
        self._sample_machine(at, ours)

    def _sample_machine(self, at: float, ours: float) -> None:
        """The machine's CPU since the last sample (Linux's /proc/stat through psutil; ``guest`` time is
        already in ``user``)."""
        now = machine_times()
        last, self._times = self._times, now
        if last is None:
            return
        spent = {f: getattr(now, f) - getattr(last, f) for f in now._fields if f not in ("guest", "guest_nice")}
        total = sum(spent.values())
        if total <= 0:
            return
        cores = psutil.cpu_count() or 1
        idle = spent.get("idle", 0.0) + spent.get("iowait", 0.0)
        self.machine.append(
            MachineSample(at, cores * (total - idle) / total, cores * spent.get("steal", 0.0) / total, ours)
        )

    def machine_window(self, start: float, end: float) -> dict[str, float] | None:
        """Mean cores over [start, end): the machine busy, the sampled processes, other processes, steal."""
        inside = [m for m in self.machine if start <= m.at < end]
        if not inside:
            return None

        def mean(values: list[float]) -> float:
            return round(sum(values) / len(values), 3)

        return {
            "cores": psutil.cpu_count() or 1,
            "busy_cores_mean": mean([m.busy for m in inside]),
            "ours_cores_mean": mean([m.ours for m in inside]),
            "others_cores_mean": mean([m.others for m in inside]),
            "steal_cores_mean": mean([m.steal for m in inside]),
        }

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds (user + system) each process used since ``attach``."""
        used = {}
        for name, proc in self._procs.items():
            with contextlib.suppress(psutil.Error):
                used[name] = sum(proc.cpu_times()[:2]) - self._cpu_start[name]
        return used

    def window(self, start: float, end: float) -> dict[str, dict[str, float]]:
        """Mean CPU (cores), mean and peak RSS (MiB) per process over [start, end)."""
        out = {}
        for name, samples in self.samples.items():
            inside = [s for s in samples if start <= s.at < end] or samples[-1:]
            if not inside:
                continue
            out[name] = {
                "cpu_cores_mean": round(sum(s.cpu for s in inside) / len(inside), 3),
                "rss_mib_mean": round(sum(s.rss for s in inside) / len(inside) / 2**20, 1),
                "rss_mib_peak": round(max(s.rss for s in inside) / 2**20, 1),
            }
        return out


#: How many times a /metrics page is asked for before the report notes it as not read: a service busy
#: under the load (or the machine under a test suite's) may miss one read; the report's server-side
#: figures and invariants would go missing with it.
SCRAPE_TRIES = 3
SCRAPE_RETRY_SECONDS = 0.5


def scrape(
    url: str, timeout: float = 5.0, tries: int = SCRAPE_TRIES, retry_seconds: float = SCRAPE_RETRY_SECONDS
) -> dict[str, float]:
    """One /metrics page as ``{'name{label="v",...}': value}`` (histogram buckets included), asked for
    up to ``tries`` times; the last failure (an ``OSError``) is raised."""
    for attempt in range(1, tries + 1):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as reply:
                text = reply.read().decode()
            break
        except OSError:
            if attempt >= tries:
                raise
            time.sleep(retry_seconds)
    values = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return values


def merged(scraped: dict[str, dict[str, float]], service: str) -> dict[str, float] | None:
    """``service``'s samples summed over its replicas (``dealer``, ``dealer-2``, …; the gauges the load
    test reads are per replica: each dealer counts its own tables); None when none was scraped."""
    found = [values for name, values in scraped.items() if name == service or name.startswith(service + "-")]
    if not found:
        return None
    out: dict[str, float] = {}
    for values in found:
        for key, value in values.items():
            out[key] = out.get(key, 0.0) + value
    return out


def pick(values: dict[str, float], name: str) -> dict[str, float]:
    """The samples of one metric name (every label set)."""
    return {k: v for k, v in values.items() if k == name or k.startswith(name + "{")}


#: The chip invariants the services export (must read 0).
INVARIANTS = {"dealer": ("dealer_escrow_imbalance",), "wallet": ("wallet_ledger_imbalance",)}
#: The Kafka backlogs (records not yet acknowledged by the broker): 0 once a run has settled.
BACKLOGS = {"dealer": ("dealer_kafka_publish_pending",), "wallet": ("wallet_outbox_pending",)}


def backlogs(scraped: dict[str, dict[str, float]]) -> dict[str, float | None]:
    """Each backlog summed over the service's replicas (None: not scraped)."""
    out: dict[str, float | None] = {}
    for service, names in BACKLOGS.items():
        values = merged(scraped, service)
        for name in names:
            samples = pick(values, name) if values is not None else {}
            out[f"{service}: {name}"] = sum(samples.values()) if samples else None
    return out


def invariants(scraped: dict[str, dict[str, float]]) -> dict[str, object]:
    """The invariants read from the services' metrics at the end: each value, and whether all are 0."""
    found: dict[str, float] = {}
    missing = []
    for service, names in INVARIANTS.items():
        values = merged(scraped, service)
        for name in names:
            samples = pick(values, name) if values is not None else {}
            if not samples:
                missing.append(f"{service}: {name}")
            found.update({f"{service}: {k}": v for k, v in samples.items()})
    return {
        "values": found,
        "zero": bool(found) and all(v == 0 for v in found.values()) and not missing,
        "missing": missing,
        "backlogs": backlogs(scraped),
    }


#: The cross-service check: what the wallet's table escrows hold against the chips at the dealer's cash
#: tables, per currency (service, metric).
ESCROW = ("wallet", "wallet_table_escrow_cents")
STACKS = ("dealer", "dealer_table_chips")
_CURRENCY = re.compile(r'currency="([^"]*)"')


def _by_currency(values: dict[str, float] | None, name: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in pick(values or {}, name).items():
        match = _CURRENCY.search(key)
        currency = match.group(1) if match else ""
        out[currency] = out.get(currency, 0.0) + value
    return out


def escrow_vs_stacks(scraped: dict[str, dict[str, float]]) -> dict[str, Any]:
    """The wallet's table escrows minus the dealer's chips at its cash tables (stacks + pots), per
    currency, and ``difference``: the sum of their absolute values, 0 once every hand is settled and the
    wallet has applied it (rake and cash-outs in flight make it differ meanwhile); None when a gauge
    is missing."""
    escrow = _by_currency(merged(scraped, ESCROW[0]), ESCROW[1])
    chips = _by_currency(merged(scraped, STACKS[0]), STACKS[1])  # every dealer replica's tables
    missing = [f"{service}: {name}" for (service, name), found in ((ESCROW, escrow), (STACKS, chips)) if not found]
    by_currency = {
        currency: {
            "wallet_escrow": escrow.get(currency, 0.0),
            "dealer_chips": chips.get(currency, 0.0),
            "difference": escrow.get(currency, 0.0) - chips.get(currency, 0.0),
        }
        for currency in sorted(set(escrow) | set(chips))
    }
    difference = None if missing else sum(abs(c["difference"]) for c in by_currency.values())
    return {"difference": difference, "by_currency": by_currency, "missing": missing}
