"""A random legal action for a bot: mostly check/call, sometimes bet/raise, rarely fold — or, given
a fold share (the load test's players), folding that share of the times it faces a bet."""

from __future__ import annotations

import random

from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g

SIZED = (d.ACTION_TYPE_BET, d.ACTION_TYPE_RAISE, d.ACTION_TYPE_COMPLETE)
WEIGHTS = {
    d.ACTION_TYPE_FOLD: 1,
    d.ACTION_TYPE_CHECK: 6,
    d.ACTION_TYPE_CALL: 6,
    d.ACTION_TYPE_BET: 2,
    d.ACTION_TYPE_RAISE: 2,
    d.ACTION_TYPE_BRING_IN: 4,
    d.ACTION_TYPE_COMPLETE: 1,
    d.ACTION_TYPE_DRAW: 6,
}


def passive(legal: d.LegalActionsView) -> g.PlayAction:
    """Check, else call, else the first legal action (a fallback that needs no amount)."""
    for action in (
        d.ACTION_TYPE_CHECK,
        d.ACTION_TYPE_CALL,
        d.ACTION_TYPE_BRING_IN,
        d.ACTION_TYPE_DRAW,
        d.ACTION_TYPE_FOLD,
    ):
        if action in legal.actions:
            return g.PlayAction(action=action)
    return g.PlayAction(action=legal.actions[0] if legal.actions else d.ACTION_TYPE_FOLD)


def choose(
    legal: d.LegalActionsView,
    rng: random.Random,
    my_cards: list[str],
    fixed_limit: bool = False,
    fold_share: float | None = None,
) -> g.PlayAction:
    """One of ``legal.actions`` (folding only when checking is not possible). In fixed limit
    only ``min_to`` or ``max_to`` is a legal amount (e.g. an open pair in stud: 2 or 4).
    ``fold_share``: facing a bet (fold legal, check not), fold with this probability, else play
    one of the other actions by :data:`WEIGHTS`; None: fold by its weight like the others."""
    actions = list(legal.actions)
    if d.ACTION_TYPE_CHECK in actions and d.ACTION_TYPE_FOLD in actions:
        actions.remove(d.ACTION_TYPE_FOLD)
    if fold_share is not None and d.ACTION_TYPE_FOLD in actions and len(actions) > 1:
        if rng.random() < fold_share:
            return g.PlayAction(action=d.ACTION_TYPE_FOLD, hand_number=0)
        actions.remove(d.ACTION_TYPE_FOLD)
    action = rng.choices(actions, weights=[WEIGHTS.get(a, 1) for a in actions])[0]
    move = g.PlayAction(action=action, hand_number=0)
    if action in SIZED:
        low, high = legal.min_to, max(legal.min_to, legal.max_to)
        if fixed_limit:
            move.amount = rng.choice((low, high))
        else:
            move.amount = high if rng.random() < 0.05 else rng.randint(low, min(high, low * 3))
    elif action == d.ACTION_TYPE_DRAW:
        known = [c for c in my_cards if c != "??"]
        move.discards.extend(rng.sample(known, rng.randint(0, min(legal.max_discards, len(known)))))
    return move
