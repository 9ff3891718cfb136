"""A finished hand as PokerStars-format hand history text (for tracking tools). Pure.

Tracking tools (PokerTracker, Hold'em Manager...) read the PokerStars text format. The text
is built from the engine's events of a finished :class:`~cardroom.core.engine.Hand`, in the
order they happened, with PokerStars' wording:

* header ``PokerStars Hand #N:  <game> (<stakes>) - YYYY/MM/DD HH:MM:SS TZ``, then
  ``Table '<name>' <seats>-max Seat #<button> is the button`` and one ``Seat s: player (stack
  in chips)`` line per player dealt in;
* forced bets: ``posts the ante``, ``posts small blind``, ``posts big blind``, ``posts small &
  big blinds`` (a returning player's live big blind plus his dead small blind), ``posts
  straddle``; ``brings in for`` (Stud);
* ``*** HOLE CARDS ***`` (Stud: ``*** 3rd STREET ***``...; draw games: ``*** DEALING HANDS
  ***``, ``*** FIRST DRAW ***``...), ``Dealt to``, ``*** FLOP *** [..]``, ``*** TURN ***
  [..] [.]``, ``*** RIVER *** [..] [.]``;
* actions ``folds``, ``checks``, ``calls X``, ``bets X``, ``raises X to Y`` (X the raise, Y
  the total), ``completes it to Y``, ``and is all-in``; ``discards N cards [..]`` / ``stands
  pat``; ``Uncalled bet (X) returned to``;
* ``*** SHOW DOWN ***``, ``shows [..] (description)``, ``mucks hand``, ``collected X from
  pot``, and ``*** SUMMARY ***`` with the total pot, the rake, the board and a line per seat.

Hidden information (:class:`Visibility`): ``ALL`` writes every hole card (an operator's or a
fairness audit's view); ``hero`` set writes that player's own cards and the others' only
where they were shown at the showdown (a player's own history). Amounts are written in
``unit``s (chips per currency unit: 1 for chips, 100 for cents → ``$1.50``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cardroom.core.cards import Card
from cardroom.core.engine import (
    ActionKind,
    ActionTaken,
    ArtificialAllIn,
    BetReturned,
    BoardDealt,
    CardsDealt,
    DrawMade,
    ForcedBetPosted,
    ForcedKind,
    Game,
    Hand,
    HandMucked,
    HandShown,
    PotAwarded,
    StreetStarted,
    Structure,
)

GAME_NAMES: dict[Game, str] = {
    Game.HOLDEM: "Hold'em",
    Game.OMAHA: "Omaha",
    Game.OMAHA_HILO: "Omaha Hi/Lo",
    Game.STUD: "7 Card Stud",
    Game.STUD_HILO: "7 Card Stud Hi/Lo",
    Game.FIVE_CARD_DRAW: "5 Card Draw",
    Game.TRIPLE_DRAW_27: "Triple Draw 2-7 Lowball",
    Game.SOKO: "Soko",
}
STRUCTURE_NAMES: dict[Structure, str] = {
    Structure.FIXED_LIMIT: "Limit",
    Structure.SPREAD_LIMIT: "Spread Limit",
    Structure.POT_LIMIT: "Pot Limit",
    Structure.HALF_POT_LIMIT: "Half Pot Limit",
    Structure.NO_LIMIT: "No Limit",
}
_STUD_STREETS = ("3rd", "4th", "5th", "6th", "7th")
_DRAWS = ("FIRST DRAW", "SECOND DRAW", "THIRD DRAW")


@dataclass(frozen=True, slots=True)
class Format:
    """How to write amounts and whose cards: ``unit`` chips per currency unit, ``symbol``
    before money amounts (``$``), ``currency`` in the header (``USD``; empty for chips),
    ``hero``: only this player's hole cards (and cards shown at the showdown); None = all."""

    unit: int = 1
    symbol: str = ""
    currency: str = ""
    hero: str | None = None


def _cards(cards: Sequence[Card]) -> str:
    return "[" + " ".join(str(c) for c in cards) + "]"


