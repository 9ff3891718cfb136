"""One load-test run: the baseline, the tables, the players ramping in, the steady state (with the
scenario's storms and lobby pollers), the stand-up, the invariants from /metrics, the report. The
players are played by one or more load generators (generators.py, crowd.py); this process coordinates."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardroom.client.bots import retrying, stakes_for
from cardroom.client.connection import OperatorClient
from cardroom.client.loadtest import profile, report
from cardroom.client.loadtest.baseline import Baseline, measure
from cardroom.client.loadtest.burst import Burst
from cardroom.client.loadtest.crowd import Balances, gc_total, lag_summary, shares
from cardroom.client.loadtest.generators import Generator, start as start_generators
from cardroom.client.loadtest.progress import Progress
from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.serverside import server_side
from cardroom.client.loadtest.services import (
    ProcessSampler,
    Target,
    backlogs,
    escrow_vs_stacks,
    invariants,
    is_load_generator,
    scrape,
)
from cardroom.client.loadtest.settings import BOTS_MIX, LoadSettings, Scenario
from cardroom.client.loadtest.slo import Objective, check_all
from cardroom.v1 import common_pb2, dealer_pb2 as d


@dataclass
class LoadRun:
    settings: LoadSettings
    targets: list[Target]
    objectives: list[Objective] = field(default_factory=list)
    recorder: Recorder = field(default_factory=Recorder)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    notes: list[str] = field(default_factory=list)
    generator_gc: dict[str, Any] = field(default_factory=dict)  # the load generator's own collections, steady state
    generator_lag: dict[str, Any] = field(default_factory=dict)  # how late its own event loop ran, steady state

    # ------------------------------------------------------------------ set-up
    async def create_tables(self) -> list[d.TableInfo]:
        s = self.settings
        operator = OperatorClient(s.gateway, s.operator_token, timeout=30)
        limit = asyncio.Semaphore(s.setup_concurrency)

        async def one(i: int) -> d.TableInfo:
            config = d.TableConfig(
                name=f"loadtest {self.run_id} #{i + 1}",
                variant=s.game,
                currency=common_pb2.CURRENCY_PLAY,
                seats=s.seats,
                stakes=stakes_for(s.game),
                hand_pause_seconds=s.hand_pause,
                unlisted=True,  # not in everyone's lobby (issue 13): the run's own tables
                owner=s.prefix,
            )
            async with limit:
                info = await retrying(lambda: operator.create_table(f"{s.prefix}-{self.run_id}-{i + 1}", config))
            self.recorder.tables += 1
            return info

        try:
            return list(await asyncio.gather(*(one(i) for i in range(s.tables))))
        finally:
            await operator.close()

    # ------------------------------------------------------------------ the run
    async def run(self) -> dict[str, Any]:
        s = self.settings
        s.out_dir.mkdir(parents=True, exist_ok=True)
        if s.scenario is Scenario.TOURNAMENT:
            return await self.run_burst()
        baseline: Baseline | None = None
        if s.baseline_seconds > 0:
            print(
                f"baseline: bare grpc.aio, {s.baseline_seconds:g} s each of unary, bidi and bare 6-seat tables ...",
                flush=True,
            )
            baseline = await measure(s.baseline_seconds)
        generators = start_generators(s, self.run_id, shares(s.tables, s.effective_lobby_pollers(), s.generators))
        try:
            await asyncio.gather(*(g.ready() for g in generators))
            return await self._run(baseline, generators)
        finally:
            await asyncio.gather(*(g.close() for g in generators), return_exceptions=True)

    async def _run(self, baseline: Baseline | None, generators: list[Generator]) -> dict[str, Any]:
        s = self.settings
        sampler = ProcessSampler(self.targets + [t for g in generators for t in g.targets()], time.monotonic())
        missing = sampler.attach()
        if missing:
            self.notes.append(f"no process found for {', '.join(missing)} (CPU/RSS not sampled)")
        rss_idle = {name: samples[-1].rss for name, samples in _sample_now(sampler).items()}
        print(f"creating {s.tables} tables ...", flush=True)
        tables = await self.create_tables()
        self.recorder = recorder = Recorder(tables=len(tables))
        sampler.started = recorder.started
        for g in generators:
            await g.play({t: tables[t] for t in g.share.tables}, recorder)
        n = s.players
        progress = Progress(recorder, s, sampler)
        scraped_start: dict[str, dict[str, float]] = {}
        scraped_end: dict[str, dict[str, float]] = {}
        steady_cpu: dict[str, float] = {}
        recordings: list[profile.Recording] = []
        async with progress:
            next_tick = 0.0
            while recorder.steady_from is None or recorder.now() < recorder.steady_from + s.steady:
                next_tick += s.progress_every
                await asyncio.sleep(max(0.0, next_tick - recorder.now()))
                self.poll(generators)
                sampler.sample()
                recorder.tick()
                progress.update()
                if recorder.steady_from is None and s.steady_begins(recorder.now(), recorder.arrived):
                    recorder.steady_from = recorder.now()
                    if recorder.arrived < n:
                        self.notes.append(
                            f"{n - recorder.arrived} players were still sitting down {recorder.steady_from:.0f} s"
                            " into the run: the steady state began without them"
                        )
                    for g in generators:
                        g.steady()
                    scraped_start = await self.scrape_all()
                    steady_cpu = sampler.cpu_seconds()
                    recordings = await self.start_profiles()
            steady_cpu = {k: v - steady_cpu.get(k, 0.0) for k, v in sampler.cpu_seconds().items()}
            scraped_end = await self.scrape_all()
            rss_loaded = {name: samples[-1].rss for name, samples in sampler.samples.items() if samples}
            progress.note("standing up ...")
            finishes = await asyncio.gather(*(g.finish(recorder) for g in generators))
            self.poll(generators)
        for finish in finishes:
            self.notes.extend(finish.notes)
        self.generator_gc = gc_total([f.gc for f in finishes if f.gc])
        self.generator_lag = lag_summary([lag for f in finishes for lag in f.lags])
        balances = Balances.total([f.balances for f in finishes])
        profiles = {}
        for recording in recordings:
            raw = await recording.wait()
            if raw is None:
                self.notes.append(f"py-spy could not record {recording.name} (ptrace allowed?)")
            else:
                profiles[recording.name] = {"raw": str(raw), **profile.summarize(raw, cpu=await recording.cpu())}
        await self.settle()
        scraped_final, escrow = await self.escrow_settled()
        summary = self.summarize(
            baseline,
            sampler,
            tables,
            scraped_start,
            scraped_end,
            scraped_final,
            steady_cpu,
            rss_idle,
            rss_loaded,
            profiles,
            escrow,
            balances,
        )
        return summary

    def poll(self, generators: list[Generator]) -> None:
        """What the generators' players saw since the last tick, in the run's recorder; their gauges summed."""
        gauges = [g.poll(self.recorder) for g in generators]
        seated, connected, arrived = (sum(x) for x in zip(*gauges, strict=True))
        self.recorder.seated, self.recorder.connected, self.recorder.arrived = seated, connected, arrived
        heard = [until for g in generators if (until := g.heard_until()) is not None]
        self.recorder.heard_until = min(heard) if heard else None

    async def run_burst(self) -> dict[str, Any]:
        """The tournament registration burst (burst.py): no tables; the services' CPU and RSS sampled
        through it, the chip invariants read at the end."""
        s = self.settings
        sampler = ProcessSampler(self.targets, time.monotonic())
        missing = sampler.attach()
        if missing:
            self.notes.append(f"no process found for {', '.join(missing)} (CPU/RSS not sampled)")
        burst = Burst(
            gateway=s.gateway,
            operator_token=s.operator_token,
            tournament_addr=s.tournament_addr,
            tournament_id=f"{s.prefix}-{self.run_id}-burst",
            prefix=f"{s.prefix}{self.run_id}",
            entrants=s.entrants,
            buy_in=s.buy_in,
            fee=s.fee,
            retry_share=s.retry_share,
            tls_dir=s.tls_dir,
            tournament_token=s.tournament_token,
            setup_concurrency=s.setup_concurrency,
            seed=s.seed,
            notes=self.notes,
        )
        print(f"tournament burst: {s.entrants} players, buy-in {s.buy_in} + {s.fee} ...", flush=True)
        task = asyncio.create_task(burst.run())
        while not task.done():  # CPU and RSS once a second while it runs
            sampler.sample()
            await asyncio.wait({task}, timeout=s.progress_every)
        section = task.result()
        sampler.sample()
        scraped, escrow = await self.escrow_settled()
        register = section["register"]
        errors = {
            f"{status} ({kind})": n
            for kind in ("register", "retries", "unregister")
            for status, n in section[kind]["errors_by_status"].items()
        }
        summary: dict[str, Any] = {
            "settings": {
                "scenario": s.scenario.value,
                "gateway": s.gateway,
                "tournament_service": s.tournament_addr,
                "entrants": s.entrants,
                "buy_in": s.buy_in,
                "fee": s.fee,
                "retry_share": s.retry_share,
                "run_id": self.run_id,
                "seed": s.seed,
            },
            "burst": section,
            "run": {"errors": sum(errors.values()), "errors_by_status": errors},
            "processes": sampler.window(0.0, float("inf")),
            "machine": sampler.machine_window(0.0, float("inf")),
            "invariants": invariants(scraped),
            "escrow_vs_stacks": escrow,
            "notes": self.notes,
            "first_errors": section["examples"],
        }
        lat = register["latency_ms"]
        summary["headline"] = (
            f"tournament burst: {s.entrants} players registered at once in {section['register_wall_s']:.2f} s "
            f"({section['registrations_per_s']} /s), register latency p50 {lat['p50']:.1f} ms / "
            f"p99 {lat['p99']:.1f} ms, "
            f"{summary['run']['errors']} errors, checks {'OK' if not section['failed_checks'] else 'FAILED'}"
        )
        summary["slo"] = check_all(self.objectives, summary)
        out = s.out_dir
        return self._write_report(summary, out, lambda: report.plot_burst(summary, burst, sampler, out))

    async def start_profiles(self) -> list[profile.Recording]:
        """py-spy on the profiled services for the steady state (less a second)."""
        s, out = self.settings, list[profile.Recording]()
        if s.profile_seconds <= 0:
            return out
        if profile.py_spy() is None:
            self.notes.append("--profile: py-spy is not installed")
            return out
        for target in self.targets:
            if target.name in s.profile and target.pid is not None:
                seconds = min(s.profile_seconds, max(1.0, s.steady - 1))
                recording = await profile.record(target.name, target.pid, seconds, s.out_dir, native=s.profile_native)
                if recording is not None:
                    out.append(recording)
        return out

    async def scrape_all(self) -> dict[str, dict[str, float]]:
        out = {}
        for target in self.targets:
            if target.metrics_url:
                try:
                    out[target.name] = await asyncio.to_thread(scrape, target.metrics_url)
                except OSError as err:
                    self.notes.append(f"{target.name}: /metrics not read ({err})")
        return out

    async def settle(self, timeout: float = 15.0) -> None:
        """Wait until the Kafka backlogs are out: the wallet has relayed its outbox (the hands'
        settlements are in) and the dealers' table events are acknowledged."""
        deadline = time.monotonic() + timeout
        await asyncio.sleep(1.0)
        while time.monotonic() < deadline:
            scraped = {}
            for target in self.targets:
                if target.metrics_url:
                    with contextlib.suppress(OSError):  # the final scrape notes what cannot be read
                        scraped[target.name] = await asyncio.to_thread(scrape, target.metrics_url, tries=1)
            if not any(backlogs(scraped).values()):  # 0 or not read
                return
            await asyncio.sleep(0.5)

    async def escrow_settled(self) -> tuple[dict[str, dict[str, float]], dict[str, Any]]:
        """The final scrape and the wallet's table escrows against the dealer's chips at its cash tables:
        read again (once a second, up to ``escrow_settle`` s) while they differ, since rake and cash-outs
        in flight make them differ until the wallet has applied them (both gauges refresh every second)."""
        deadline = time.monotonic() + self.settings.escrow_settle
        reads = 0
        while True:
            scraped = await self.scrape_all()
            escrow = escrow_vs_stacks(scraped)
            reads += 1
            if escrow["difference"] == 0 or escrow["missing"] or time.monotonic() >= deadline:
                return scraped, {**escrow, "reads": reads}
            await asyncio.sleep(1.0)

    # ------------------------------------------------------------------ the summary
    def summarize(
        self,
        baseline: Baseline | None,
        sampler: ProcessSampler,
        tables: list[d.TableInfo],
        scraped_start: dict[str, dict[str, float]],
        scraped_end: dict[str, dict[str, float]],
        scraped_final: dict[str, dict[str, float]],
        steady_cpu: dict[str, float],
        rss_idle: dict[str, int],
        rss_loaded: dict[str, int],
        profiles: dict[str, Any],
        escrow: dict[str, Any],
        balances: Balances,
    ) -> dict[str, Any]:
        s, rec = self.settings, self.recorder
        steady_from = rec.steady_from if rec.steady_from is not None else s.ramp
        steady = rec.window(steady_from, steady_from + s.steady).summary()
        steady["table_tempo"] = table_tempo(steady, len(tables))
        ramp = rec.window(0, steady_from).summary()
        whole = rec.window(0).summary()
        # the drift says something only when every player stood up (a seated one still holds chips)
        drift = balances.drift_of_those_known if balances.known and balances.known == s.players else None
        hands = steady["hands"] or 0
        costs: dict[str, Any] = {
            "cpu_ms_per_hand": {k: round(v * 1000 / hands, 2) for k, v in steady_cpu.items()} if hands else {},
            "cpu_ms_per_action": (
                {k: round(v * 1000 / steady["actions"], 3) for k, v in steady_cpu.items()} if steady["actions"] else {}
            ),
            "rss_kib_per_table": {
                k: round((rss_loaded.get(k, v) - v) / 1024 / max(1, len(tables)), 1)
                for k, v in rss_idle.items()
                if k in ("dealer", "gateway", "wallet")
            },
            "rss_kib_per_player": {
                k: round((rss_loaded.get(k, v) - v) / 1024 / max(1, s.players), 1)
                for k, v in rss_idle.items()
                if k in ("dealer", "gateway", "wallet")
            }
            | {  # every load-generator process together
                "loadtest": round(
                    sum(rss_loaded.get(k, v) - v for k, v in rss_idle.items() if is_load_generator(k))
                    / 1024
                    / max(1, s.players),
                    1,
                )
            },
        }
        summary: dict[str, Any] = {
            "settings": {
                "scenario": s.scenario.value,
                "gateway": s.gateway,
                "tables": len(tables),
                "players_per_table": s.players_per_table,
                "players": s.players,
                "load_generators": s.generators,
                "seats": s.seats,
                "game": s.game,
                "started_at": round(rec.started_at, 3),  # Unix time of second 0 (to read the services' logs by)
                "ramp_s": s.ramp,
                "steady_from_s": round(steady_from, 1),
                "steady_s": s.steady,
                "think_time": s.effective_think().describe(),
                "folding": folding.describe() if (folding := s.effective_folding()) else BOTS_MIX,
                "hand_pause_s": s.hand_pause,
                "lobby_pollers": s.effective_lobby_pollers(),
                **(
                    {"churn_mean_hands": s.churn_hands, "churn_away_s": s.churn_away}
                    if s.scenario is Scenario.CHURN
                    else {}
                ),
                **(
                    {"storm_every_s": s.storm_every, "storm_fraction": s.storm_fraction, "storm_away_s": s.storm_away}
                    if s.scenario is Scenario.RECONNECT
                    else {}
                ),
                "run_id": self.run_id,
                "seed": s.seed,
            },
            "steady": steady,
            "ramp": ramp,
            "run": whole,
            "baseline": baseline.summary() if baseline else None,
            "ratio": (
                {
                    "bidi": round(steady["actions_per_s"] / baseline.stream_per_s, 4),
                    "unary": round(steady["actions_per_s"] / baseline.unary_per_s, 4),
                    **(
                        {"fanout": round(steady["actions_per_s"] / baseline.fanout_per_s, 4)}
                        if baseline.fanout_per_s
                        else {}
                    ),
                }
                if baseline
                else None
            ),
            "processes": sampler.window(steady_from, steady_from + s.steady),
            "machine": sampler.machine_window(steady_from, steady_from + s.steady),
            "load_generator_gc": self.generator_gc,
            "load_generator_loop_lag_ms": self.generator_lag,
            "costs": costs,
            "server_side": server_side(scraped_start, scraped_end),
            "invariants": invariants(scraped_final),
            "escrow_vs_stacks": {
                **escrow,
                "note": "wallet_table_escrow_cents - dealer_table_chips per currency (the wallet's table escrows "
                "against the stacks and pots at the dealer's cash tables); difference = the sum of |...|, must be 0 "
                "once every hand is settled (None: a gauge is missing)",
            },
            "balances": {
                "players": balances.known,
                "missing": s.players - balances.known,
                "drift": drift,
                "drift_of_those_known": balances.drift_of_those_known,
                "note": "play-money tables take no rake: the drift must be 0 (None: not every player "
                "stood up or answered, so it cannot be checked)",
            },
            "profiles": profiles or None,
            "notes": self.notes,
            "first_errors": rec.examples,
        }
        summary["headline"] = headline(summary)
        summary["slo"] = check_all(self.objectives, summary)
        out = s.out_dir
        return self._write_report(summary, out, lambda: report.plot(summary, rec, sampler, out))

    def _write_report(self, summary: dict[str, Any], out: Path, plot: Callable[[], list[Path]]) -> dict[str, Any]:
        """The report's JSON and HTML in ``out``, with the plots ``plot`` draws (none without matplotlib)."""
        summary["files"] = {"json": str(out / "report.json"), "html": str(out / "report.html")}
        try:
            plots = plot()
        except ImportError as err:  # matplotlib missing: the report without pictures
            self.notes.append(f"no plots: {err}")
            plots = []
        summary["files"]["plots"] = [str(p) for p in plots]
        report.write_json(summary, out)
        report.write_html(summary, plots, out)
        return summary


