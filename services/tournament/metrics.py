"""Tournament service metrics (Prometheus, default registry).

Labels are bounded: ``state`` (the four tournament states), ``format`` (the seven formats of
:class:`cardroom.core.tournament.Format`) and ``op`` (register, unregister, rebuy, add_on) — never a
tournament or player id, so the series do not grow with the tournaments run. The per-format gauges
sum (or, for the level, take the highest of) the tournaments in registration or running; a finished
or cancelled tournament counts only in ``tournament_tournaments``. Every label value starts at 0, so
a panel reads 0 rather than no data before the first tournament of a format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client import Counter, Gauge, Histogram

from cardroom.core.tournament import Format, Status
from tournament.settings import FORMATS

if TYPE_CHECKING:
    from tournament.runner import Runner

TOURNAMENTS = Gauge("tournament_tournaments", "Tournaments by state and format.", ["state", "format"])
ENTRANTS = Gauge("tournament_entrants", "Entrants of the tournaments in registration or running.", ["format"])
REMAINING = Gauge("tournament_players_remaining", "Players still in the running tournaments.", ["format"])
TABLES = Gauge("tournament_tables", "Tables in play at the running tournaments.", ["format"])
LEVEL = Gauge("tournament_level", "The highest level under way at a running tournament (0: none).", ["format"])
HAND_FOR_HAND = Gauge("tournament_hand_for_hand", "Running tournaments playing hand-for-hand.", ["format"])
PRIZE_POOL = Gauge(
    "tournament_prize_pool_cents", "Prize pools (with the guarantee) of the tournaments not over, cents.", ["format"]
)
REGISTRATIONS = Counter(
    "tournament_registrations_total", "Entries taken or given back (not replays), by kind.", ["format", "op"]
)
LEVELS = Counter("tournament_levels_total", "Levels started at the tournaments.", ["format"])
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
DEALER_DISAGREES = Counter(
    "tournament_dealer_disagreements_total",
    "The dealer's tables and the tournament's core disagree (an alert: that table deals no more): a hand"
    " the core cannot replay (replay), a hand that ended otherwise in the core (result), a table command"
    " the dealer refused (refused).",
    ["kind"],
)

OPS = ("register", "unregister", "rebuy", "add_on")


@dataclass(frozen=True)
class _Seen:
    """What one tournament last contributed to the per-format gauges."""

    format: str
    state: str
    entrants: int = 0
    remaining: int = 0
    tables: int = 0
    level: int = 0
    hand_for_hand: int = 0
    prize_pool: int = 0


_seen: dict[str, _Seen] = {}
_levels: dict[str, tuple[int, float]] = {}
#: format -> tournament id -> its level, for the running ones (the gauge is their maximum).
_running_levels: dict[str, dict[str, int]] = {f.value: {} for f in Format}

for _format in Format:
    for _state in Status:
        TOURNAMENTS.labels(_state.value, _format.value)
    for _gauge in (ENTRANTS, REMAINING, TABLES, LEVEL, HAND_FOR_HAND, PRIZE_POOL):
        _gauge.labels(_format.value)
    for _op in OPS:
        REGISTRATIONS.labels(_format.value, _op)
    LEVELS.labels(_format.value)


def format_of(runner: Runner) -> str:
    return FORMATS[runner.request.format].value


def registration(runner: Runner, op: str) -> None:
    """One entry taken (register, rebuy, add_on) or given back (unregister)."""
    REGISTRATIONS.labels(format_of(runner), op).inc()


def _snapshot(runner: Runner) -> _Seen:
    t = runner.t
    fmt, state = format_of(runner), t.status.value
    if t.status not in (Status.REGISTRATION, Status.RUNNING):
        return _Seen(fmt, state)
    running = t.status is Status.RUNNING
    return _Seen(
        fmt,
        state,
        entrants=len(t.entrants),
        remaining=len(t.remaining()) if running else 0,
        tables=len(t.tables) if running else 0,
        level=t.level_index + 1 if running and t.started_at is not None else 0,
        hand_for_hand=1 if running and t.hand_for_hand else 0,
        prize_pool=t.prize_pool,
    )


def observe(runner: Runner, now: float | None = None) -> None:
    """Bring the gauges up to date with one tournament (after each of its steps)."""
    tid = runner.tournament_id
    new = _snapshot(runner)
    old = _seen.get(tid)
    if old != new:
        if old is not None:
            TOURNAMENTS.labels(old.state, old.format).dec()
        TOURNAMENTS.labels(new.state, new.format).inc()
        for gauge, field in (
            (ENTRANTS, "entrants"),
            (REMAINING, "remaining"),
            (TABLES, "tables"),
            (HAND_FOR_HAND, "hand_for_hand"),
            (PRIZE_POOL, "prize_pool"),
        ):
            delta = getattr(new, field) - (getattr(old, field) if old is not None else 0)
            if delta:
                gauge.labels(new.format).inc(delta)
        levels = _running_levels[new.format]
        if new.level:
            levels[tid] = new.level
        else:
            levels.pop(tid, None)
        LEVEL.labels(new.format).set(max(levels.values(), default=0))
        if new.state in (Status.FINISHED.value, Status.CANCELLED.value):
            _seen[tid] = _Seen(new.format, new.state)  # no gauge share left: only the state count
        else:
            _seen[tid] = new
    HANDS.inc(0)
    if now is not None:
        seen = _levels.get(tid)
        if seen is None or seen[0] != new.level:
            if seen is not None and seen[0]:
                LEVEL_SECONDS.observe(max(0.0, now - seen[1]))
            if new.level:
                LEVELS.labels(new.format).inc()
            _levels[tid] = (new.level, now)
        if new.level == 0 and new.state in (Status.FINISHED.value, Status.CANCELLED.value):
            _levels.pop(tid, None)


def forgotten(tournament_id: str) -> None:
    """A tournament over left the house: it still counts in ``tournament_tournaments`` (its state),
    but nothing of it is kept here (its per-format shares were already 0)."""
    _seen.pop(tournament_id, None)
    _levels.pop(tournament_id, None)


def remembered(fmt: str, state: str, count: int) -> None:
    """``count`` forgotten tournaments of a format in a state, counted at a start (the store's count: none
    is loaded, replayed or observed)."""
    TOURNAMENTS.labels(state, fmt).inc(count)


__all__ = ["forgotten", "observe", "registration", "remembered"]
