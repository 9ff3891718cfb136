"""Cardroom's Grafana dashboards as code (grafanalib). ``scripts/gen_monitoring.py`` writes them to
``deploy/grafana/dashboards/*.json`` (mounted by docker-compose) and into the Kubernetes monitoring
component; tests/infra/test_monitoring.py checks the checked-in JSON is what this file generates.

Every panel reads the ``${datasource}`` variable (provisioned datasource uid ``prometheus``). Queries
use the recording rules of deploy/prometheus/rules where one exists. Labels are bounded: ``service``,
``grpc_method``, ``variant`` (game code), ``currency``, ``kind``, ``outcome``, and for tournaments
``format``, ``state``, ``op`` — never a table, tournament or player.
"""

from __future__ import annotations

from dataclasses import dataclass

from grafanalib.core import Dashboard, GridPos, Stat, Target, Template, Templating, Time, TimeSeries

DS = "${datasource}"
WIDTH, HEIGHT = 8, 7


@dataclass(frozen=True)
class Panel:
    """One panel: title, unit, queries as (legend, PromQL), and ``stat`` for a single-number panel."""

    title: str
    queries: tuple[tuple[str, str], ...]
    unit: str = "short"
    stat: bool = False
    description: str = ""


def per_game_or_zero(counter: str, window: str) -> str:
    """Events per game in the window, 0 for every game that deals hands but had none (a per-game
    counter only has series for games where the event happened once)."""
    return (
        f"sum by (variant) (increase({counter}[{window}])) "
        f"or sum by (variant) (increase(dealer_hands_dealt_total[{window}])) * 0"
    )


