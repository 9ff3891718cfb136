"""Connection monitor metrics (Prometheus, default registry)."""

from prometheus_client import Counter, Gauge, Histogram

CONNECTED = Gauge("connection_monitor_connected_players", "Players seen and not disconnected.")
DISCONNECTS = Counter("connection_monitor_disconnects_total", "Players marked disconnected after silence.")
RECONNECTS = Counter("connection_monitor_reconnects_total", "Players back after a disconnect.")
RECONNECT_SECONDS = Histogram(
    "connection_monitor_reconnect_seconds",
    "Time from a disconnect to the player's next heartbeat.",
    buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600),
)
HEARTBEATS = Counter("connection_monitor_heartbeats_total", "Heartbeats received.")
ALL_INS = Counter("connection_monitor_all_ins_total", "Artificial all-ins used, by outcome.", ["outcome"])
EVENTS_FAILED = Counter("connection_monitor_events_failed_total", "Connection events Kafka did not accept.")
EVENTS_PUBLISHED = Counter("connection_monitor_events_published_total", "Connection events Kafka acknowledged.")
PUBLISH_SECONDS = Histogram(
    "connection_monitor_kafka_publish_seconds",
    "From send to the broker's acknowledgement of a connection event.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)

# Known label values start at 0, so "no all-in used" reads 0 instead of no data.
for _outcome in ("used", "replayed", "none_left"):
    ALL_INS.labels(_outcome)
