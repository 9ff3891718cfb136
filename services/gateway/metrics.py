"""Gateway metrics (Prometheus, default registry)."""

from prometheus_client import Counter, Gauge, Histogram

from cardroom.runtime.metrics import LATENCY_BUCKETS

LOGINS = Counter("gateway_logins_total", "Tokens issued.")
AUTH_FAILURES = Counter("gateway_auth_failures_total", "Calls rejected as UNAUTHENTICATED.", ["reason"])
RATE_LIMITED = Counter("gateway_rate_limited_total", "Calls or Play messages over the connection's rate.")
PLAY_STREAMS = Gauge("gateway_play_streams", "Open Play and WatchMyTable streams.")
PLAY_EVENTS = Counter("gateway_play_events_total", "Table events sent to players.")
ACT_SECONDS = Histogram(
    "gateway_act_seconds", "Time from a Play action's arrival to the dealer's answer.", buckets=LATENCY_BUCKETS
)
WATCH_RESTARTS = Counter("gateway_watch_restarts_total", "Dealer Watch streams re-opened after a failure.")
TABLE_FEEDS = Gauge("gateway_table_feeds", "Tables followed through one dealer WatchTableFeed for all their sessions.")
PRESENT_PLAYERS = Gauge(
    "gateway_present_players", "Players with an open Play or WatchMyTable stream (listed in each heartbeat)."
)
HEARTBEAT_FAILURES = Counter(
    "gateway_heartbeat_failures_total", "The gateway's heartbeat stream to the connection monitor failed."
)
PLAY_ACTIONS = Counter(
    "gateway_play_actions_total",
    "Play actions answered by the dealer, by gRPC status (OK, FAILED_PRECONDITION, ...).",
    ["code"],
)

# Known label values start at 0, so "no failures" reads 0 instead of no data (dashboards, rates, alerts).
for _reason in ("missing", "invalid"):
    AUTH_FAILURES.labels(_reason)
PLAY_ACTIONS.labels("OK")
SIGNUPS = Counter("gateway_signups_total", "Accounts made by SignUp.")
