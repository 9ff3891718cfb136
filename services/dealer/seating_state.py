"""The rules core's :class:`Seating` to and from JSON (stored in table snapshots)."""

from __future__ import annotations

import json
from dataclasses import fields

from cardroom.core.table import Seating, SeatState

#: what a seat carries (every field of :class:`SeatState`, all plain values: no deep copy needed)
_SEAT_FIELDS = tuple(f.name for f in fields(SeatState))


def dump(seating: Seating) -> str:
    """Everything that carries across hands: seats with stacks and debts, blind positions."""
    return json.dumps(
        {
            "seats": [{k: getattr(s, k) for k in _SEAT_FIELDS} for s in seating.seats.values()],
            "last_button": seating.last_button,
            "last_small_blind_seat": seating.last_small_blind_seat,
            "last_big_blind": seating.last_big_blind,
            "last_heads_up": seating.last_heads_up,
            "remembered": {p: list(v) for p, v in seating.remembered.items()},
        },
        sort_keys=True,
    )


def load(seating: Seating, text: str) -> None:
    """Restore ``seating`` (fresh, same table shape) from :func:`dump` output."""
    data = json.loads(text)
    seating.seats = {}
    for raw in data["seats"]:
        state = SeatState(**{k: raw[k] for k in _SEAT_FIELDS if k in raw})
        seating.seats[state.seat] = state
    seating.last_button = data["last_button"]
    seating.last_small_blind_seat = data["last_small_blind_seat"]
    seating.last_big_blind = data["last_big_blind"]
    seating.last_heads_up = data["last_heads_up"]
    seating.remembered = {p: (bool(v[0]), bool(v[1])) for p, v in data["remembered"].items()}