def _dashboard(uid: str, title: str, panels: list[Panel], description: str) -> Dashboard:
    built = []
    for index, panel in enumerate(panels):
        grid = GridPos(h=HEIGHT, w=WIDTH, x=(index % 3) * WIDTH, y=(index // 3) * HEIGHT)
        targets = [
            Target(expr=expr, legendFormat=legend, refId=chr(ord("A") + i), datasource=DS)
            for i, (legend, expr) in enumerate(panel.queries)
        ]
        kind = Stat if panel.stat else TimeSeries
        extra = {"format": panel.unit} if panel.stat else {"unit": panel.unit}
        built.append(
            kind(
                title=panel.title, dataSource=DS, targets=targets, gridPos=grid, description=panel.description, **extra
            )
        )
    return Dashboard(
        uid=uid,
        title=title,
        description=description,
        tags=["cardroom"],
        timezone="utc",
        time=Time("now-1h", "now"),
        refresh="30s",
        panels=built,
        templating=Templating(
            list=[
                Template(
                    name="datasource", label="Data source", type="datasource", query="prometheus", default="prometheus"
                )
            ]
        ),
    ).auto_panel_ids()


SERVICES_RED = [
    Panel(
        "Requests per second by service",
        (("{{service}}", "sum by (service) (service_method:grpc_server_requests:rate1m)"),),
        "reqps",
    ),
    Panel(
        "Error ratio by service (server-side codes)",
        (("{{service}}", "service:grpc_server_error_ratio:rate1m"),),
        "percentunit",
    ),
    Panel(
        "p99 latency by method (unary)",
        (("{{service}} {{grpc_method}}", "service_method:grpc_server_handling_seconds:p99_1m"),),
        "s",
    ),
    Panel(
        "Garbage collector: share of the time stopped, by service and generation",
        (("{{service}} gen {{generation}}", "sum by (service, generation) (rate(python_gc_pause_seconds_sum[5m]))"),),
        "percentunit",
        description="A collection stops the service: every caller waits. With the services' thresholds "
        "(30000,20,20) full collections (generation 2) are rare and young ones few but longer; a mean pause "
        "would have no data between them (cardroom.runtime.collector; docs/capacity.md).",
    ),
    Panel(
        "Event loop lag p99 by service",
        (
            (
                "{{service}}",
                "histogram_quantile(0.99, sum by (service, le) (rate(python_asyncio_loop_lag_seconds_bucket[5m])))",
            ),
        ),
        "s",
        description="How late each service's event loop ran what fell due: every call waits that long besides its"
        " own work (a long callback, a collection, or the machine's other processes; cardroom.runtime.looplag).",
    ),
]

OVERVIEW = _dashboard(
    "cardroom-overview",
    "Cardroom / Overview",
    [
        *SERVICES_RED,
        Panel("Scrape targets up", (("{{service}}", 'up{service!=""}'),), stat=True),
        Panel(
            "Alerts firing",
            (("firing", 'count(ALERTS{alertstate="firing"}) or vector(0)'),),
            stat=True,
            description="Alerts from deploy/prometheus/rules/alerts.yml; runbooks in docs/operations.md.",
        ),
        Panel("Escrow imbalance (must be 0)", (("dealer", "max(dealer_escrow_imbalance)"),), stat=True),
        Panel("Ledger imbalance by currency (must be 0)", (("{{currency}}", "wallet_ledger_imbalance"),), stat=True),
        Panel(
            "Showdown cross-checks by outcome",
            (("{{outcome}}", "sum by (outcome) (increase(dealer_showdown_checks_total[5m]))"),),
        ),
        Panel("Hands dealt per second by game", (("{{variant}}", "variant:dealer_hands:rate1m"),), "ops"),
    ],
    "Every service's rate, errors and duration; the money invariants; alerts.",
)

TABLES = _dashboard(
    "cardroom-tables",
    "Cardroom / Tables",
    [
        Panel("Open tables by game", (("{{variant}}", "sum by (variant) (dealer_tables_active)"),)),
        Panel("Seated players by game", (("{{variant}}", "variant:dealer_players_seated:sum"),)),
        Panel("Players per table by game", (("{{variant}}", "variant:dealer_players_per_table:avg"),)),
        Panel("Waiting players by game", (("{{variant}}", "sum by (variant) (dealer_players_waiting)"),)),
        Panel("Hands per second by game", (("{{variant}}", "variant:dealer_hands:rate1m"),), "ops"),
        Panel("Hands per second per table", (("{{variant}}", "variant:dealer_hands_per_table:rate1m"),), "ops"),
        Panel("Hand duration p50 by game", (("{{variant}}", "variant:dealer_hand_duration_seconds:p50_5m"),), "s"),
        Panel("Pot size p50 by game", (("{{variant}}", "variant:dealer_pot_size:p50_5m"),)),
        Panel("Clock decisions per hand", (("{{variant}}", "variant:dealer_timeouts_per_hand:ratio5m"),)),
        Panel(
            "Actions per second by kind",
            (("{{variant}} {{action}}", "sum by (variant, action) (rate(dealer_actions_total[1m]))"),),
            "ops",
        ),
        Panel(
            "Time bank used (seconds per minute)",
            (("{{variant}}", "sum by (variant) (rate(dealer_time_bank_seconds_total[5m])) * 60"),),
            "s",
        ),
        Panel(
            "Disconnects and artificial all-ins",
            (
                ("disconnects {{variant}}", per_game_or_zero("dealer_disconnects_total", "5m")),
                ("artificial all-ins {{variant}}", "sum by (variant) (increase(dealer_artificial_all_ins_total[5m]))"),
            ),
        ),
        Panel(
            "Hands cancelled by a dealer crash",
            (("{{variant}}", per_game_or_zero("dealer_hands_cancelled_total", "15m")),),
        ),
        Panel("Rake per hour by currency", (("{{currency}}", "currency:dealer_rake:per_hour"),)),
        Panel(
            "Act latency in the dealer p99 by game",
            (("{{variant}}", "variant:dealer_action_latency_seconds:p99_1m"),),
            "s",
        ),
    ],
    "Per game: tables, seats, hands, durations, pots, timeouts, disconnects, rake.",
)

WALLET = _dashboard(
    "cardroom-wallet",
    "Cardroom / Wallet and ledger",
    [
        Panel(
            "Transfers per second by kind", (("{{kind}}", "sum by (kind) (rate(wallet_transfers_total[1m]))"),), "ops"
        ),
        Panel(
            "Idempotent replays per second by kind",
            (("{{kind}}", "sum by (kind) (rate(wallet_transfer_replays_total[1m]))"),),
            "ops",
        ),
        Panel("Ledger imbalance by currency (must be 0)", (("{{currency}}", "wallet_ledger_imbalance"),)),
        Panel(
            "Outbox: pending events and lag",
            (("pending", "wallet_outbox_pending"), ("lag seconds", "wallet_outbox_lag_seconds")),
        ),
        Panel("Ledger events relayed per second", (("relayed", "rate(wallet_outbox_published_total[1m])"),), "ops"),
        Panel(
            "Hand-settled events by outcome",
            (("{{outcome}}", "sum by (outcome) (rate(wallet_hand_settled_events_total[1m]))"),),
            "ops",
        ),
        Panel(
            "Rake collected per hour by currency",
            (("{{currency}}", "sum by (currency) (rate(wallet_rake_collected_total[5m])) * 3600"),),
        ),
        Panel("Hand-settled consumer lag (records)", (("lag", "wallet_consumer_lag_messages"),)),
        Panel(
            "Wallet calls per second by method",
            (("{{grpc_method}}", 'service_method:grpc_server_requests:rate1m{service="wallet"}'),),
            "reqps",
        ),
    ],
    "The double-entry ledger: transfers, invariants, the outbox relay and the rake consumer.",
)

GATEWAY = _dashboard(
    "cardroom-gateway",
    "Cardroom / Gateway and edge",
    [
        Panel("Open Play and WatchMyTable streams", (("streams", "sum(gateway_play_streams)"),)),
        Panel(
            "Act latency at the gateway",
            (
                ("p50", ":gateway_act_seconds:p50_1m"),
                ("p95", ":gateway_act_seconds:p95_1m"),
                ("p99", ":gateway_act_seconds:p99_1m"),
            ),
            "s",
        ),
        Panel(
            "Play actions per second by status",
            (("{{code}}", "sum by (code) (rate(gateway_play_actions_total[1m]))"),),
            "ops",
        ),
        Panel(
            "Logins and auth failures per second",
            (
                ("logins", "sum(rate(gateway_logins_total[1m]))"),
                ("failures {{reason}}", "sum by (reason) (rate(gateway_auth_failures_total[1m]))"),
            ),
        ),
        Panel("Rate-limited calls per second", (("limited", "sum(rate(gateway_rate_limited_total[1m]))"),), "ops"),
        Panel("Table events sent per second", (("events", "sum(rate(gateway_play_events_total[1m]))"),), "ops"),
        Panel(
            "Dealer Watch streams and table feeds (re-opened / open)",
            (
                ("re-opened per minute", "sum(rate(gateway_watch_restarts_total[5m])) * 60"),
                ("Watch streams open at the dealer", "sum(dealer_watch_streams)"),
                ("table feeds open at the dealer", "sum(dealer_table_feeds)"),
            ),
        ),
        Panel(
            "Connected players and heartbeats",
            (
                ("connected", "sum(connection_monitor_connected_players)"),
                ("listed by the gateways", "sum(gateway_present_players)"),
                ("heartbeats/s", "sum(rate(connection_monitor_heartbeats_total[1m]))"),
                ("gateway heartbeat stream failures/min", "sum(rate(gateway_heartbeat_failures_total[5m])) * 60"),
            ),
        ),
        Panel(
            "Disconnects, reconnects and all-ins (connection monitor)",
            (
                ("disconnects", "sum(increase(connection_monitor_disconnects_total[5m]))"),
                ("reconnects", "sum(increase(connection_monitor_reconnects_total[5m]))"),
                ("all-ins {{outcome}}", "sum by (outcome) (increase(connection_monitor_all_ins_total[5m]))"),
            ),
        ),
    ],
    "What players see: streams, act latency, logins, rate limits, connections.",
)

KAFKA = _dashboard(
    "cardroom-kafka",
    "Cardroom / Kafka",
    [
        Panel(
            "Dealer publish latency p99 by topic",
            (
                (
                    "{{topic}}",
                    "histogram_quantile(0.99, sum by (topic, le) (rate(dealer_kafka_publish_seconds_bucket[5m])))",
                ),
            ),
            "s",
        ),
        Panel(
            "Dealer publish backlog (records sent, not yet acknowledged)",
            (("{{instance}}", "sum by (instance) (dealer_kafka_publish_pending)"),),
        ),
        Panel(
            "Publish failures (5 min)",
            (
                ("dealer {{topic}}", "sum by (topic) (increase(dealer_kafka_publish_failures_total[5m]))"),
                ("connection monitor", "sum(increase(connection_monitor_events_failed_total[5m]))"),
            ),
        ),
        Panel(
            "Connection events: published per second and p99 latency",
            (
                ("published/s", "sum(rate(connection_monitor_events_published_total[1m]))"),
                (
                    "p99 s",
                    "histogram_quantile(0.99, sum by (le) (rate(connection_monitor_kafka_publish_seconds_bucket[5m])))",
                ),
            ),
        ),
        Panel(
            "Consumer lag (records)",
            (
                ("wallet hand.settled", "wallet_consumer_lag_messages"),
                ("dealer {{topic}}", "dealer_consumer_lag_messages"),
            ),
        ),
        Panel(
            "Dealer transactions (hand record + settlement + snapshot) per second",
            (
                ("{{outcome}}", "sum by (outcome) (rate(dealer_kafka_transactions_total[1m]))"),
                (
                    "hands per transaction p50",
                    "histogram_quantile(0.5, sum by (le) (rate(dealer_kafka_transaction_batches_bucket[5m])))",
                ),
            ),
        ),
        Panel(
            "Table snapshots written and failed (5 min)",
            (
                ("written", "sum(increase(dealer_snapshots_total[5m]))"),
                ("failed", "sum(increase(dealer_snapshot_failures_total[5m]))"),
            ),
        ),
        Panel("Wallet outbox relayed per second", (("relayed", "rate(wallet_outbox_published_total[1m])"),), "ops"),
    ],
    "Producers, consumers and the snapshot topic.",
)

TOURNAMENTS = _dashboard(
    "cardroom-tournaments",
    "Cardroom / Tournaments",
    [
        Panel("Tournaments by state", (("{{state}}", "state:tournament_tournaments:sum"),)),
        Panel(
            "Entrants by format (registration and running)", (("{{format}}", "sum by (format) (tournament_entrants)"),)
        ),
        Panel("Players left by format (running)", (("{{format}}", "sum by (format) (tournament_players_remaining)"),)),
        Panel(
            "Prize pools by format (cents, with guarantees)",
            (("{{format}}", "sum by (format) (tournament_prize_pool_cents)"),),
        ),
        Panel("Tables in play by format", (("{{format}}", "sum by (format) (tournament_tables)"),)),
        Panel(
            "Levels: highest under way, started per minute",
            (
                ("highest {{format}}", "max by (format) (tournament_level)"),
                ("started/min {{format}}", "sum by (format) (rate(tournament_levels_total[5m])) * 60"),
            ),
        ),
        Panel(
            "Level duration p50 (15 min)",
            (("p50", "histogram_quantile(0.5, sum by (le) (rate(tournament_level_seconds_bucket[15m])))"),),
            "s",
            description="Wall-clock time per level, breaks included; no data while no level ended in 15 minutes.",
        ),
        Panel(
            "Registrations per minute by kind",
            (("{{format}} {{op}}", "format_op:tournament_registrations:rate5m * 60"),),
        ),
        Panel(
            "Tournament hands per second and hand-for-hand",
            (
                ("hands/s", ":tournament_hands:rate1m"),
                ("hand-for-hand {{format}}", "sum by (format) (tournament_hand_for_hand)"),
            ),
        ),
        Panel(
            "Money owed to the wallet (prizes, refunds, overlay)",
            (
                ("paid cents/min", "sum(rate(tournament_money_paid_cents_total[5m])) * 60"),
                ("retries (5 min)", "sum(increase(tournament_money_retries_total[5m]))"),
                ("refused (15 min, must be 0)", "sum(increase(tournament_money_refused_total[15m]))"),
            ),
        ),
        Panel(
            "Tournament events to Kafka",
            (
                ("published/s", "sum(rate(tournament_events_published_total[1m]))"),
                ("failed (5 min)", "sum(increase(tournament_events_failed_total[5m]))"),
            ),
        ),
        Panel(
            "Tournament service calls per second by method",
            (("{{grpc_method}}", 'service_method:grpc_server_requests:rate1m{service="tournament"}'),),
            "reqps",
        ),
    ],
    "Sit & Gos and scheduled events by format: entrants, players left, prize pools, levels, tables, entries, "
    "the money owed to the wallet. Labels: format, state, op (never a tournament id).",
)

DASHBOARDS: dict[str, Dashboard] = {
    "overview": OVERVIEW,
    "tables": TABLES,
    "wallet": WALLET,
    "gateway": GATEWAY,
    "kafka": KAFKA,
    "tournaments": TOURNAMENTS,
}
