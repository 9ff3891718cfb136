"""PHH (Poker Hand History, TOML) export and replay for engine hands. Pure: strings in/out.

Players ``p1..pN`` are in dealing order: first seat left of the button, the button last
(heads-up: p1 = big blind, p2 = button/small blind, pokerkit's convention); Stud/Soko in
ascending seat order. Standard fields written: ``variant``, ``antes``,
``blinds_or_straddles`` (blind games), ``bring_in`` (Stud/Soko), ``small_bet``/``big_bet``
(limit) or ``min_bet`` (big-bet), ``starting_stacks``, ``actions``, ``players``, ``seats``,
``finishing_stacks``. Actions: ``d dh pK cards``, ``d db cards``, ``pK f``, ``pK cc``,
``pK cbr N`` (bet/raise/complete *to* N), ``pK pb`` (bring-in), ``pK sd cards`` (discard;
replacements follow as ``d dh``), ``pK sm cards`` (shown at showdown), ``pK sm`` (mucked at
showdown; the cards are in the ``d dh`` lines).

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
  ``_odd_chip_one_each`` / ``_full_big_blind_when_short`` /
  ``_stud_open_pair_big_bet_mandatory``  the rule settings of :class:`cardroom.core.engine.Options`.
* ``_dead_antes``        dead antes per player when a hand mixes them with live antes
  (otherwise ``ante_trimming_status`` says it: false = every ante dead, DEAD_ANTE posts).
* ``_chip``              the table's chip denomination (``Stakes.chip``) when not 1.

``ante_trimming_status`` (standard PHH) is written on every hand: false when the antes are
dead money (big-blind/button antes), true when they are each player's own contribution.

Unknown hole cards (``????``) are replayed with stand-in cards as long as the player does not
reach the showdown (a showdown needs his real cards: :class:`PHHError`).

A file without ``_cardroom_variant`` is *foreign* (e.g. written by pokerkit): it is replayed
under pokerkit's conventions (big blind not counted toward the cap, fold only facing a bet,
no Stud double bet, all odd chips to the first winner), so its finishing stacks agree with
the program that wrote it.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cardroom.core.cards import DECK, Card, parse_cards
from cardroom.core.engine import (
    ActionKind,
    ActionTaken,
    ArtificialAllIn,
    BoardDealt,
    CardsDealt,
    DrawMade,
    ForcedBet,
    ForcedBetPosted,
    ForcedKind,
    Hand,
    HandMucked,
    HandShown,
    IllegalAction,
    Options,
    Reason,
    ScriptedSource,
    SeatIn,
    Stakes,
    Structure,
    StubReshuffled,
    Variant,
)

POKERKIT_OPTIONS = Options(
    open_fold=False, odd_chip_one_each=False, stud_double_on_open_pair=False, full_big_blind_when_short=False
)
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
    if o.stud_open_pair_big_bet_mandatory:
        f["_stud_open_pair_big_bet_mandatory"] = True
    return f


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_value(value: Any) -> str:
    """A PHH (TOML) value: bool, int, finite float, str (a basic string, escaped) or a list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
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
    """A replayed hand history: the finished hand and the file's own fields."""

    hand: Hand
    fields: Mapping[str, Any]

    @property
    def finishing_stacks(self) -> list[int]:
        return list(self.hand.stacks)

    @property
    def recorded_finishing_stacks(self) -> list[int] | None:
        """The record's own ``finishing_stacks`` (None if it has none)."""
        recorded = self.fields.get("finishing_stacks")
        return None if recorded is None else [int(x) for x in recorded]

    @property
    def agrees(self) -> bool | None:
        """True if the replay ends with the record's ``finishing_stacks`` (None: not recorded)."""
        recorded = self.recorded_finishing_stacks
        return None if recorded is None else recorded == self.finishing_stacks


