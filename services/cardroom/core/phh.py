"""PHH (Poker Hand History, TOML) export and replay for engine hands. Pure: strings in/out.

Players ``p1..pN`` are in dealing order: first seat left of the button, the button last
(heads-up: p1 = big blind, p2 = button/small blind, pokerkit's convention); Stud/Soko in
ascending seat order. Standard fields written: ``variant``, ``antes``,
``blinds_or_straddles`` (blind games), ``bring_in`` (Stud/Soko), ``small_bet``/``big_bet``
(limit) or ``min_bet`` (big-bet), ``starting_stacks``, ``actions``, ``players``, ``seats``,
``finishing_stacks``. Actions: ``d dh pK cards``, ``d db cards``, ``pK f``, ``pK cc``,
``pK cbr N`` (bet/raise/complete *to* N), ``pK pb`` (bring-in), ``pK sd cards`` (discard;
replacements follow as ``d dh``), ``pK sm cards`` (shown at showdown), ``pK sm`` (mucked at showdown; the cards are in the
``d dh`` lines).

User-defined fields (leading underscore, as PHH prescribes) where PHH has no concept:

* ``_cardroom_variant``  our variant code (``FSK`` Soko, ``F5CD`` 5-card draw, ``ST``
  spread-limit, ``HT`` half-pot-limit...); ``variant`` holds the same code, which pokerkit
  reads only for its own games (NT, FT, PO, FO/8, F7S, F7S/8, F2L3D).
* ``_button_seat``       the button's seat (may be a seat not dealt in: dead button).
* ``_dead_blinds``       dead money posted per player (missed blinds), not part of the bet.
* ``_spread_maxima``     spread-limit maximum per round.
* ``_max_bets``          bets per round in limit games (0 = no cap).
* ``_artificial_all_in`` ``[[action_index, player_number], ...]``: artificial all-ins
  (rules/002, 003; :meth:`cardroom.core.engine.Hand.artificial_all_in`). Player
  ``p<player_number>``, on turn, was treated as all-in for what he had put in just before
  ``actions[action_index]`` (``len(actions)`` if nothing followed); it has no action line
  of its own (PHH has no such action). He acts no more, later bets go to side pots without
  him, and the chips he did not put in stay his: ``finishing_stacks`` include them. Replay
  applies it at that point. (Readers that ignore it, e.g. pokerkit 0.7.7, load the file but
  cannot play these hands to the end.) A list of plain seat numbers is the old table-layer
  marker (stack set to 0, a ``cc`` line for nothing): such records cannot be replayed
  exactly and raise :class:`PHHError`.
* ``_rake``              chips a table took as rake (written by the table layer); replay takes
  the same amount again, so the finishing stacks match the record.
* ``_blind_counts_as_bet`` / ``_open_fold`` / ``_stud_double_on_open_pair`` /
  ``_odd_chip_one_each``  the rule settings of :class:`cardroom.core.engine.Options`.

Unknown hole cards (``????``) are replayed with stand-in cards as long as the player does not
reach the showdown (a showdown needs his real cards: :class:`PHHError`).

A file without ``_cardroom_variant`` is *foreign* (e.g. written by pokerkit): it is replayed
under pokerkit's conventions (big blind not counted toward the cap, fold only facing a bet,
no Stud double bet, all odd chips to the first winner), so its finishing stacks agree with
the program that wrote it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardroom.core.cards import DECK, Card, parse_cards
from cardroom.core.engine import (
    ActionKind, ActionTaken, ArtificialAllIn, BoardDealt, CardsDealt, DrawMade, ForcedBet, ForcedBetPosted,
    ForcedKind, Hand, HandMucked, HandShown, Options, ScriptedSource, SeatIn, Stakes, Structure, StubReshuffled,
    Variant,
)

POKERKIT_OPTIONS = Options(open_fold=False, odd_chip_one_each=False, stud_double_on_open_pair=False,
                           full_big_blind_when_short=False)
"""Rule settings under which our hands match pokerkit's; each is a deliberate house-rule
difference: fold only facing a bet (rules/002 lets a player always fold), all odd chips to
the first winner (rules/000: one each), no Stud double bet on an open pair (rules/003
'Special rules'), a short all-in big blind lowers the price to call (rules/000: the full
blind is the price). The big blind counting toward the cap is ``Stakes.blind_counts_as_bet``."""


def _cards(cards: tuple[Card, ...] | list[Card]) -> str:
    return "".join(str(c) for c in cards)


def actions_of(hand: Hand) -> list[str]:
    """The PHH action lines of ``hand`` (as far as it has been played)."""
    return _actions(hand)[0]


def _actions(hand: Hand) -> tuple[list[str], list[list[int]]]:
    """The PHH action lines and the ``_artificial_all_in`` entries of ``hand``."""
    lines: list[str] = []
    all_ins: list[list[int]] = []
    pending_draw: list[str] = []
    last_dealt: tuple[int, int] | None = None  # (seat, line index) to merge down+up cards
    p = hand.position
    for ev in hand.events:
        if pending_draw and not isinstance(ev, (DrawMade, StubReshuffled)):
            lines.extend(pending_draw)
            pending_draw = []
        if isinstance(ev, CardsDealt):
            if last_dealt is not None and last_dealt[0] == ev.seat and last_dealt[1] == len(lines) - 1:
                lines[-1] += _cards(ev.cards)
            else:
                lines.append(f"d dh p{p(ev.seat) + 1} {_cards(ev.cards)}")
            last_dealt = (ev.seat, len(lines) - 1)
            continue
        last_dealt = None
        if isinstance(ev, BoardDealt):
            lines.append(f"d db {_cards(ev.cards)}")
        elif isinstance(ev, ActionTaken):
            k = ev.kind
            who = f"p{p(ev.seat) + 1}"
            if k is ActionKind.FOLD:
                lines.append(f"{who} f")
            elif k is ActionKind.CHECK or k is ActionKind.CALL:
                lines.append(f"{who} cc")
            elif k is ActionKind.BRING_IN:
                lines.append(f"{who} pb")
            else:
                lines.append(f"{who} cbr {ev.to}")
        elif isinstance(ev, DrawMade):
            who = f"p{p(ev.seat) + 1}"
            lines.append(f"{who} sd {_cards(ev.discarded)}".rstrip())
            if ev.received:
                pending_draw.append(f"d dh {who} {_cards(ev.received)}")
        elif isinstance(ev, HandShown):
            lines.append(f"p{p(ev.seat) + 1} sm {_cards(ev.cards)}")
        elif isinstance(ev, HandMucked):
            lines.append(f"p{p(ev.seat) + 1} sm")
        elif isinstance(ev, ArtificialAllIn):
            all_ins.append([len(lines), p(ev.seat) + 1])
    lines.extend(pending_draw)
    return lines, all_ins


def to_fields(hand: Hand, /, **metadata: Any) -> dict[str, Any]:
    """The PHH fields of ``hand`` as a dict (TOML-ready)."""
    v = hand.variant
    st = hand.stakes
    n = hand.n
    antes = [0] * n
    dead_antes = [0] * n
    blinds = [0] * n
    dead = [0] * n
    for ev in hand.events:
        if isinstance(ev, ForcedBetPosted) and ev.kind is ForcedKind.DEAD_BLIND:
            dead[hand.position(ev.seat)] += ev.amount
    # nominal forced bets (a short stack posts what it has; PHH states the nominal amount)
    for fb in hand.nominal_forced:
        i = hand.position(fb.seat)
        if fb.kind is ForcedKind.ANTE:
            antes[i] += fb.amount
        elif fb.kind is ForcedKind.DEAD_ANTE:
            antes[i] += fb.amount
            dead_antes[i] += fb.amount
        elif fb.kind in (ForcedKind.SMALL_BLIND, ForcedKind.BIG_BLIND, ForcedKind.STRADDLE):
            blinds[i] += fb.amount
    # PHH (pokerkit): ante_trimming_status = false makes every ante dead money in the main
    # pot; true makes antes each player's own contribution (uniform antes)
    trimming = not any(dead_antes)
    mixed = any(dead_antes) and dead_antes != antes
    if n == 2:  # PHH/pokerkit list heads-up blinds and antes as [small, big]
        blinds = blinds[::-1]
        antes = antes[::-1]
        dead_antes = dead_antes[::-1]
    f: dict[str, Any] = {"variant": v.code, "ante_trimming_status": trimming, "antes": antes}
    if v.spec.uses_button:
        f["blinds_or_straddles"] = blinds
    else:
        f["bring_in"] = st.bring_in
    if v.structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT):
        f["small_bet"] = st.small_bet
        f["big_bet"] = st.big_bet
    else:
        f["min_bet"] = st.min_bet
        if v.spec.is_stud_like:  # big-bet Stud/Soko: the full bet that replaces the bring-in
            f["small_bet"] = st.small_bet
            f["big_bet"] = st.big_bet
    f["starting_stacks"] = list(hand.starting_stacks)
    f["actions"], all_ins = _actions(hand)
    f["players"] = list(hand.players)
    f["seats"] = list(hand.seats)
    if hand.is_over:
        f["finishing_stacks"] = list(hand.stacks)
    f.update(metadata)
    o = hand.options
    f["_cardroom_variant"] = v.code
    if hand.button is not None:
        f["_button_seat"] = hand.button
    if any(dead):
        f["_dead_blinds"] = dead
    if mixed:
        f["_dead_antes"] = dead_antes
    if st.chip != 1:
        f["_chip"] = st.chip
    if all_ins:
        f["_artificial_all_in"] = all_ins
    if st.spread_maxima:
        f["_spread_maxima"] = list(st.spread_maxima)
    f["_max_bets"] = st.max_bets or 0
    f["_blind_counts_as_bet"] = st.blind_counts_as_bet
    f["_open_fold"] = o.open_fold
    f["_stud_double_on_open_pair"] = o.stud_double_on_open_pair
    f["_odd_chip_one_each"] = o.odd_chip_one_each
    f["_full_big_blind_when_short"] = o.full_big_blind_when_short
    return f


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_value(value: Any) -> str:
    """A PHH (TOML) value: bool, int, finite float, str (a basic string, escaped) or a list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise TypeError(f"cannot write {value!r} to PHH")
        return repr(value)
    if isinstance(value, str):
        out = []
        for ch in value:
            if ch in _ESCAPES:
                out.append(_ESCAPES[ch])
            elif ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04X}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in value) + "]"
    raise TypeError(f"cannot write {value!r} to PHH")


