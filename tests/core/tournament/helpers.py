"""Helpers for tournament scenario tests: small tournaments driven by hand."""

from __future__ import annotations

import random
from typing import TypeVar

from cardroom.core.engine import ActionKind, Variant
from cardroom.core.engine.simulation import shuffled_deck
from cardroom.core.tournament import Tournament, TournamentConfig
from cardroom.core.tournament.events import TournamentEvent

A = ActionKind
NT = Variant.parse("NT")


def config(**kw: object) -> TournamentConfig:
    settings: dict[str, object] = {
        "variant": NT,
        "starting_stack": 1500,
        "buy_in": 1000,
        "fee": 100,
        "start_at": 3600.0,
    }
    settings.update(kw)
    return TournamentConfig(**settings)  # type: ignore[arg-type]


def started(n: int, seed: int = 1, **kw: object) -> Tournament:
    cfg = config(**kw)
    t = Tournament(cfg, random.Random(seed))
    for i in range(1, n + 1):
        t.register(f"p{i:02d}", 0.0)
    t.tick(cfg.start_at if cfg.start_at is not None else 0.0)
    return t


def play_hand(t: Tournament, tid: int, now: float, rng: random.Random, *, all_in: bool = False) -> None:
    """Deal and play one hand at ``tid``: everybody all-in, or everybody checks / calls."""
    t.deal(tid, shuffled_deck(rng), now)
    while tid in t.playing:
        table = t.tables[tid]
        la = table.legal_actions()
        assert la is not None
        if all_in and A.RAISE in la.kinds:
            t.act(tid, la.seat, A.RAISE, la.max_to, now=now)
        elif all_in and A.BET in la.kinds:
            t.act(tid, la.seat, A.BET, la.max_to, now=now)
        elif all_in and A.COMPLETE in la.kinds:
            t.act(tid, la.seat, A.COMPLETE, la.min_to, now=now)
        elif A.BRING_IN in la.kinds:
            t.act(tid, la.seat, A.BRING_IN, now=now)
        elif A.DRAW in la.kinds:
            t.act(tid, la.seat, A.DRAW, now=now)
        elif A.CHECK in la.kinds:
            t.act(tid, la.seat, A.CHECK, now=now)
        elif A.CALL in la.kinds:
            t.act(tid, la.seat, A.CALL, now=now)
        else:
            t.act(tid, la.seat, A.FOLD, now=now)


E = TypeVar("E", bound=TournamentEvent)


def of_type(t: Tournament, kind: type[E]) -> list[E]:
    return [e for e in t.events if isinstance(e, kind)]
