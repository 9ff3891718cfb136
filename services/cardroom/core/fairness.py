"""Verify a dealt hand against its revealed shuffle seed (``cardroom verify-hand``).

A dealer hand record is PHH text with three extra fields: ``_seed`` (hex, revealed after
the hand), ``_commitment`` (SHA-256 hex of the seed, published when the hand started) and
``_hand_id``. The check:

1. the commitment is the SHA-256 of the seed;
2. the hand replays through the engine (a well-formed record);
3. dealing the same hand again from ``deck_from_seed(seed)`` with the record's own player
   actions gives exactly the record's dealt cards, in order (hole cards, board, draws).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cardroom.core import phh
from cardroom.core.engine import (
    ActionKind,
    ActionTaken,
    ArtificialAllIn,
    DrawMade,
    ForcedBet,
    ForcedBetPosted,
    Hand,
    IllegalAction,
    SeatIn,
)
from cardroom.core.engine.dealing import DeckSource
from cardroom.core.shuffle import commitment, deck_from_seed, reshuffle_seed

_TO_AMOUNT = frozenset((ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome for one hand record: ``ok`` and the problems found."""

    hand_id: str
    ok: bool
    problems: tuple[str, ...] = field(default=())


def _dealt_lines(actions: list[str]) -> list[str]:
    lines = (a.split("#", 1)[0].strip() for a in actions)
    return [line for line in lines if line.startswith("d ")]


def _redeal(record: Hand, seed: bytes) -> Hand:
    """The record's hand dealt again from the seed's deck with the record's actions."""
    forced = [ForcedBet(e.seat, e.kind, e.amount) for e in record.events if isinstance(e, ForcedBetPosted)]
    seats = [SeatIn(s, p, c) for s, p, c in zip(record.seats, record.players, record.starting_stacks, strict=True)]
    hand = Hand(
        record.variant,
        record.stakes,
        seats,
        record.button,
        DeckSource(deck_from_seed(seed), reshuffle_seed(seed)),
        forced,
        options=record.options,
    )
    for ev in record.events:
        if isinstance(ev, ActionTaken):
            hand.act(ev.kind, ev.to if ev.kind in _TO_AMOUNT else None, seat=ev.seat)
        elif isinstance(ev, DrawMade):
            hand.act(ActionKind.DRAW, discards=ev.discarded, seat=ev.seat)
        elif isinstance(ev, ArtificialAllIn):
            hand.artificial_all_in(ev.seat)
    return hand


def verify_fields(fields: Mapping[str, Any]) -> Verdict:
    """Check one parsed hand record (see the module docstring)."""
    hand_id = str(fields.get("_hand_id", fields.get("hand", "?")))
    seed_hex, committed = fields.get("_seed"), fields.get("_commitment")
    if not isinstance(seed_hex, str) or not isinstance(committed, str):
        return Verdict(hand_id, False, ("the record has no _seed / _commitment",))
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:
        return Verdict(hand_id, False, ("_seed is not hex",))
    problems: list[str] = []
    if commitment(seed) != committed.lower():
        problems.append("the commitment is not the SHA-256 of the revealed seed")
    try:
        record = phh.replay_fields(fields).hand
    except (phh.PHHError, IllegalAction, KeyError, ValueError) as exc:
        return Verdict(hand_id, False, (*problems, f"the record does not replay: {exc}"))
    try:
        redealt = _redeal(record, seed)
    except (IllegalAction, ValueError) as exc:
        return Verdict(hand_id, False, (*problems, f"the seed's deck does not deal this hand: {exc}"))
    want = _dealt_lines(list(fields.get("actions", [])))
    got = _dealt_lines(phh.actions_of(redealt))
    if want != got:
        # the lists may differ in length: the first difference, or where the shorter one ends
        first = next((i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))
        shown = want[first] if first < len(want) else "(nothing)"
        expected = got[first] if first < len(got) else "(nothing)"
        problems.append(f"dealt card line {first + 1} is {shown!r}; the seed's deck deals {expected!r}")
    return Verdict(hand_id, not problems, tuple(problems))


def verify_text(text: str) -> list[Verdict]:
    """Check every hand in PHH ``text`` (one hand, or several as TOML tables)."""
    try:
        fields = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [Verdict("?", False, (f"not TOML: {exc}",))]
    if "actions" in fields:
        return [verify_fields(fields)]
    hands = [v for v in fields.values() if isinstance(v, dict) and "actions" in v]
    if not hands:
        return [Verdict("?", False, ("no hand record found",))]
    return [verify_fields(h) for h in hands]
