"""Dealer metrics (table health), on the default Prometheus registry."""

from prometheus_client import Counter, Gauge, Histogram

TABLES = Gauge("dealer_tables_active", "Open tables.", ["variant"])
SEATED = Gauge("dealer_players_seated", "Players seated at open tables.", ["variant"])
HANDS = Counter("dealer_hands_dealt_total", "Hands dealt to the end.", ["variant"])
CANCELLED = Counter("dealer_hands_cancelled_total", "Hands cancelled by a dealer crash.", ["variant"])
HAND_SECONDS = Histogram("dealer_hand_duration_seconds", "From the deal to the end of a hand.", ["variant"],
                         buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
ACTION_SECONDS = Histogram("dealer_action_latency_seconds", "Act RPC: queueing plus applying the action.",
                           ["variant"], buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1))
TIMEOUTS = Counter("dealer_timeouts_total", "Turns decided by the clock.", ["variant", "decision"])
DISCONNECTS = Counter("dealer_disconnects_total", "Seated players reported disconnected.", ["variant"])
POTS = Histogram("dealer_pot_size", "Total pot of each hand (minor units / chips).", ["variant"],
                 buckets=(10, 50, 100, 500, 1_000, 5_000, 10_000, 50_000, 100_000, 1_000_000))
RAKE = Counter("dealer_rake_total", "Rake taken (minor units).", ["currency"])
IMBALANCE = Gauge("dealer_escrow_imbalance", "Sum over tables of |escrow - (stacks + pots + pending cash-outs)|; "
                  "must read 0.")
SHOWDOWN_CHECKS = Counter("dealer_showdown_checks_total",
                          "Showdowns cross-checked with the evaluator service.", ["outcome"])
WATCHERS = Gauge("dealer_watch_streams", "Open Watch streams.")
SNAPSHOTS = Counter("dealer_snapshots_total", "Table snapshots written.")
