"""The in-process tables' auto policy: a bot's decision at a tournament table, from the table's
legal actions and a random generator seeded per hand (so a seed replays the same tournament).

Aggressive enough that fast-level tournaments end: raises a quarter of the time (now and then
all in), calls most bets, folds to large ones more often than to small ones."""

from __future__ import annotations

import random
from typing import Any

from cardroom.core.engine import ActionKind, Structure
from cardroom.core.table.table import Table

_AMOUNT = (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE)


def decide(table: Table, structure: Structure, rng: random.Random) -> dict[str, Any]:
    """``{"seat", "kind", "amount", "discards"}`` for the seat to act at ``table``."""
    la = table.legal_actions()
    assert la is not None and table.hand is not None
    kinds = la.kinds
    seat = la.seat
    r = rng.random()
    out: dict[str, Any] = {"seat": seat, "amount": None, "discards": []}
    if ActionKind.DRAW in kinds:
        held = list(table.hand.hole_cards(seat))
        out.update(
            kind=ActionKind.DRAW.name,
            discards=[str(c) for c in rng.sample(held, rng.randint(0, min(la.max_discards, len(held))))],
        )
        return out
    if ActionKind.BRING_IN in kinds and r < 0.7:
        out["kind"] = ActionKind.BRING_IN.name
        return out
    aggressive = [k for k in _AMOUNT if k in kinds]
    if aggressive and r < 0.2:
        if structure is Structure.FIXED_LIMIT or la.min_to == la.max_to:
            amount = la.min_to
        elif rng.random() < 0.1:
            amount = la.max_to
        else:
            amount = la.min_to + int(rng.random() * (la.max_to - la.min_to + 1) / 3)
        out.update(kind=aggressive[0].name, amount=max(la.min_to, min(la.max_to, amount)))
        return out
    call = la.call_amount or 0
    if (
        ActionKind.FOLD in kinds
        and ActionKind.CHECK not in kinds
        and (r < 0.3 or (3 * call > table.stack(seat) and r < 0.6))
    ):
        out["kind"] = ActionKind.FOLD.name
    elif ActionKind.CHECK in kinds:
        out["kind"] = ActionKind.CHECK.name
    elif ActionKind.CALL in kinds:
        out["kind"] = ActionKind.CALL.name
    else:
        kind = min(kinds, key=lambda k: k.value)
        out.update(kind=kind.name, amount=la.min_to if kind in _AMOUNT else None)
    return out


__all__ = ["decide"]