def _sample_now(sampler: ProcessSampler) -> dict[str, list[Any]]:
    sampler.sample()
    return sampler.samples


def table_tempo(steady: dict[str, Any], tables: int) -> dict[str, float]:
    """How fast one table played in the steady state: hands an hour, actions a hand (a real online
    6-max table plays about 70–90 hands an hour: docs/capacity.md, "A real table's tempo")."""
    hands, actions = steady["hands"] or 0, steady["actions"] or 0
    seconds = steady["seconds"] or 0
    return {
        "hands_per_hour": round(hands * 3600 / seconds / tables, 1) if seconds and tables else 0.0,
        "actions_per_hand": round(actions / hands, 2) if hands else 0.0,
    }


def headline(summary: dict[str, Any]) -> str:
    st, se = summary["steady"], summary["settings"]
    text = (
        f"{se['tables']} tables x {se['players_per_table']} players ({se['scenario']}, think time "
        f"{se['think_time']}): {st['hands_per_s']:.2f} hands/s, {st['actions_per_s']:.1f} actions/s, act latency "
        f"p50 {st['act_latency_ms']['p50']:.1f} ms / p99 {st['act_latency_ms']['p99']:.1f} ms, "
        f"{summary['run']['errors']} errors"
    )
    if summary.get("ratio"):
        text += (
            f"; bare gRPC bidi {summary['baseline']['bidi_round_trips_per_s']:.0f} round trips/s "
            f"-> ratio {summary['ratio']['bidi']:.3f}"
        )
        if "fanout" in summary["ratio"]:
            text += (
                f"; bare 6-seat tables {summary['baseline']['fanout_rounds_per_s']:.0f} rounds/s "
                f"-> ratio {summary['ratio']['fanout']:.3f}"
            )
    return text


def run_load(settings: LoadSettings, targets: list[Target], objectives: list[Objective]) -> dict[str, Any]:
    return asyncio.run(LoadRun(settings, targets, objectives).run())
