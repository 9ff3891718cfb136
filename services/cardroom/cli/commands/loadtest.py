"""``cardroom loadtest``: a load-test scenario through the gateway, a report, SLO checks."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from cardroom.cli.commands.bots import OPERATOR_ENV, OPERATOR_FILE, operator_token
from cardroom.cli.stopping import signals_held, terminate_as_interrupt

if TYPE_CHECKING:
    from rich.console import Console

    from cardroom.client.loadtest.services import Target
    from cardroom.client.loadtest.settings import LoadSettings
    from cardroom.client.loadtest.slo import Objective

#: --start-stack's default --port-offset: the stack's gRPC ports (20051-21053 by default, as `make run`'s) at
#: 30051-31053, where the load tests have run since their stack moved off Linux's ephemeral range
#: (32768-60999): an outgoing connection of the stack itself once took the connection monitor's port there
#: (docs/capacity.md, "The load test's own stack moved off the ephemeral ports").
STACK_PORT_OFFSET = 10_000

SCENARIOS = {
    "cash": "6-max NL Hold'em cash tables, players think (log-normal think time, see --think-*)",
    "max": "the same tables with no think time: the card room's throughput",
    "churn": "cash, and every player leaves after a few hands (geometric, mean --churn-hands) and sits down again",
    "reconnect": "cash, and every --storm-every s a share of the players drop their Play streams at once and come "
    "back after --storm-away s (past the connection monitor's silence: its disconnect rules apply)",
    "lobby": "cash, and lobby pollers (default one per 6 players, every --lobby-every s)",
    "tournament-burst": "one large scheduled tournament (made on the tournament service, see --tournament), "
    "--entrants funded players register at once through the gateway, --retry-share of them send their request id "
    "again; register latency and refusals by status; entrants == N, prize pool == N x buy-in, each player charged "
    "once; then all unregister (measured too) and the tournament is empty again",
}

EPILOG = """scenarios:
{scenarios}

The bots go through the gateway only (tables and play money via the GatewayOperator API, the operator token).
The summary (hands/s, actions/s, act latency) covers the steady state, which begins once the ramp's time is over
and every player has sat down (at most max(10 s, ramp) later); the ramp has its own row. Act latency is measured at
the player, from sending an action to its result. The report goes to --out: report.json, report.html and its PNG
plots. Exit status: 0, 1 when an --slo is missed, 2 on bad arguments, 3 when the run failed.