def dumps_fields(fields: Mapping[str, Any]) -> str:
    """PHH fields as TOML text, one ``key = value`` line each: the one PHH/TOML writer
    (hands, table records, dealer records all go through it)."""
    for key in fields:
        if not key.replace("_", "a").isalnum() or not key.isascii():
            raise TypeError(f"cannot write the PHH key {key!r}")
    return "".join(f"{k} = {toml_value(v)}\n" for k, v in fields.items())


def dumps(hand: Hand, /, **metadata: Any) -> str:
    """The hand as PHH TOML text."""
    return dumps_fields(to_fields(hand, **metadata))


@dataclass(frozen=True, slots=True)
class Replay:
    """A replayed hand history: the finished hand and the file's own finishing stacks."""

    hand: Hand
    fields: Mapping[str, Any]

    @property
    def finishing_stacks(self) -> list[int]:
        return list(self.hand.stacks)


class PHHError(ValueError):
    """A hand history that cannot be replayed (unknown variant, unknown cards, bad action)."""


def _artificial_all_ins(value: Any, n: int) -> list[tuple[int, int]]:
    """``_artificial_all_in`` as (action index, player position), in order."""
    if not value:
        return []
    entries: list[tuple[int, int]] = []
    for entry in value:
        if not isinstance(entry, list):
            raise PHHError("_artificial_all_in lists seats (the old table-layer marker): "
                           "the hand cannot be replayed exactly")
        if len(entry) != 2 or not all(isinstance(x, int) and not isinstance(x, bool) for x in entry) \
                or not 1 <= entry[1] <= n or entry[0] < 0:
            raise PHHError(f"_artificial_all_in entry {entry!r}: expected [action_index, player_number]")
        entries.append((entry[0], entry[1] - 1))
    return sorted(entries, key=lambda e: e[0])


