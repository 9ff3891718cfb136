"""A whole tournament of random bots, in-process (``cardroom simulate --tournament``).

Randomness comes only from the ``random.Random`` passed in (seat draws, decks, bot choices),
so a seed replays the same tournament. Tables are played in rounds: every idle table deals,
every hand is played out, then time moves on (``hand_seconds`` per round; breaks are waited
out). Bots pick a uniformly random legal action kind and a uniform amount; they re-buy and
take the add-on with the given probabilities; ``late`` of the entrants register during
late registration. ``check(tournament)`` runs after every round (property tests).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from cardroom.core.engine import ActionKind, Structure
from cardroom.core.engine.simulation import shuffled_deck
from cardroom.core.table.table import HandRecord
from cardroom.core.tournament.config import TournamentConfig
from cardroom.core.tournament.tournament import PlayerStatus, Status, Tournament

_AMOUNT = (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE)


@dataclass(frozen=True, slots=True)
class SimulationOptions:
    late: float = 0.05
    rebuy_probability: float = 0.7
    add_on_probability: float = 0.6
    hand_seconds: float = 60.0
    max_rounds: int = 100_000
    cancel_at_round: int | None = None


def _bot_action(t: Tournament, tid: int, rng: random.Random, now: float) -> None:
    """A random bot: raises 15 % of the time (mostly the minimum); facing a bet folds a fifth
    of the time, most of the time if the call is over a quarter of his stack; otherwise
    checks or calls; draws a random number of cards."""
    table = t.tables[tid]
    la = table.legal_actions()
    assert la is not None and table.hand is not None
    kinds = la.kinds
    r = rng.random()
    aggressive = [k for k in _AMOUNT if k in kinds]
    if ActionKind.DRAW in kinds:
        held = table.hand.hole_cards(la.seat)
        t.act(tid, la.seat, ActionKind.DRAW, discards=rng.sample(list(held), rng.randint(0, la.max_discards)), now=now)
        return
    if ActionKind.BRING_IN in kinds and r < 0.7:
        t.act(tid, la.seat, ActionKind.BRING_IN, now=now)
        return
    if aggressive and r < 0.15:
        kind = aggressive[0]
        if t.variant.structure is Structure.FIXED_LIMIT or la.min_to == la.max_to or rng.random() < 0.7:
            amount = la.min_to
        else:
            amount = la.min_to + int(rng.random() * (la.max_to - la.min_to + 1))
        t.act(tid, la.seat, kind, amount, now=now)
    elif (
        ActionKind.FOLD in kinds
        and ActionKind.CHECK not in kinds
        and (r < 0.35 or (4 * (la.call_amount or 0) > table.stack(la.seat) and r < 0.8))
    ):
        t.act(tid, la.seat, ActionKind.FOLD, now=now)
    elif ActionKind.CHECK in kinds:
        t.act(tid, la.seat, ActionKind.CHECK, now=now)
    elif ActionKind.CALL in kinds:
        t.act(tid, la.seat, ActionKind.CALL, now=now)
    else:
        kind = min(kinds, key=lambda k: k.value)
        t.act(tid, la.seat, kind, la.min_to if kind in _AMOUNT else None, now=now)


def simulate(
    config: TournamentConfig,
    entrants: int,
    rng: random.Random,
    *,
    options: SimulationOptions = SimulationOptions(),
    on_hand: Callable[[int, HandRecord], None] | None = None,
    check: Callable[[Tournament], None] | None = None,
) -> Tournament:
    """Register ``entrants`` bots and play the tournament to its end (or cancellation)."""
    t = Tournament(config, rng)
    names = [f"player{i:04d}" for i in range(1, entrants + 1)]
    start = config.start_at if config.start_at is not None else 0.0
    late = int(entrants * options.late) if config.late_registration_seconds > 0 and config.start_at is not None else 0
    early, later = names[: entrants - late], names[entrants - late :]
    for p in early:
        t.register(p, start - 3600.0 if config.start_at is not None else start)
    now = start
    t.tick(now)
    rounds = 0
    while t.status is Status.RUNNING:
        rounds += 1
        if rounds > options.max_rounds:
            raise RuntimeError("the tournament does not end")
        if options.cancel_at_round is not None and rounds >= options.cancel_at_round:
            t.cancel(now)
            break
        for p in list(later):
            if t.can_register(p, now):
                t.register(p, now)
                later.remove(p)
            elif not t.late_open:
                later.clear()
            if rng.random() < 0.5:
                break
        end = t.break_ends_at()
        if end is not None:
            now = end
            t.tick(now)
        _between_hands(t, rng, now, options)
        if t.status is not Status.RUNNING:
            break
        for tid in sorted(t.tables):
            if t.status is Status.RUNNING and tid in t.tables and t.can_deal(tid, now):
                t.deal(tid, shuffled_deck(rng), now)
        while t.playing and t.status is Status.RUNNING:
            for tid in sorted(t.playing):
                while tid in t.playing and t.status is Status.RUNNING:
                    _bot_action(t, tid, rng, now)
        for tid, record in t.drain_hands():
            if on_hand is not None:
                on_hand(tid, record)
        _between_hands(t, rng, now, options)
        if check is not None:
            check(t)
        now += options.hand_seconds
        t.tick(now)
    for tid, record in t.drain_hands():
        if on_hand is not None:
            on_hand(tid, record)
    return t


def _between_hands(t: Tournament, rng: random.Random, now: float, options: SimulationOptions) -> None:
    for p, e in list(t.entrants.items()):
        if t.status is not Status.RUNNING:
            return
        if e.status is PlayerStatus.PENDING_REBUY:
            if t.can_rebuy(p, now, double=True) and rng.random() < 0.3:
                t.rebuy(p, now, double=True)
            elif t.can_rebuy(p, now) and rng.random() < options.rebuy_probability:
                t.rebuy(p, now)
            else:
                t.decline_rebuy(p, now)
        elif e.status is PlayerStatus.ACTIVE:
            if t.can_add_on(p, now) and rng.random() < options.add_on_probability:
                t.add_on(p, now)
            elif t.can_rebuy(p, now) and rng.random() < 0.05:
                t.rebuy(p, now)


__all__ = ["SimulationOptions", "simulate"]
