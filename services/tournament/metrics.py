"""Tournament service metrics (Prometheus, default registry)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge, Histogram

from cardroom.core.tournament import Status

if TYPE_CHECKING:
    from tournament.runner import Runner

TOURNAMENTS = Gauge("tournament_tournaments", "Tournaments by state.", ["state"])
ENTRANTS = Gauge("tournament_entrants", "Entrants registered.", ["tournament"])
REMAINING = Gauge("tournament_players_remaining", "Players still in.", ["tournament"])
TABLES = Gauge("tournament_tables", "Tables in play.", ["tournament"])
LEVEL = Gauge("tournament_level", "The level under way (1-based; 0 before the start).", ["tournament"])
HAND_FOR_HAND = Gauge("tournament_hand_for_hand", "1 while hand-for-hand is on.", ["tournament"])
PRIZE_POOL = Gauge("tournament_prize_pool_cents", "The prize pool, cents (with the guarantee).", ["tournament"])
HANDS = Counter("tournament_hands_total", "Hands played at tournament tables.")
LEVEL_SECONDS = Histogram(
    "tournament_level_seconds",
    "Wall-clock time per level.",
    buckets=(1, 5, 10, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600),
)
EVENTS_PUBLISHED = Counter("tournament_events_published_total", "Tournament events Kafka acknowledged.")
EVENTS_FAILED = Counter("tournament_events_failed_total", "Tournament events Kafka did not accept (retried).")
MONEY_PAID = Counter("tournament_money_paid_cents_total", "Cents the wallet took for owed transfers.")
MONEY_RETRIES = Counter("tournament_money_retries_total", "Owed transfers waiting for the wallet.")
MONEY_REFUSED = Counter("tournament_money_refused_total", "Owed transfers the wallet refused (an alert).")

_levels: dict[str, tuple[int, float]] = {}
_states: dict[str, str] = {}
for _state in Status:
    TOURNAMENTS.labels(_state.value)


def observe(runner: Runner, now: float | None = None) -> None:
    t, tid = runner.t, runner.tournament_id
    state = t.status.value
    previous = _states.get(tid)
    if previous != state:
        if previous is not None:
            TOURNAMENTS.labels(previous).dec()
        TOURNAMENTS.labels(state).inc()
        _states[tid] = state
    ENTRANTS.labels(tid).set(len(t.entrants))
    REMAINING.labels(tid).set(len(t.remaining()) if t.status is not Status.REGISTRATION else len(t.entrants))
    TABLES.labels(tid).set(len(t.tables) if t.status is Status.RUNNING else 0)
    level = t.level_index + 1 if t.started_at is not None else 0
    LEVEL.labels(tid).set(level)
    HAND_FOR_HAND.labels(tid).set(1 if t.hand_for_hand else 0)
    PRIZE_POOL.labels(tid).set(t.prize_pool)
    HANDS.inc(0)
    if now is not None:
        seen = _levels.get(tid)
        if seen is None or seen[0] != level:
            if seen is not None and seen[0]:
                LEVEL_SECONDS.observe(max(0.0, now - seen[1]))
            _levels[tid] = (level, now)


__all__ = ["observe"]