class PHHError(ValueError):
    """A hand history that cannot be replayed (unknown variant, unknown cards, bad action,
    fractional amounts). ``file`` and ``action_index`` (into ``actions``) say where, when known;
    ``reason`` is the engine's :class:`~cardroom.core.engine.Reason` for an illegal action."""

    def __init__(
        self,
        message: str,
        *,
        file: str = "",
        action_index: int | None = None,
        action: str = "",
        reason: Reason | None = None,
    ) -> None:
        where = []
        if file:
            where.append(file)
        if action_index is not None:
            where.append(f"action {action_index}" + (f" {action!r}" if action else ""))
        super().__init__(": ".join(where + [message]))
        self.file = file
        self.action_index = action_index
        self.reason = reason


def _artificial_all_ins(value: Any, n: int) -> list[tuple[int, int]]:
    """``_artificial_all_in`` as (action index, player position), in order."""
    if not value:
        return []
    entries: list[tuple[int, int]] = []
    for entry in value:
        if not isinstance(entry, list):
            raise PHHError(
                "_artificial_all_in lists seats (the old table-layer marker): the hand cannot be replayed exactly"
            )
        if (
            len(entry) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in entry)
            or not 1 <= entry[1] <= n
            or entry[0] < 0
        ):
            raise PHHError(f"_artificial_all_in entry {entry!r}: expected [action_index, player_number]")
        entries.append((entry[0], entry[1] - 1))
    return sorted(entries, key=lambda e: e[0])


def loads(text: str, options: Options | None = None, *, source: str = "") -> Replay:
    """Replay PHH ``text`` through the engine; ``options`` overrides the rule settings;
    ``source`` (a file name) goes into the :class:`PHHError` messages."""
    try:
        fields = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PHHError(f"not TOML: {exc}", file=source) from None
    return replay_fields(fields, options, source=source)


def _amount(value: Any, name: str, source: str) -> int:
    """A chip amount: an integer (a float only if it is a whole number). Fractional chips are
    refused: the engine counts whole chips (scale such a record to its smallest unit)."""
    if isinstance(value, bool):
        raise PHHError(f"{name}: {value!r} is not an amount", file=source)
    if isinstance(value, (int, float)) and value < 0:
        raise PHHError(f"{name}: negative amount {value!r}", file=source)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, (float, str)):
        raise PHHError(
            f"{name}: fractional amount {value!r}: chips are whole numbers here "
            "(scale the record to its smallest unit)",
            file=source,
        )
    raise PHHError(f"{name}: {value!r} is not an amount", file=source)


def _amounts(values: Any, n: int, name: str, source: str) -> list[int]:
    if values is None:
        return [0] * n
    if isinstance(values, (int, float)) and not isinstance(values, bool):
        return [_amount(values, name, source)] * n
    out = [_amount(v, name, source) for v in values]
    if len(out) != n:
        raise PHHError(f"{name}: {len(out)} values for {n} players", file=source)
    return out


def _tokens(text: str) -> list[str]:
    return [text[k : k + 2] for k in range(0, len(text), 2)]


