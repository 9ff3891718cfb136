"""Evaluator metrics (Prometheus, default registry)."""

from prometheus_client import Counter, Histogram

EVALUATIONS = Counter(
    "evaluator_evaluations_total", "Hands evaluated (rate() gives evaluations per second).", ["ranking"]
)
EQUITY_REQUESTS = Counter("evaluator_equity_requests_total", "Equity requests served.", ["game", "method"])
EQUITY_BOARDS = Histogram(
    "evaluator_equity_boards",
    "Boards evaluated per equity request.",
    buckets=(1, 10, 100, 1_000, 10_000, 50_000, 100_000, 500_000, 1_000_000, 2_000_000),
)
EQUITY_PLAYERS = Histogram(
    "evaluator_equity_players", "Players per equity request.", buckets=(2, 3, 4, 5, 6, 7, 8, 9, 10)
)
