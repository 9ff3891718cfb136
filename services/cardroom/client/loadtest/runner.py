"""One load-test run: the baseline, the tables, the players ramping in, the steady state (with the
scenario's storms and lobby pollers), the stand-up, the invariants from /metrics, the report."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from cardroom.client.bots import retrying, stakes_for
from cardroom.client.connection import GatewayClient, OperatorClient
from cardroom.client.loadtest import gcpause, profile, report
from cardroom.client.loadtest.baseline import Baseline, measure
from cardroom.client.loadtest.burst import Burst
from cardroom.client.loadtest.player import UNARY_IN_FLIGHT, HandCounter, Player
from cardroom.client.loadtest.progress import Progress
from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.serverside import server_side
from cardroom.client.loadtest.services import ProcessSampler, Target, backlogs, escrow_vs_stacks, invariants, scrape
from cardroom.client.loadtest.settings import LoadSettings, Scenario
from cardroom.client.loadtest.slo import Objective, check_all
from cardroom.client.stats import percentile
from cardroom.runtime import looplag
from cardroom.v1 import common_pb2, dealer_pb2 as d

#: How long the players get to stand up at the end before they are cut off.
STOP_SECONDS = 90.0


def lag_summary(lags: list[float]) -> dict[str, float]:
    """p50 / p99 / max of the loop's lateness (seconds in, ms out) and how many wakes were measured."""
    return {
        "p50_ms": round(1000 * percentile(lags, 50), 2),
        "p99_ms": round(1000 * percentile(lags, 99), 2),
        "max_ms": round(1000 * max(lags, default=0.0), 2),
        "samples": len(lags),
    }