def replay_fields(f: Mapping[str, Any], options: Options | None = None, *, source: str = "") -> Replay:
    """Replay parsed PHH fields (see :func:`loads`).

    Real-world records (pokerkit's test records, the Pluribus and WSOP sets) are read as
    pokerkit reads them: ``ante_trimming_status`` (see :func:`to_fields`), straddles (a
    blind above the big blind; one equal to it is a second live big blind), ``min_bet``,
    cards dealt one line at a time, unknown cards ``??`` (stand-ins nobody else holds; a
    discarded ``??`` is one of them; cards shown at the showdown replace them; ``pK sm``
    without cards mucks the hand), the record's own bring-in (``pb``, or a ``cbr`` first
    action in Stud, decides who brings in: his up-card may be unknown), and a foreign
    record's missing action of a player on turn (pokerkit's repair: he checks if he can,
    else folds)."""
    code = f.get("_cardroom_variant", f.get("variant"))
    try:
        variant = Variant.parse(str(code))
    except ValueError as exc:
        raise PHHError(f"{exc} (not a game of the house rules)", file=source) from None
    ours = "_cardroom_variant" in f
    if "starting_stacks" not in f or "actions" not in f:
        raise PHHError("a hand history needs starting_stacks and actions", file=source)
    stacks = [_amount(x, "starting_stacks", source) for x in f["starting_stacks"]]
    n = len(stacks)
    if n < 2:
        raise PHHError("a hand needs at least two players", file=source)
    antes = _amounts(f.get("antes"), n, "antes", source)
    blinds = _amounts(f.get("blinds_or_straddles"), n, "blinds_or_straddles", source)
    if n == 2:
        antes, blinds = antes[::-1], blinds[::-1]
    dead = _amounts(f.get("_dead_blinds"), n, "_dead_blinds", source)
    structure = variant.structure
    limit = structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)
    posted = [(i, b) for i, b in enumerate(blinds) if b]
    if n == 2 and len(posted) == 2:
        posted = [posted[1], posted[0]]  # heads-up: the button (position 1) posts the small blind
    if len(posted) >= 2:
        small_blind, big_blind = posted[0][1], posted[1][1]
    else:
        small_blind, big_blind = 0, (posted[0][1] if posted else 0)
    min_bet = _amount(f.get("min_bet") or 0, "min_bet", source)
    max_bets = f.get("_max_bets", 4)
    try:
        stakes = Stakes(
            small_blind=small_blind,
            big_blind=big_blind if limit or not min_bet else min_bet,
            small_bet=_amount(f.get("small_bet") or min_bet or big_blind, "small_bet", source),
            big_bet=_amount(f.get("big_bet") or min_bet or big_blind, "big_bet", source),
            ante=0,
            bring_in=_amount(f.get("bring_in") or 0, "bring_in", source),
            spread_maxima=tuple(_amount(x, "_spread_maxima", source) for x in f.get("_spread_maxima") or ()),
            max_bets=max_bets or None,
            blind_counts_as_bet=bool(f.get("_blind_counts_as_bet", False)),
            chip=_amount(f.get("_chip") or 1, "_chip", source),
        )
    except ValueError as exc:
        raise PHHError(str(exc), file=source) from None
    if options is None:
        if ours:
            options = Options(
                open_fold=bool(f.get("_open_fold", True)),
                odd_chip_one_each=bool(f.get("_odd_chip_one_each", True)),
                stud_double_on_open_pair=bool(f.get("_stud_double_on_open_pair", True)),
                full_big_blind_when_short=bool(f.get("_full_big_blind_when_short", False)),
                stud_open_pair_big_bet_mandatory=bool(f.get("_stud_open_pair_big_bet_mandatory", False)),
            )
        else:
            options = POKERKIT_OPTIONS
    seats = [int(x) for x in f.get("seats") or range(1, n + 1)]
    players = [str(x) for x in f.get("players") or [f"p{i + 1}" for i in range(n)]]
    if len(seats) != n or len(players) != n:
        raise PHHError(f"seats/players: {len(seats)}/{len(players)} entries for {n} players", file=source)
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
    if f.get("_dead_antes"):
        dead_antes = _amounts(f["_dead_antes"], n, "_dead_antes", source)
        if n == 2:
            dead_antes = dead_antes[::-1]
    else:
        dead_antes = [0] * n if trimming else list(antes)
    live_antes = [a - d for a, d in zip(antes, dead_antes, strict=True)]
    if trimming and not f.get("_dead_antes") and any(live_antes):
        effective = sorted(min(a, st) for a, st in zip(live_antes, stacks, strict=True))
        cutoff = effective[-2]
        live_antes = [min(a, cutoff) for a in live_antes]
    forced: list[ForcedBet] = []
    for i in range(n):
        if live_antes[i]:
            forced.append(ForcedBet(seats[i], ForcedKind.ANTE, live_antes[i]))
        if dead_antes[i]:
            forced.append(ForcedBet(seats[i], ForcedKind.DEAD_ANTE, dead_antes[i]))
        if dead[i]:
            forced.append(ForcedBet(seats[i], ForcedKind.DEAD_BLIND, dead[i]))
    for k, (i, b) in enumerate(posted):
        if k == 0 and len(posted) > 1:
            kind = ForcedKind.SMALL_BLIND
        elif k <= 1 or b <= big_blind:
            kind = ForcedKind.BIG_BLIND  # the big blind, or a second live big blind
        else:
            kind = ForcedKind.STRADDLE
        forced.append(ForcedBet(seats[i], kind, b))

    # ---- the action lines: cards first (every card the record names), then the moves
    holes: dict[int, list[Card | None]] = {s: [] for s in seats}
    board: list[Card] = []
    moves: list[tuple[int, str, list[str], int, str]] = []
    muckers: list[int] = []
    shown: dict[int, list[Card]] = {}
    raw = f["actions"]
    if not isinstance(raw, list):
        raise PHHError("actions: a list of action lines", file=source)

    def bad(message: str, index: int, line: str, reason: Reason | None = None) -> PHHError:
        return PHHError(message, file=source, action_index=index, action=line, reason=reason)

    def player(word: str, index: int, line: str) -> int:
        if len(word) < 2 or word[0] != "p" or not word[1:].isdigit() or not 1 <= int(word[1:]) <= n:
            raise bad(f"unknown player {word!r}", index, line)
        return int(word[1:]) - 1

    for index, line in enumerate(raw):
        if not isinstance(line, str):
            raise bad("an action line is a string", index, repr(line))
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:
            if words[0] == "d":
                if len(words) < 3:
                    raise bad("incomplete dealer action", index, line)
                if words[1] == "dh":
                    who = player(words[2], index, line)
                    for token in _tokens(words[3] if len(words) > 3 else ""):
                        holes[seats[who]].append(None if "?" in token else Card.parse(token))
                elif words[1] == "db":
                    board.extend(parse_cards(words[2]))
                else:
                    raise bad(f"unknown dealer action {words[1]!r}", index, line)
                continue
            who = player(words[0], index, line)
            if len(words) < 2:
                raise bad("incomplete player action", index, line)
            op = words[1]
            if op == "sm":
                if len(words) > 2:
                    shown[seats[who]] = [Card.parse(t) for t in _tokens(words[2]) if "?" not in t]
                else:
                    muckers.append(seats[who])
                continue
            if op not in ("f", "cc", "cbr", "pb", "sd"):
                raise bad(f"unknown action {op!r}", index, line)
            if op == "cbr" and (len(words) < 3):
                raise bad("cbr needs an amount", index, line)
            moves.append((who, op, words[2:], index, line))
        except ValueError as exc:
            if isinstance(exc, PHHError):
                raise
            raise bad(str(exc), index, line) from None
    # cards shown at the showdown reveal unknown hole cards
    for seat, cards in shown.items():
        known = {c.index for c in holes[seat] if c is not None}
        reveal = [c for c in cards if c.index not in known]
        slots = [k for k, c in enumerate(holes[seat]) if c is None]
        # a show may reveal fewer cards than are unknown: fill what it gives
        for k, card in zip(slots, reveal, strict=False):
            holes[seat][k] = card
    used = {c.index for cs in holes.values() for c in cs if c is not None} | {c.index for c in board}
    spare = iter([c for c in DECK if c.index not in used])
    stand_ins: dict[int, list[Card]] = {s: [] for s in seats}
    filled: dict[int, list[Card]] = {}
    for seat, dealt in holes.items():
        out: list[Card] = []
        for maybe in dealt:
            if maybe is None:
                try:
                    card = next(spare)
                except StopIteration:
                    raise PHHError("too many unknown cards to stand in for", file=source) from None
                stand_ins[seat].append(card)
            else:
                card = maybe
            out.append(card)
        filled[seat] = out
    bring_in_seat = None
    if variant.spec.is_stud_like and moves and moves[0][1] in ("pb", "cbr") and not ours:
        bring_in_seat = seats[moves[0][0]]
    taken = int(f.get("_rake") or 0)  # a table's recorded rake (dealer records): take it again
    try:
        hand = Hand(
            variant,
            stakes,
            [SeatIn(seats[i], players[i], stacks[i]) for i in range(n)],
            button,
            ScriptedSource(filled, board),
            forced,
            options=options,
            rake=(lambda _hand, total: min(taken, total)) if taken else None,
            bring_in_seat=bring_in_seat,
        )
    except IllegalAction as exc:
        raise PHHError(exc.message, file=source, reason=exc.reason) from None
    for seat in muckers:
        hand.muck_at_showdown(seat)
    all_ins = _artificial_all_ins(f.get("_artificial_all_in"), n)
    for who, op, args, index, line in moves:
        seat = seats[who]
        try:
            while all_ins and all_ins[0][0] <= index:
                _artificial_all_in(hand, seats[all_ins.pop(0)[1]])
            if not ours:
                _repair(hand, seat)
            if hand.is_over:
                raise bad("action after the end of the hand", index, line)
            _apply(hand, seat, op, args, stand_ins[seat])
        except IllegalAction as exc:
            raise bad(exc.message, index, line, exc.reason) from None
        except (ValueError, IndexError) as exc:
            if isinstance(exc, PHHError):
                raise
            raise bad(str(exc), index, line) from None
    try:
        for _, who in all_ins:
            _artificial_all_in(hand, seats[who])
    except IllegalAction as exc:
        raise PHHError(exc.message, file=source, reason=exc.reason) from None
    if not hand.is_over:
        raise PHHError("the hand history ends before the hand does", file=source)
    unknown = {seat for seat, cs in stand_ins.items() if cs}
    contested = set(hand.showdown_order) - set(muckers)
    if unknown & contested:
        raise PHHError("unknown hole cards ('??') of a player who reached the showdown and did not muck", file=source)
    return Replay(hand, f)


