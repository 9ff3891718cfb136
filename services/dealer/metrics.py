"""Dealer metrics (table health), on the default Prometheus registry."""

import contextlib
from collections.abc import Callable
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

from cardroom.runtime.metrics import LATENCY_BUCKETS

TABLES = Gauge("dealer_tables_active", "Open tables.", ["variant"])
SEATED = Gauge("dealer_players_seated", "Players seated at open tables.", ["variant"])
HANDS = Counter("dealer_hands_dealt_total", "Hands dealt to the end.", ["variant"])
CANCELLED = Counter("dealer_hands_cancelled_total", "Hands cancelled by a dealer crash.", ["variant"])
HAND_SECONDS = Histogram(
    "dealer_hand_duration_seconds",
    "From the deal to the end of a hand.",
    ["variant"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
ACTION_SECONDS = Histogram(
    "dealer_action_latency_seconds", "Act RPC: queueing plus applying the action.", ["variant"], buckets=LATENCY_BUCKETS
)
TIMEOUTS = Counter("dealer_timeouts_total", "Turns decided by the clock.", ["variant", "decision"])
DISCONNECTS = Counter("dealer_disconnects_total", "Seated players reported disconnected.", ["variant"])
POTS = Histogram(
    "dealer_pot_size",
    "Total pot of each hand (minor units / chips).",
    ["variant"],
    buckets=(10, 50, 100, 500, 1_000, 5_000, 10_000, 50_000, 100_000, 1_000_000),
)
RAKE = Counter("dealer_rake_total", "Rake taken (minor units).", ["currency"])
IMBALANCE = Gauge(
    "dealer_escrow_imbalance", "Sum over tables of |escrow - (stacks + pots + pending cash-outs)|; must read 0."
)
TABLE_CHIPS = Gauge(
    "dealer_table_chips",
    "Chips at the open cash tables (stacks + the pot of the hand in progress), minor units per currency; "
    "tournament tables excluded (their chips are not money). Set against wallet_table_escrow_cents.",
    ["currency"],
)
SHOWDOWN_CHECKS = Counter(
    "dealer_showdown_checks_total", "Showdowns cross-checked with the evaluator service.", ["outcome"]
)
SHOWDOWN_RETRIES = Counter(
    "dealer_showdown_check_retries_total", "Showdown audits sent again because the evaluator was unreachable."
)
RECONCILED = Counter(
    "dealer_escrow_reconciliations_total",
    "Escrow reconciliations after a restore (paid_back: chips without a seat returned; exact; given_up).",
    ["outcome"],
)
RECONCILED_CHIPS = Counter(
    "dealer_escrow_reconciled_chips_total", "Chips the wallet paid back from table escrows after a restore."
)
WATCHERS = Gauge("dealer_watch_streams", "Open Watch streams.")
FEEDS = Gauge("dealer_table_feeds", "Open WatchTableFeed streams (one per table per gateway).")
SNAPSHOTS = Counter("dealer_snapshots_total", "Table snapshots written.")

# --- Table health for the dashboards and alerts (issue 17; docs/operations.md). Labels stay bounded:
# variant is the game code, never a table or player id.
WAITING = Gauge("dealer_players_waiting", "Players on waiting lists of open tables.", ["variant"])
ACTIONS = Counter(
    "dealer_actions_total",
    "Player actions applied, by kind (fold, check, call, bet, raise, ...).",
    ["variant", "action"],
)
TIME_BANK_USES = Counter("dealer_time_bank_uses_total", "Turns that ran into the player's time bank.", ["variant"])
TIME_BANK_SECONDS = Counter("dealer_time_bank_seconds_total", "Time-bank seconds consumed.", ["variant"])
ARTIFICIAL_ALL_INS = Counter(
    "dealer_artificial_all_ins_total", "Disconnected players treated as all-in for what they had put in.", ["variant"]
)
TABLES_RETIRED = Gauge(
    "dealer_tables_retired", "Closed tables kept as their snapshot only (dealer.retired): their actors left memory."
)
TABLES_REVIVED = Counter(
    "dealer_tables_revived_total", "Retired closed tables whose actor a call brought back from the snapshot."
)
ACTOR_RESTARTS = Counter("dealer_table_actor_restarts_total", "Table loops that died and were started again.")
SNAPSHOT_FAILURES = Counter("dealer_snapshot_failures_total", "Table snapshots that could not be written.")
TRANSACTIONS = Counter(
    "dealer_kafka_transactions_total",
    "Hand records, settlements and snapshots committed together (committed) or not (failed: retried).",
    ["outcome"],
)
TRANSACTION_BATCHES = Histogram(
    "dealer_kafka_transaction_batches",
    "Hands (batches) committed together in one Kafka transaction of a partition.",
    buckets=(1, 2, 4, 8, 16, 32, 64),
)
SNAPSHOTS_REFUSED = Counter(
    "dealer_snapshots_refused_total", "Snapshot records restore refused: not the dealer's own snapshot of the table."
)
KAFKA_PUBLISH_SECONDS = Histogram(
    "dealer_kafka_publish_seconds",
    "From send to the broker's acknowledgement.",
    ["topic"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
KAFKA_PUBLISH_FAILURES = Counter("dealer_kafka_publish_failures_total", "Events Kafka did not accept.", ["topic"])
MONITOR_FAILURES = Counter(
    "dealer_monitor_calls_failed_total",
    "Calls to the connection monitor that failed for good (the all-in allowance is counted at the table meanwhile).",
    ["call", "code"],
)
KAFKA_PUBLISH_PENDING = Gauge(
    "dealer_kafka_publish_pending",
    "Events sent to Kafka and not acknowledged yet: the publish backlog (records committed in the"
    " partitions' transactions are awaited by their tables and not counted).",
)
CONSUMER_LAG = Gauge("dealer_consumer_lag_messages", "Records of a consumed topic not yet read.", ["topic"])

# Known label values of instrumented counters start at 0, so "no mismatch" / "no rake" read 0 instead of
# no data. (Per-game counters get their zero from the dashboards' "or ... * 0" on hands dealt.)
for _outcome in ("match", "mismatch", "error"):
    SHOWDOWN_CHECKS.labels(_outcome)
for _currency in ("CURRENCY_CASH", "CURRENCY_PLAY"):
    RAKE.labels(_currency)
for _outcome in ("committed", "failed"):
    TRANSACTIONS.labels(_outcome)
for _slug in ("cash", "play"):
    TABLE_CHIPS.labels(_slug)


def known_variant(variant: str, actions: tuple[str, ...]) -> None:
    """A game's counters start at 0 (an open table of ``variant``), so "no time bank used" reads 0."""
    for counter in (TIME_BANK_USES, TIME_BANK_SECONDS, ARTIFICIAL_ALL_INS):
        counter.labels(variant)
    for action in actions:
        ACTIONS.labels(variant, action)


def known_topics(topics: tuple[str, ...]) -> None:
    for topic in topics:
        KAFKA_PUBLISH_FAILURES.labels(topic)


def observe_publish(topic: str, seconds: float, accepted: bool) -> None:
    """The publisher's observer: Kafka publish latency and failures per topic."""
    KAFKA_PUBLISH_SECONDS.labels(topic).observe(seconds)
    if not accepted:
        KAFKA_PUBLISH_FAILURES.labels(topic).inc()


def observe_consumer(topic: str) -> Callable[[Any], None]:
    """A consumer loop's after-poll hook: the records of ``topic`` not yet read."""

    def observe(consumer: Any) -> None:
        with contextlib.suppress(Exception):  # a metric never stops the consumer
            lag = 0  # from what the consumer knows already: its last fetch's high-water marks
            for partition in consumer.assignment():
                end = consumer.highwater(partition)
                if end is not None:
                    lag += max(0, end - consumer.position(partition))
            CONSUMER_LAG.labels(topic).set(lag)

    return observe


# Dealer shards (docs/sharding.md)
PARTITIONS_HELD = Gauge("dealer_partitions_held", "Partitions of the tables this replica holds (sharded).")
PARTITION_CLAIMS = Counter(
    "dealer_partition_claims_total", "Partitions of the tables claimed, by outcome.", ["outcome"]
)
PARTITION_RELEASES = Counter(
    "dealer_partition_releases_total", "Partitions of the tables given up, by why (revoked, fenced).", ["why"]
)