class _Writer:
    def __init__(self, hand: Hand, fmt: Format, meta: Mapping[str, Any]) -> None:
        self.hand = hand
        self.fmt = fmt
        self.meta = meta
        self.name = dict(zip(hand.seats, hand.players, strict=True))
        self.lines: list[str] = []
        self.bets: dict[int, int] = dict.fromkeys(hand.seats, 0)
        self.shown: set[int] = set()
        self.collected: dict[int, int] = dict.fromkeys(hand.seats, 0)
        self.showdown = False

    def money(self, amount: int) -> str:
        unit = self.fmt.unit
        if unit == 1:
            return f"{self.fmt.symbol}{amount}"
        whole, part = divmod(amount, unit)
        if not part:
            return f"{self.fmt.symbol}{whole}"
        digits = len(str(unit - 1))
        return f"{self.fmt.symbol}{whole}.{part:0{digits}d}"

    def visible(self, seat: int) -> bool:
        return self.fmt.hero is None or self.name[seat] == self.fmt.hero

    # ------------------------------------------------------------------ header
    def header(self) -> None:
        h, st, meta = self.hand, self.hand.stakes, self.meta
        if h.spec.uses_button and h.variant.structure not in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT):
            stakes = f"{self.money(st.small_blind)}/{self.money(st.big_blind)}"
        else:
            stakes = f"{self.money(st.small_bet)}/{self.money(st.big_bet)}"
        if self.fmt.currency:
            stakes += f" {self.fmt.currency}"
        game = f"{GAME_NAMES[h.variant.game]} {STRUCTURE_NAMES[h.variant.structure]}"
        number = int(meta.get("hand") or 0)
        date = (
            f"{int(meta.get('year') or 1970):04d}/{int(meta.get('month') or 1):02d}/"
            f"{int(meta.get('day') or 1):02d} {meta.get('time') or '00:00:00'} "
            f"{meta.get('time_zone_abbreviation') or 'UTC'}"
        )
        self.lines.append(f"PokerStars Hand #{number}:  {game} ({stakes}) - {date}")
        table = str(meta.get("table") or "Cardroom")
        seats = int(meta.get("seat_count") or h.spec.max_players)
        button = f" Seat #{h.button} is the button" if h.button is not None and h.spec.uses_button else ""
        self.lines.append(f"Table '{table}' {seats}-max{button}")
        for seat, stack in sorted(zip(h.seats, h.starting_stacks, strict=True)):
            self.lines.append(f"Seat {seat}: {self.name[seat]} ({self.money(stack)} in chips)")

    # ------------------------------------------------------------------ body
    def forced(self, posts: list[ForcedBetPosted]) -> None:
        dead = {e.seat: e.amount for e in posts if e.kind is ForcedKind.DEAD_BLIND}
        live_bb = {e.seat for e in posts if e.kind is ForcedKind.BIG_BLIND}
        order = {
            ForcedKind.ANTE: 0,
            ForcedKind.DEAD_ANTE: 0,
            ForcedKind.SMALL_BLIND: 1,
            ForcedKind.BIG_BLIND: 2,
            ForcedKind.DEAD_BLIND: 2,
            ForcedKind.STRADDLE: 3,
        }
        for e in sorted(posts, key=lambda p: order.get(p.kind, 4)):
            who = self.name[e.seat]
            tail = " and is all-in" if e.all_in else ""
            if e.kind in (ForcedKind.ANTE, ForcedKind.DEAD_ANTE):
                self.lines.append(f"{who}: posts the ante {self.money(e.amount)}{tail}")
            elif e.kind is ForcedKind.SMALL_BLIND:
                self.bets[e.seat] += e.amount
                self.lines.append(f"{who}: posts small blind {self.money(e.amount)}{tail}")
            elif e.kind is ForcedKind.BIG_BLIND:
                self.bets[e.seat] += e.amount
                if e.seat in dead:
                    total = e.amount + dead[e.seat]
                    self.lines.append(f"{who}: posts small & big blinds {self.money(total)}{tail}")
                else:
                    self.lines.append(f"{who}: posts big blind {self.money(e.amount)}{tail}")
            elif e.kind is ForcedKind.DEAD_BLIND:
                if e.seat not in live_bb:
                    self.lines.append(f"{who}: posts the ante {self.money(e.amount)}{tail}")
            elif e.kind is ForcedKind.STRADDLE:
                self.bets[e.seat] += e.amount
                self.lines.append(f"{who}: posts straddle {self.money(e.amount)}{tail}")

    def street(self, ev: StreetStarted) -> None:
        h = self.hand
        if ev.index > 0:
            self.bets = dict.fromkeys(h.seats, 0)
        if h.spec.is_stud_like:
            self.lines.append(
                f"*** {_STUD_STREETS[ev.index] if ev.index < 5 else ev.name.upper()} STREET ***"
                if h.variant.game is not Game.SOKO
                else f"*** {ev.name.upper()} STREET ***"
            )
        elif h.spec.is_draw:
            self.lines.append("*** DEALING HANDS ***" if ev.index == 0 else f"*** {_DRAWS[ev.index - 1]} ***")
        elif ev.index == 0:
            self.lines.append("*** HOLE CARDS ***")

    def dealt(self, batch: list[CardsDealt], held: dict[int, list[Card]]) -> None:
        """The cards of one dealing round (a seat may get face-down and face-up cards):
        ``Dealt to p [cards]``, or in Stud ``Dealt to p [before] [new]``; a viewer sees
        another player's face-up cards only."""
        seats: list[int] = []
        new: dict[int, list[Card]] = {}
        before = {seat: list(cards) for seat, cards in held.items()}
        for ev in batch:
            if ev.seat not in new:
                seats.append(ev.seat)
                new[ev.seat] = []
            mine = self.visible(ev.seat)
            if ev.visible_to is None or mine:
                new[ev.seat] += list(ev.cards)
            held[ev.seat] += list(ev.cards)
        for seat in seats:
            if not new[seat]:
                continue
            who = self.name[seat]
            ups = set(self.hand.up_cards(seat))
            prior = before[seat] if self.visible(seat) else [c for c in before[seat] if c in ups]
            if prior and self.hand.spec.is_stud_like:
                self.lines.append(f"Dealt to {who} {_cards(prior)} {_cards(new[seat])}")
            else:
                self.lines.append(f"Dealt to {who} {_cards(new[seat])}")

    def board(self, ev: BoardDealt, board: list[Card]) -> None:
        before = list(board)
        board += list(ev.cards)
        if self.hand.spec.is_stud_like:
            self.lines.append(f"Dealt to community {_cards(ev.cards)}")
        elif len(board) == 3:
            self.lines.append(f"*** FLOP *** {_cards(board)}")
        elif len(board) == 4:
            self.lines.append(f"*** TURN *** {_cards(before)} {_cards(ev.cards)}")
        else:
            self.lines.append(f"*** RIVER *** {_cards(before)} {_cards(ev.cards)}")

    def action(self, ev: ActionTaken) -> None:
        who = self.name[ev.seat]
        tail = " and is all-in" if ev.all_in else ""
        k = ev.kind
        top = max(self.bets.values(), default=0)
        if k is ActionKind.FOLD:
            self.lines.append(f"{who}: folds")
        elif k is ActionKind.CHECK:
            self.lines.append(f"{who}: checks")
        elif k is ActionKind.CALL:
            self.lines.append(f"{who}: calls {self.money(ev.added)}{tail}")
        elif k is ActionKind.BRING_IN:
            self.lines.append(f"{who}: brings in for {self.money(ev.to)}{tail}")
        elif k is ActionKind.COMPLETE:
            self.lines.append(f"{who}: completes it to {self.money(ev.to)}{tail}")
        elif k is ActionKind.BET:
            self.lines.append(f"{who}: bets {self.money(ev.to)}{tail}")
        elif ev.to <= top:  # an all-in "raise" that does not top the bet is a call
            self.lines.append(f"{who}: calls {self.money(ev.added)}{tail}")
        else:
            self.lines.append(f"{who}: raises {self.money(ev.to - top)} to {self.money(ev.to)}{tail}")
        if k is not ActionKind.FOLD:
            self.bets[ev.seat] = ev.to

    def draw(self, ev: DrawMade, held: dict[int, list[Card]]) -> None:
        who = self.name[ev.seat]
        kept = [c for c in held[ev.seat] if c not in ev.discarded]
        held[ev.seat] = kept + list(ev.received)
        if not ev.discarded:
            self.lines.append(f"{who}: stands pat")
            return
        n = len(ev.discarded)
        if self.visible(ev.seat):
            self.lines.append(f"{who}: discards {n} card{'s' if n > 1 else ''} {_cards(ev.discarded)}")
            self.lines.append(f"Dealt to {who} {_cards(kept)} {_cards(ev.received)}")
        else:
            self.lines.append(f"{who}: discards {n} card{'s' if n > 1 else ''}")

    def show(self, ev: HandShown | HandMucked) -> None:
        if not self.showdown:
            self.showdown = True
            self.lines.append("*** SHOW DOWN ***")
        who = self.name[ev.seat]
        if isinstance(ev, HandShown):
            self.shown.add(ev.seat)
            text = f" ({ev.description})" if ev.description else " (a hand)"
            self.lines.append(f"{who}: shows {_cards(ev.cards)}{text}")
        else:
            self.lines.append(f"{who}: mucks hand")

    def award(self, ev: PotAwarded, pots: int) -> None:
        where = "pot" if pots == 1 else ("main pot" if ev.pot_index == 0 else "side pot")
        if ev.share != "all":
            where = f"{where} ({ev.share})"
        for seat, chips in ev.winners:
            if chips:
                self.collected[seat] += chips
                self.lines.append(f"{self.name[seat]} collected {self.money(chips)} from {where}")

    # ------------------------------------------------------------------ summary
    def summary(self, board: list[Card]) -> None:
        h = self.hand
        self.lines.append("*** SUMMARY ***")
        self.lines.append(f"Total pot {self.money(h.pot_total)} | Rake {self.money(h.rake_taken)}")
        if board:
            self.lines.append(f"Board {_cards(board)}")
        for seat in sorted(h.seats):
            who = self.name[seat]
            role = ""
            if h.button == seat and h.spec.uses_button:
                role = " (button)"
            won = self.collected[seat]
            if seat in self.shown:
                cards = _cards(h.hole_cards(seat))
                result = f"showed {cards} and won ({self.money(won)})" if won else f"showed {cards} and lost"
            elif won:
                result = f"collected ({self.money(won)})"
            elif h.is_folded(seat):
                result = "folded"
            else:
                result = "mucked"
            self.lines.append(f"Seat {seat}: {who}{role} {result}")