@dataclass
class LoadRun:
    settings: LoadSettings
    targets: list[Target]
    objectives: list[Objective] = field(default_factory=list)
    recorder: Recorder = field(default_factory=Recorder)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    calls: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(UNARY_IN_FLIGHT))
    """The players' unary calls in flight, bounded (see :data:`~cardroom.client.loadtest.player.UNARY_IN_FLIGHT`)."""
    players: list[Player] = field(default_factory=list)
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

    def make_players(self, tables: list[d.TableInfo], counter: HandCounter) -> None:
        s = self.settings
        rng = random.Random(s.seed)
        for t, info in enumerate(tables):
            for k in range(s.players_per_table):
                self.players.append(
                    Player(
                        f"{s.prefix}{self.run_id}t{t + 1}p{k + 1}",
                        info,
                        s,
                        self.recorder,
                        counter,
                        self.stopping,
                        random.Random(rng.random()),
                        calls=self.calls,
                    )
                )

    # ------------------------------------------------------------------ during the run
    async def storms(self) -> None:
        """Reconnect: every ``storm_every`` s of the steady state, a share of the players drop at once."""
        s = self.settings
        rng = random.Random(s.seed)
        await asyncio.sleep(s.ramp + s.storm_every / 2)
        while not self.stopping.is_set():
            candidates = [p for p in self.players if p.seated and not p.drop.is_set()]
            for player in rng.sample(candidates, int(len(candidates) * s.storm_fraction)):
                player.drop.set()
            self.recorder.event("storm")
            await asyncio.sleep(s.storm_every)

    async def lobby_poller(self, i: int, rng: random.Random) -> None:
        s = self.settings
        await asyncio.sleep(rng.uniform(0, min(s.ramp, s.lobby_every) or 0.1))
        client = GatewayClient(s.gateway)
        try:
            await retrying(lambda: client.login(f"{s.prefix}{self.run_id}lobby{i + 1}"))
            while not self.stopping.is_set():
                started = time.perf_counter()
                try:
                    await client.lobby(s.game)
                    self.recorder.event("lobby", time.perf_counter() - started)
                except grpc.aio.AioRpcError as err:
                    self.recorder.error("lobby", err.code().name)
                await asyncio.sleep(rng.uniform(0.5, 1.5) * s.lobby_every)
        except grpc.aio.AioRpcError as err:
            self.recorder.error("lobby login", err.code().name)
        finally:
            await client.close()

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
        sampler = ProcessSampler(self.targets, time.monotonic())
        missing = sampler.attach()
        if missing:
            self.notes.append(f"no process found for {', '.join(missing)} (CPU/RSS not sampled)")
        rss_idle = {name: samples[-1].rss for name, samples in _sample_now(sampler).items()}
        print(f"creating {s.tables} tables ...", flush=True)
        tables = await self.create_tables()
        self.recorder = recorder = Recorder(tables=len(tables))
        sampler.started = recorder.started
        counter = HandCounter(recorder)
        self.make_players(tables, counter)
        for player in self.players:
            player.recorder = recorder
        n = len(self.players)
        tasks = [asyncio.create_task(p.run(s.ramp * i / n)) for i, p in enumerate(self.players)]
        side = [asyncio.create_task(self.lobby_poller(i, random.Random(i))) for i in range(s.effective_lobby_pollers())]
        if s.scenario is Scenario.RECONNECT:
            side.append(asyncio.create_task(self.storms()))
        progress = Progress(recorder, s, sampler)
        scraped_start: dict[str, dict[str, float]] = {}
        scraped_end: dict[str, dict[str, float]] = {}
        steady_cpu: dict[str, float] = {}
        recordings: list[profile.Recording] = []
        pauses = gcpause.Pauses().install()
        lags: list[float] = []  # the load generator's own loop: its lateness reads as the card room's latency
        lag_task = asyncio.create_task(looplag.observe_lag(looplag.PERIOD, lags.append))
        try:
            async with progress:
                next_tick = 0.0
                while recorder.steady_from is None or recorder.now() < recorder.steady_from + s.steady:
                    next_tick += s.progress_every
                    await asyncio.sleep(max(0.0, next_tick - recorder.now()))
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
                        gcpause.freeze()  # the ramp's objects: no full collection of them in the steady state
                        pauses.reset()
                        lags.clear()
                        scraped_start = await self.scrape_all()
                        steady_cpu = sampler.cpu_seconds()
                        recordings = await self.start_profiles()
                steady_cpu = {k: v - steady_cpu.get(k, 0.0) for k, v in sampler.cpu_seconds().items()}
                self.generator_gc = pauses.summary()
                self.generator_lag = lag_summary(lags)
                scraped_end = await self.scrape_all()
                rss_loaded = {name: samples[-1].rss for name, samples in sampler.samples.items() if samples}
                self.stopping.set()
                progress.note("standing up ...")
                _, pending = await asyncio.wait(tasks, timeout=STOP_SECONDS)
                for task in pending:
                    task.cancel()
                if pending:
                    self.notes.append(f"{len(pending)} players had not stood up after {STOP_SECONDS:.0f} s")
                for task in side:
                    task.cancel()
                await asyncio.gather(*tasks, *side, return_exceptions=True)
        finally:
            self.stopping.set()
            await looplag.stop(lag_task)
            pauses.remove()
            gcpause.unfreeze()
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
        )
        return summary

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
                        scraped[target.name] = await asyncio.to_thread(scrape, target.metrics_url)
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
    ) -> dict[str, Any]:
        s, rec = self.settings, self.recorder
        steady_from = rec.steady_from if rec.steady_from is not None else s.ramp
        steady = rec.window(steady_from, steady_from + s.steady).summary()
        ramp = rec.window(0, steady_from).summary()
        whole = rec.window(0).summary()
        players_with = [p for p in self.players if p.balance_before is not None and p.balance_after is not None]
        partial = sum((p.balance_after or 0) - (p.balance_before or 0) for p in players_with)
        # the drift says something only when every player stood up (a seated one still holds chips)
        drift = partial if players_with and len(players_with) == len(self.players) else None
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
                k: round((rss_loaded.get(k, v) - v) / 1024 / max(1, len(self.players)), 1)
                for k, v in rss_idle.items()
                if k in ("dealer", "gateway", "wallet", "loadtest")
            },
        }
        summary: dict[str, Any] = {
            "settings": {
                "scenario": s.scenario.value,
                "gateway": s.gateway,
                "tables": len(tables),
                "players_per_table": s.players_per_table,
                "players": len(self.players),
                "seats": s.seats,
                "game": s.game,
                "started_at": round(rec.started_at, 3),  # Unix time of second 0 (to read the services' logs by)
                "ramp_s": s.ramp,
                "steady_from_s": round(steady_from, 1),
                "steady_s": s.steady,
                "think_time": s.effective_think().describe(),
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
                "players": len(players_with),
                "missing": len(self.players) - len(players_with),
                "drift": drift,
                "drift_of_those_known": partial,
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