def _artificial_all_in(hand: Hand, seat: int) -> None:
    if hand.is_over:
        raise PHHError(f"artificial all-in of seat {seat} after the end of the hand")
    hand.artificial_all_in(seat)


def loads(text: str, options: Options | None = None) -> Replay:
    """Replay PHH ``text`` through the engine; ``options`` overrides the rule settings."""
    return replay_fields(tomllib.loads(text), options)


def replay_fields(f: Mapping[str, Any], options: Options | None = None) -> Replay:
    """Replay parsed PHH fields (see :func:`loads`)."""
    code = f.get("_cardroom_variant", f.get("variant"))
    try:
        variant = Variant.parse(str(code))
    except ValueError as exc:
        raise PHHError(str(exc)) from None
    ours = "_cardroom_variant" in f
    stacks = [int(x) for x in f["starting_stacks"]]
    n = len(stacks)
    antes = list(f.get("antes") or [0] * n)
    blinds = list(f.get("blinds_or_straddles") or [0] * n)
    if isinstance(antes, int):
        antes = [antes] * n
    if n == 2:
        antes, blinds = antes[::-1], blinds[::-1]
    dead = list(f.get("_dead_blinds") or [0] * n)
    structure = variant.structure
    limit = structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)
    nonzero = sorted(b for b in blinds if b)
    big_blind = nonzero[-1] if nonzero else 0
    small_blind = nonzero[0] if len(nonzero) > 1 else 0
    max_bets = f.get("_max_bets", 4)
    stakes = Stakes(
        small_blind=small_blind,
        big_blind=big_blind if limit or not f.get("min_bet") else int(f["min_bet"]),
        small_bet=int(f.get("small_bet") or f.get("min_bet") or big_blind),
        big_bet=int(f.get("big_bet") or f.get("min_bet") or big_blind),
        ante=0,
        chip=int(f.get("_chip") or 1),
        bring_in=int(f.get("bring_in") or 0),
        spread_maxima=tuple(f.get("_spread_maxima") or ()),
        max_bets=max_bets or None,
        blind_counts_as_bet=bool(f.get("_blind_counts_as_bet", False)),
    )
    if options is None:
        if ours:
            options = Options(
                open_fold=bool(f.get("_open_fold", True)),
                odd_chip_one_each=bool(f.get("_odd_chip_one_each", True)),
                stud_double_on_open_pair=bool(f.get("_stud_double_on_open_pair", True)),
                full_big_blind_when_short=bool(f.get("_full_big_blind_when_short", False)),
            )
        else:
            options = POKERKIT_OPTIONS
    seats = [int(s) for s in f.get("seats") or range(1, n + 1)]
    players = [str(x) for x in f.get("players") or [f"p{i + 1}" for i in range(n)]]
    button = f.get("_button_seat")
    if button is None and variant.spec.uses_button:
        button = seats[-1]
    # ante_trimming_status (PHH): false = every ante is dead money in the main pot (pokerkit's
    # default; big-blind antes in tournament records); true = antes are each player's own
    # contribution, an ante above the second-largest one given back at once (pokerkit's
    # trimming). Our own records without the field are from before it: live antes.
    trimming = f.get("ante_trimming_status")
    if trimming is None:
        trimming = ours
    dead_antes = list(f.get("_dead_antes") or ([] if trimming else antes))
    if n == 2 and f.get("_dead_antes"):
        dead_antes = dead_antes[::-1]
    dead_antes = [int(x) for x in dead_antes] or [0] * n
    live_antes = [int(a) - d for a, d in zip(antes, dead_antes)]
    if trimming and not f.get("_dead_antes") and sum(1 for a in live_antes if a) > 0:
        effective = sorted(min(a, s) for a, s in zip(live_antes, stacks))
        cutoff = effective[-2] if n > 1 else effective[-1]
        live_antes = [min(a, cutoff) for a in live_antes]
    forced: list[ForcedBet] = []
    for i in range(n):
        if live_antes[i]:
            forced.append(ForcedBet(seats[i], ForcedKind.ANTE, live_antes[i]))
        if dead_antes[i]:
            forced.append(ForcedBet(seats[i], ForcedKind.DEAD_ANTE, dead_antes[i]))
        if dead[i]:
            forced.append(ForcedBet(seats[i], ForcedKind.DEAD_BLIND, int(dead[i])))
    blind_kinds = [ForcedKind.SMALL_BLIND, ForcedKind.BIG_BLIND]
    posted = [(i, b) for i, b in enumerate(blinds) if b]
    if len(posted) == 1:
        blind_kinds = [ForcedKind.BIG_BLIND]
    for k, (i, b) in enumerate(posted):
        kind = blind_kinds[k] if k < len(blind_kinds) else ForcedKind.STRADDLE
        forced.append(ForcedBet(seats[i], kind, int(b)))
    if n == 2 and len(posted) == 2:
        # heads-up: position 1 (button) posts the small blind, position 0 the big blind
        forced = [fb for fb in forced if fb.kind not in blind_kinds] + [
            ForcedBet(seats[1], ForcedKind.SMALL_BLIND, int(blinds[1])),
            ForcedBet(seats[0], ForcedKind.BIG_BLIND, int(blinds[0]))]
    holes: dict[int, list[Card]] = {s: [] for s in seats}
    unknown: list[tuple[int, int]] = []
    board: list[Card] = []
    moves: list[tuple[int, str, list[str], int]] = []
    for index, line in enumerate(f["actions"]):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "d":
            if words[1] == "dh":
                who = int(words[2][1:]) - 1
                text = words[3] if len(words) > 3 else ""
                for k in range(0, len(text), 2):
                    token = text[k:k + 2]
                    if "?" in token:
                        unknown.append((seats[who], len(holes[seats[who]])))
                        holes[seats[who]].append(None)  # type: ignore[arg-type]
                    else:
                        holes[seats[who]].append(Card.parse(token))
            elif words[1] == "db":
                board.extend(parse_cards(words[2]))
            continue
        moves.append((int(words[0][1:]) - 1, words[1], words[2:], index))
    if unknown:
        # unknown hole cards ("??"): stand-in cards nobody else holds; fine unless the hand
        # reaches a showdown that needs them (checked below)
        used = {c.index for cs in holes.values() for c in cs if c is not None} | {c.index for c in board}
        spare = [c for c in DECK if c.index not in used]
        for (seat, k), card in zip(unknown, spare):
            holes[seat][k] = card
    taken = int(f.get("_rake") or 0)   # a table's recorded rake (dealer records): take it again
    hand = Hand(variant, stakes, [SeatIn(seats[i], players[i], stacks[i]) for i in range(n)],
                button, ScriptedSource(holes, board),
                forced, options=options, rake=(lambda _hand, total: min(taken, total)) if taken else None)
    all_ins = _artificial_all_ins(f.get("_artificial_all_in"), n)
    for who, op, args, index in moves:
        while all_ins and all_ins[0][0] <= index:
            _artificial_all_in(hand, seats[all_ins.pop(0)[1]])
        if op == "sm":
            continue
        if hand.is_over:
            raise PHHError(f"action after the end of the hand: p{who + 1} {op}")
        seat = seats[who]
        if op == "f":
            hand.act(ActionKind.FOLD, seat=seat)
        elif op == "cc":
            la = hand.legal_actions()
            kind = ActionKind.CALL if la is not None and ActionKind.CALL in la.kinds else ActionKind.CHECK
            hand.act(kind, seat=seat)
        elif op == "cbr" and hand.legal_actions() is not None and hand.legal_actions().kinds == {ActionKind.BRING_IN}:
            hand.act(ActionKind.BRING_IN, seat=seat)  # pokerkit writes a short all-in bring-in as cbr
        elif op == "cbr":
            la = hand.legal_actions()
            kinds = la.kinds if la is not None else frozenset()
            kind = next((k for k in (ActionKind.COMPLETE, ActionKind.BET, ActionKind.RAISE) if k in kinds),
                        ActionKind.RAISE)
            hand.act(kind, int(args[0]), seat=seat)
        elif op == "pb":
            hand.act(ActionKind.BRING_IN, seat=seat)
        elif op == "sd":
            hand.act(ActionKind.DRAW, discards=parse_cards(args[0]) if args else (), seat=seat)
        else:
            raise PHHError(f"unknown action {op!r}")
    for _, who in all_ins:
        _artificial_all_in(hand, seats[who])
    if not hand.is_over:
        raise PHHError("the hand history ends before the hand does")
    if unknown and hand.showdown_order:
        stand_ins = {seat for seat, _ in unknown}
        if stand_ins & set(hand.showdown_order):
            raise PHHError("unknown hole cards ('??') of a player who reached the showdown")
    return Replay(hand, f)