SLO names: {slos}.
""".strip()


def register(subparsers: argparse._SubParsersAction) -> None:
    from cardroom.client.loadtest.settings import Folding, ThinkTime  # light: dataclasses only
    from cardroom.client.loadtest.slo import OBJECTIVES

    parser = subparsers.add_parser(
        "loadtest",
        help="load-test scenarios through the gateway: live progress, report (JSON, HTML), SLO flags",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a load-test scenario against a card room's gateway (or a `make run` stack it starts), "
        "with a bare-gRPC baseline in the same run, and write a report.",
        epilog=EPILOG.format(
            scenarios="\n".join(f"  {k:11} {v}" for k, v in SCENARIOS.items()), slos=", ".join(OBJECTIVES)
        ),
    )
    parser.add_argument("--scenario", choices=tuple(SCENARIOS), default="cash", help="default cash")
    parser.add_argument("--tables", type=int, default=10, help="tables (default 10)")
    parser.add_argument("--players-per-table", type=int, default=6, metavar="K", help="players per table (default 6)")
    parser.add_argument("--seats", type=int, default=6, help="seats per table (default 6: 6-max)")
    parser.add_argument("--game", default="NT", metavar="CODE", help="variant code (default NT)")
    parser.add_argument(
        "--ramp", type=float, default=10.0, metavar="S", help="seconds to seat every player (default 10)"
    )
    parser.add_argument(
        "--steady",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds of steady state, from when every player sat down (default 30)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=None,
        metavar="S",
        help="ramp + steady state, s (instead of --steady; longer when sitting down lags the ramp)",
    )
    think = ThinkTime()
    parser.add_argument(
        "--think-median-ms",
        type=float,
        default=think.median_ms,
        help=f"think time median (default {think.median_ms:g})",
    )
    parser.add_argument(
        "--think-p90-ms", type=float, default=think.p90_ms, help=f"think time p90 (default {think.p90_ms:g})"
    )
    parser.add_argument(
        "--think-max-ms", type=float, default=think.max_ms, help=f"think time cap (default {think.max_ms:g})"
    )
    parser.add_argument(
        "--fold-preflop",
        type=float,
        default=Folding.preflop,
        metavar="P",
        help=f"share of the times a player folds facing a bet before the flop (default {Folding.preflop:g}; "
        "not in the max scenario, whose players hardly fold)",
    )
    parser.add_argument(
        "--fold-later",
        type=float,
        default=Folding.later,
        metavar="P",
        help=f"the same after the flop (default {Folding.later:g})",
    )
    parser.add_argument("--hand-pause", type=float, default=1.0, help="the tables' pause between hands, s (default 1)")
    parser.add_argument(
        "--stop-spread", type=float, default=5.0, help="seconds over which the players stand up at the end (default 5)"
    )
    parser.add_argument("--churn-hands", type=float, default=5.0, help="churn: mean hands before leaving (default 5)")
    parser.add_argument("--churn-away", type=float, default=2.0, help="churn: seconds away (default 2)")
    parser.add_argument(
        "--storm-every", type=float, default=20.0, help="reconnect: seconds between storms (default 20)"
    )
    parser.add_argument("--storm-fraction", type=float, default=0.5, help="reconnect: share dropped (default 0.5)")
    parser.add_argument("--storm-away", type=float, default=12.0, help="reconnect: seconds away (default 12)")
    parser.add_argument("--lobby-pollers", type=int, default=0, help="lobby pollers (default: lobby scenario 1 per 6)")
    parser.add_argument("--lobby-every", type=float, default=2.0, help="seconds between lobby calls (default 2)")
    parser.add_argument(
        "--escrow-settle",
        type=float,
        default=10.0,
        metavar="S",
        help="at the end, read escrow_vs_stacks (wallet table escrows - dealer cash-table chips) again for up to S s "
        "while it is not 0: rake and cash-outs in flight settle (default 10)",
    )
    burst = parser.add_argument_group("tournament-burst")
    burst.add_argument("--entrants", type=int, default=100, help="players registering at once (default 100)")
    burst.add_argument("--buy-in", type=int, default=1000, metavar="CENTS", help="into the prize pool (default 1000)")
    burst.add_argument("--fee", type=int, default=100, metavar="CENTS", help="to the house (default 100)")
    burst.add_argument(
        "--retry-share",
        type=float,
        default=0.2,
        help="share of the players sending their request id again, during and after the first call (default 0.2)",
    )
    burst.add_argument(
        "--tournament",
        default=None,
        metavar="HOST:PORT",
        help="the tournament service, where the tournament is created (CreateTournament is the operator's): default "
        "the --start-stack's, else the gateway's host at 20056 + --port-offset",
    )
    burst.add_argument(
        "--tls-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="the operator identity's certificate (tls.crt, tls.key, ca.crt) for the tournament service when the "
        "services talk mutual TLS: default $LOADTEST_TLS_DIR; with --start-stack STATE/pki/operator",
    )
    burst.add_argument(
        "--tournament-token",
        default=None,
        metavar="TOKEN",
        help="the tournament service's TOURNAMENT_OPERATOR_TOKEN, when it has one (default $TOURNAMENT_OPERATOR_TOKEN)",
    )
    parser.add_argument(
        "--baseline-seconds",
        type=float,
        default=3.0,
        help="seconds per bare-gRPC baseline mode (unary, bidi); 0 = none (default 3)",
    )
    parser.add_argument(
        "--profile",
        type=float,
        default=0.0,
        metavar="S",
        help="py-spy record the dealer and gateway for S s of the steady state (needs ptrace; "
        "raw stacks and their top functions go into the report, beside each thread's CPU from /proc)",
    )
    parser.add_argument(
        "--profile-native",
        action="store_true",
        help="with --profile: py-spy --native, naming the C and C++ frames (grpc, protobuf) that a Python-only "
        "profile shows as the event loop's callbacks (py-spy then pauses the process at each sample)",
    )
    parser.add_argument(
        "--slo",
        action="append",
        default=[],
        metavar="NAME=LIMIT",
        help="an objective, e.g. act_p99_ms=50, errors=0, imbalance=0, escrow_vs_stacks=0 (repeatable)",
    )
    parser.add_argument("--out", type=Path, default=None, help="report directory (default var/loadtest/RUN)")
    parser.add_argument("--prefix", default="lt", help="table and player id prefix (default lt)")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the players")
    parser.add_argument(
        "--generators",
        type=int,
        default=None,
        metavar="N",
        help="load-generator processes sharing the players, whole tables each (default $LOADTEST_GENERATORS "
        "or 1: this process; loadtest-ab can compare them so; not the tournament burst's)",
    )
    parser.add_argument("--setup-concurrency", type=int, default=16, help="concurrent set-up calls (default 16)")
    parser.add_argument("--progress-every", type=float, default=1.0, help="seconds between progress ticks")
    target = parser.add_argument_group("target: an address, or a make-run stack started for the run")
    target.add_argument("--gateway", default="127.0.0.1:20055", help="gateway address (default 127.0.0.1:20055)")
    target.add_argument(
        "--operator-token",
        default=None,
        metavar="TOKEN",
        help=f"the gateway's GATEWAY_OPERATOR_TOKEN (default ${OPERATOR_ENV}, else {OPERATOR_FILE})",
    )
    target.add_argument(
        "--metrics",
        action="append",
        default=None,
        metavar="NAME=URL",
        help="a service's /metrics (NAME=http://HOST:PORT/metrics; its process is found by the port) "
        "or NAME=pid:PID; repeatable (default: the make-run ports plus --metrics-offset)",
    )
    target.add_argument("--metrics-offset", type=int, default=0, help="with the default --metrics: the offset")
    target.add_argument("--kafka-port", type=int, default=9092, help="Kafka's port (its process is sampled too)")
    target.add_argument(
        "--dealers",
        type=int,
        default=int(os.environ.get("DEALER_REPLICAS", "2")),
        help="with the default --metrics: the dealer replicas make run started (default 2, or DEALER_REPLICAS)",
    )
    target.add_argument(
        "--start-stack",
        action="store_true",
        help="start scripts/run.py --no-bots (Kafka and every service) for the run, stop it after",
    )
    target.add_argument(
        "--port-offset",
        type=int,
        default=None,
        help="with --start-stack: run.py --port-offset (default 10000: its gRPC ports 30051-31053, below the "
        "kernel's ephemeral ports); "
        "tournament-burst: the default --tournament port's offset (default 0)",
    )
    target.add_argument(
        "--state-dir",
        type=Path,
        default=None,
        help="with --start-stack: run.py --state-dir, kept after the run (default: a temp dir, removed at the end, "
        "the services' logs moved to OUT/stack-logs)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys
    import tempfile
    import time

    from rich.console import Console

    from cardroom.client.loadtest.services import Target, default_targets, target_from
    from cardroom.client.loadtest.settings import Folding, LoadSettings, Scenario, ThinkTime
    from cardroom.client.loadtest.slo import Objective
    from cardroom.runtime.config import DEFAULT_PORTS

    scenario = Scenario(args.scenario)
    burst = scenario is Scenario.TOURNAMENT
    if burst and (args.entrants < 1 or args.buy_in < 0 or args.fee < 0 or not 0 <= args.retry_share <= 1):
        print("cardroom loadtest: --entrants >= 1, --buy-in and --fee >= 0, 0 <= --retry-share <= 1")
        return 2
    try:
        objectives = [Objective.parse(text) for text in args.slo]
        targets = [target_from(text) for text in args.metrics] if args.metrics else None
    except ValueError as err:
        print(f"cardroom loadtest: {err}")
        return 2
    if args.tables < 1 or not 2 <= args.players_per_table <= args.seats or args.ramp < 0:
        print("cardroom loadtest: --tables >= 1, 2 <= --players-per-table <= --seats, --ramp >= 0")
        return 2
    try:
        generators = int(os.environ.get("LOADTEST_GENERATORS", "1")) if args.generators is None else args.generators
    except ValueError:
        print(f"cardroom loadtest: LOADTEST_GENERATORS={os.environ['LOADTEST_GENERATORS']!r} is not a number")
        return 2
    if not 1 <= generators <= args.tables:
        print("cardroom loadtest: 1 <= --generators <= --tables (each generator plays whole tables)")
        return 2
    try:
        folding = Folding(args.fold_preflop, args.fold_later)
    except ValueError as err:
        print(f"cardroom loadtest: --fold-preflop / --fold-later: {err}")
        return 2
    steady = args.steady if args.duration is None else args.duration - args.ramp
    if steady <= 0:
        print("cardroom loadtest: the steady state must be longer than 0 s (--steady, or --duration > --ramp)")
        return 2
    out = args.out or Path("var") / "loadtest" / time.strftime("%Y%m%d-%H%M%S")
    stack = None
    made_state = False
    with terminate_as_interrupt():
        try:
            if args.start_stack:
                from cardroom.client.loadtest.stack import RunStack

                made_state = args.state_dir is None  # a temp state dir of the run's own: removed at the end
                state = args.state_dir or Path(tempfile.mkdtemp(prefix="cardroom-loadtest-"))
                offset = STACK_PORT_OFFSET if args.port_offset is None else args.port_offset
                stack = RunStack(state, args.kafka_port, offset, args.metrics_offset)
                stack.start()
                gateway, token, targets = stack.gateway, stack.operator_token(), stack.targets()
                tournament = args.tournament or stack.services.get("tournament", ("", ""))[0]
                tls_dir = args.tls_dir or stack.operator_tls_dir()
            else:
                gateway, token = args.gateway, operator_token(args.operator_token)
                host = gateway.rpartition(":")[0] or "127.0.0.1"
                if targets is None:
                    targets = default_targets(host, args.metrics_offset, args.kafka_port, args.dealers)
                    if burst:
                        port = DEFAULT_PORTS["tournament"][1] + args.metrics_offset
                        targets.append(Target("tournament", f"http://{host}:{port}/metrics", port))
                tournament = args.tournament or f"{host}:{DEFAULT_PORTS['tournament'][0] + (args.port_offset or 0)}"
                tls_dir = args.tls_dir or (
                    Path(os.environ["LOADTEST_TLS_DIR"]) if os.environ.get("LOADTEST_TLS_DIR") else None
                )
            if not token:
                print(
                    f"cardroom loadtest: the gateway's operator token is needed: --operator-token, ${OPERATOR_ENV} "
                    f"or {OPERATOR_FILE}"
                )
                return 2
            settings = LoadSettings(
                gateway=gateway,
                operator_token=token,
                scenario=scenario,
                tables=args.tables,
                players_per_table=args.players_per_table,
                seats=args.seats,
                game=args.game,
                ramp=args.ramp,
                steady=steady,
                think=ThinkTime(args.think_median_ms, args.think_p90_ms, args.think_max_ms),
                folding=folding,
                hand_pause=args.hand_pause,
                churn_hands=args.churn_hands,
                churn_away=args.churn_away,
                storm_every=args.storm_every,
                storm_fraction=args.storm_fraction,
                storm_away=args.storm_away,
                lobby_pollers=args.lobby_pollers,
                lobby_every=args.lobby_every,
                prefix=args.prefix,
                seed=args.seed,
                generators=generators,
                setup_concurrency=args.setup_concurrency,
                out_dir=out,
                baseline_seconds=args.baseline_seconds,
                progress_every=args.progress_every,
                profile_seconds=args.profile,
                profile_native=args.profile_native,
                stop_spread=args.stop_spread,
                escrow_settle=args.escrow_settle,
                entrants=args.entrants,
                buy_in=args.buy_in,
                fee=args.fee,
                retry_share=args.retry_share,
                tournament_addr=tournament,
                tls_dir=tls_dir,
                tournament_token=args.tournament_token or os.environ.get("TOURNAMENT_OPERATOR_TOKEN", ""),
            )
            return execute(settings, targets, objectives, Console(width=None if sys.stdout.isatty() else 150))
        except KeyboardInterrupt:
            return 130
        finally:
            with signals_held():
                if stack is not None:
                    stack.stop()
                    if made_state:
                        kept = stack.discard(keep_logs_in=out / "stack-logs")
                        print(
                            f"stack: its logs are in {kept}; its state (Kafka's log, the databases) was removed"
                            if kept
                            else "stack: its state was removed (no logs)"
                        )


def execute(settings: LoadSettings, targets: list[Target], objectives: list[Objective], console: Console) -> int:
    """Run, print the summary and the notes; 0 when every objective is met, 1 when one is missed, 3 on failure."""
    import grpc

    from cardroom.client.loadtest.report import print_summary
    from cardroom.client.loadtest.runner import run_load
    from cardroom.runtime.errors import describe_error

    try:
        summary = run_load(settings, targets, objectives)
    except grpc.RpcError as err:
        print(f"cardroom loadtest: {describe_error(err)}")
        return 3
    except RuntimeError as err:
        print(f"cardroom loadtest: {err}")
        return 3
    print_summary(summary, console)
    for note in summary["notes"]:
        console.print(f"note: {note}")
    return 0 if all(o["met"] for o in summary["slo"]) else 1
