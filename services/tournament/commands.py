"""Commands on a core :class:`Tournament`, as JSON-ready dicts: the one place that applies them,
live and when the store replays them after a restart (the core is pure, so the same commands
give the same tournament)."""

from __future__ import annotations

import random
from typing import Any

from cardroom.core.cards import Card
from cardroom.core.engine import ActionKind
from cardroom.core.engine.simulation import shuffled_deck
from cardroom.core.tournament import Tournament

Command = dict[str, Any]


def deck_for(seed: int) -> list[Card]:
    """The deck of one hand: a shuffle driven by the hand's own seed (an input of the core)."""
    return shuffled_deck(random.Random(seed))


def apply(t: Tournament, cmd: Command) -> Any:
    """Apply ``cmd`` to ``t`` (the core's errors propagate; a command that raised is not logged)."""
    op, now = cmd["op"], float(cmd.get("now", 0.0))
    if op == "tick":
        return t.tick(now)
    if op == "register":
        return t.register(cmd["player"], now, via_satellite=bool(cmd.get("via_satellite", False)))
    if op == "unregister":
        return t.unregister(cmd["player"], now)
    if op == "rebuy":
        return t.rebuy(cmd["player"], now, double=bool(cmd.get("double", False)))
    if op == "add_on":
        return t.add_on(cmd["player"], now)
    if op == "decline_rebuy":
        return t.decline_rebuy(cmd["player"], now)
    if op == "start":
        return t.start(now)
    if op == "deal":
        return t.deal(int(cmd["table"]), deck_for(int(cmd["deck_seed"])), now)
    if op == "act":
        discards = [Card.parse(c) for c in cmd.get("discards", ())]
        amount = cmd.get("amount")
        return t.act(
            int(cmd["table"]),
            int(cmd["seat"]),
            ActionKind[cmd["kind"]],
            None if amount is None else int(amount),
            discards=discards,
            now=now,
        )
    if op == "sit_out":
        return t.sit_out(cmd["player"])
    if op == "come_back":
        return t.come_back(cmd["player"])
    if op == "cancel":
        return t.cancel(now)
    if op == "crash":
        return t.crash()
    if op == "roll_back":
        return t.roll_back(int(cmd["table"]))
    if op == "time_banks":  # {"table": n, "banks": {"seat": seconds left}}: as the dealer counted them
        return t.set_time_banks(int(cmd["table"]), {int(seat): float(left) for seat, left in cmd["banks"].items()})
    raise ValueError(f"unknown tournament command {op!r}")


__all__ = ["Command", "apply", "deck_for"]