def hand_text(hand: Hand, fmt: Format = Format(), meta: Mapping[str, Any] | None = None) -> str:
    """The finished ``hand`` as one PokerStars-format hand history (no trailing blank lines).
    ``meta``: PHH fields for the header (``hand``, ``table``, ``seat_count``, ``year``,
    ``month``, ``day``, ``time``, ``time_zone_abbreviation``)."""
    if not hand.is_over:
        raise ValueError("only a finished hand has a hand history")
    w = _Writer(hand, fmt, meta or {})
    w.header()
    events = hand.events
    posts = [e for e in events if isinstance(e, ForcedBetPosted)]
    w.forced(posts)
    held: dict[int, list[Card]] = {s: [] for s in hand.seats}
    board: list[Card] = []
    pots = len({e.pot_index for e in events if isinstance(e, PotAwarded)})
    batch: list[CardsDealt] = []
    for ev in events:
        if isinstance(ev, CardsDealt):
            batch.append(ev)
            continue
        if batch:
            w.dealt(batch, held)
            batch = []
        if isinstance(ev, StreetStarted):
            w.street(ev)
        elif isinstance(ev, BoardDealt):
            w.board(ev, board)
        elif isinstance(ev, ActionTaken):
            w.action(ev)
        elif isinstance(ev, DrawMade):
            w.draw(ev, held)
        elif isinstance(ev, BetReturned):
            w.bets[ev.seat] -= ev.amount
            w.lines.append(f"Uncalled bet ({w.money(ev.amount)}) returned to {w.name[ev.seat]}")
        elif isinstance(ev, ArtificialAllIn):
            w.lines.append(f"{w.name[ev.seat]} is disconnected (all-in for the chips in the pot)")
        elif isinstance(ev, (HandShown, HandMucked)):
            w.show(ev)
        elif isinstance(ev, PotAwarded):
            w.award(ev, pots)
    if batch:
        w.dealt(batch, held)
    w.summary(board)
    return "\n".join(w.lines)


def dumps(hands: Sequence[tuple[Hand, Mapping[str, Any]]], fmt: Format = Format()) -> str:
    """Several hands as one PokerStars text file: hands separated by two blank lines."""
    return "\n\n\n".join(hand_text(hand, fmt, meta) for hand, meta in hands) + "\n"
