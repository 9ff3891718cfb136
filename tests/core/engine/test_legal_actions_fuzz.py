"""legal_actions() and act() agree: every offered action (at its minimum and maximum amount)
is accepted, every other action or amount is rejected with the state unchanged."""

from __future__ import annotations

import copy
import random

import pytest

from cardroom.core.engine import ActionKind as A, IllegalAction, Structure, Variant
from cardroom.core.engine.simulation import random_action

CODES = ["NT", "FT", "PO", "HT", "ST", "FO/8", "F7S", "P7S", "F5CD", "F2L3D", "FSK"]


def _snapshot(h):
    return (
        list(h.stacks),
        list(h.bets),
        list(h.committed),
        list(h.folded),
        h.actor,
        len(h.events),
        [list(c) for c in h.hole],
        list(h.board),
    )


def _try(h, kind, amount=None, discards=()):
    trial = copy.deepcopy(h)
    trial.act(kind, amount, discards=discards)
    return trial


@pytest.mark.parametrize("code", CODES)
def test_offered_actions_are_accepted_and_others_rejected(code):
    variant = Variant.parse(code)
    rng = random.Random(f"fuzz-{code}")
    fixed = variant.structure is Structure.FIXED_LIMIT
    for _ in range(15):
        h = _fresh(variant, rng.randint(2, min(6, variant.spec.max_players)), rng)
        while not h.is_over:
            la = h.legal_actions()
            before = _snapshot(h)
            for kind in A:
                if kind in la.kinds:
                    if kind in (A.BET, A.RAISE, A.COMPLETE):
                        _try(h, kind, la.min_to)
                        _try(h, kind, la.max_to)
                        if not fixed or la.min_to == la.max_to:
                            for bad in (la.min_to - 1, la.max_to + 1):
                                if bad < la.min_to or bad > la.max_to:
                                    with pytest.raises(IllegalAction):
                                        _try(h, kind, bad)
                    elif kind is A.DRAW:
                        _try(h, kind, discards=h.hole_cards(la.seat)[: la.max_discards])
                    else:
                        _try(h, kind)
                else:
                    with pytest.raises(IllegalAction):
                        h.act(kind, la.max_to or 1, discards=())
                    assert _snapshot(h) == before
            random_action(h, rng)


def _fresh(variant, players, rng):
    from cardroom.core.cards import DECK
    from cardroom.core.engine import Hand, SeatIn, default_stakes

    deck = list(DECK)
    rng.shuffle(deck)
    stakes = default_stakes(variant)
    unit = stakes.big_blind or stakes.small_bet
    seats = [SeatIn(s, f"p{s}", rng.randint(1, 60) * unit) for s in range(1, players + 1)]
    return Hand(variant, stakes, seats, players if variant.spec.uses_button else None, deck)