def _repair(hand: Hand, seat: int) -> None:
    """pokerkit's repair of a foreign record: players on turn before ``seat`` whose action is
    missing check if they can, else fold."""
    for _ in range(hand.n):
        la = hand.legal_actions()
        if la is None or la.seat == seat:
            return
        if ActionKind.CHECK in la.kinds:
            hand.act(ActionKind.CHECK, seat=la.seat)
        elif ActionKind.FOLD in la.kinds:
            hand.act(ActionKind.FOLD, seat=la.seat)
        else:
            return


def _apply(hand: Hand, seat: int, op: str, args: list[str], stand_ins: list[Card]) -> None:
    """One player action of a record (``f``, ``cc``, ``cbr N``, ``pb``, ``sd cards``)."""
    la = hand.legal_actions()
    kinds = la.kinds if la is not None else frozenset()
    if op == "f":
        hand.act(ActionKind.FOLD, seat=seat)
    elif op == "cc":
        hand.act(ActionKind.CALL if ActionKind.CALL in kinds else ActionKind.CHECK, seat=seat)
    elif op == "cbr" and kinds == {ActionKind.BRING_IN}:
        hand.act(ActionKind.BRING_IN, seat=seat)  # pokerkit writes a short all-in bring-in as cbr
    elif op == "cbr":
        kind = next(
            (k for k in (ActionKind.COMPLETE, ActionKind.BET, ActionKind.RAISE) if k in kinds), ActionKind.RAISE
        )
        try:
            amount = int(args[0])
        except ValueError:
            raise PHHError(f"cbr amount {args[0]!r}: chips are whole numbers here") from None
        hand.act(kind, amount, seat=seat)
    elif op == "pb":
        hand.act(ActionKind.BRING_IN, seat=seat)
    else:  # sd
        held = list(hand.hole_cards(seat))
        discards: list[Card] = []
        spare = [c for c in stand_ins if c in held]
        for token in _tokens(args[0] if args else ""):
            if "?" in token:
                if not spare:
                    raise PHHError("discards an unknown card he does not hold")
                discards.append(spare.pop(0))
            else:
                discards.append(Card.parse(token))
        hand.act(ActionKind.DRAW, discards=discards, seat=seat)


def _artificial_all_in(hand: Hand, seat: int) -> None:
    if hand.is_over:
        raise PHHError(f"artificial all-in of seat {seat} after the end of the hand")
    hand.artificial_all_in(seat)
