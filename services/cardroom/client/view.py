"""A player's picture of one table, kept up to date from the Play stream's table events.

The hand the dealer holds is the truth: after a draw the player's hand is the cards he kept, in
order, then the cards received (as the engine deals them); opponents' draws show as a count.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from google.protobuf.timestamp_pb2 import Timestamp

from cardroom.v1 import dealer_pb2 as d

ACTION_NAMES = {
    d.ACTION_TYPE_FOLD: "fold",
    d.ACTION_TYPE_CHECK: "check",
    d.ACTION_TYPE_CALL: "call",
    d.ACTION_TYPE_BET: "bet",
    d.ACTION_TYPE_RAISE: "raise",
    d.ACTION_TYPE_BRING_IN: "bring-in",
    d.ACTION_TYPE_COMPLETE: "complete",
    d.ACTION_TYPE_DRAW: "draw",
    d.ACTION_TYPE_ARTIFICIAL_ALL_IN: "all-in (artificial)",
}
_AMOUNT = (d.ACTION_TYPE_BET, d.ACTION_TYPE_RAISE, d.ACTION_TYPE_COMPLETE, d.ACTION_TYPE_BRING_IN)


@dataclass
class SeatState:
    seat: int
    player_id: str
    stack: int
    bet: int = 0
    cards: list[str] = field(default_factory=list)
    in_hand: bool = False
    folded: bool = False
    sitting_out: bool = False
    up: list[bool] = field(default_factory=list)  # per card: dealt face up (Stud)
    drawn: int | None = None  # cards replaced in the last draw
    waiting_for_big_blind: bool = False
    connected: bool = True
    queued_chips: int = 0


@dataclass
class TableView:
    """Seats, board, pot and whose turn, from a snapshot plus the events after it."""

    me: str
    table_id: str = ""
    variant: str = ""
    hand_number: int = 0
    in_hand: bool = False
    board: list[str] = field(default_factory=list)
    pot: int = 0
    seats: dict[int, SeatState] = field(default_factory=dict)
    to_act: d.LegalActionsView | None = None
    last: str = ""  # one line about the last event
    button: int = 0
    results: list[str] = field(default_factory=list)  # the last hand's result, one line per pot
    shown: dict[int, str] = field(default_factory=dict)  # seat -> hand description at showdown
    pots: list[d.PotView] = field(default_factory=list)  # the pots in the middle (the dealer's, from the rules core)
    now: Callable[[], float] = time.time

    def seconds_left(self) -> float | None:
        """Seconds until the action clock (and any extra time) of the player on turn runs out."""
        if self.to_act is None or not self.to_act.HasField("deadline"):
            return None
        return max(0.0, _seconds(self.to_act.deadline) - self.now())

    def clock_text(self) -> str | None:
        """The turn's clocks, counted down separately from the deadlines the dealer sent: ``action
        clock 12 s`` (with the time bank still to come: ``, time bank 30 s``), then, once the action
        clock is used up and the dealer started the time bank, ``time bank 25 s``."""
        la = self.to_act
        if la is None or not la.HasField("deadline"):
            return None
        now = self.now()
        if la.time_bank_running:
            return f"time bank {max(0.0, _seconds(la.deadline) - now):.0f} s"
        action = la.action_deadline if la.HasField("action_deadline") else la.deadline
        text = f"action clock {max(0.0, _seconds(action) - now):.0f} s"
        if la.time_bank_seconds > 0:
            text += f", time bank {la.time_bank_seconds:.0f} s"
        return text

    def pots_text(self) -> str:
        """``main pot 150, side pot 1 300 (bob, cat)`` — the pots in the middle (empty: none)."""
        parts = []
        for i, p in enumerate(self.pots):
            if i == 0:
                parts.append(f"main pot {p.amount}")
            else:
                parts.append(f"side pot {i} {p.amount} ({', '.join(self._name(m) for m in p.members)})")
        return ", ".join(parts)

    def my_seat(self) -> SeatState | None:
        return next((s for s in self.seats.values() if s.player_id == self.me), None)

    def my_turn(self) -> bool:
        return self.to_act is not None and self.to_act.player_id == self.me

    def turn_shown(self, event: d.TableEvent) -> d.LegalActionsView | None:
        """After ``apply(event)``: the viewer's legal actions when ``event`` begins his turn or shows it
        under way (his TurnStarted, or a snapshot taken during his turn: a stream opened, or a viewer
        joined, after the turn began); None otherwise. A repeated TurnStarted of the same turn (his time
        bank started) shows it again: the caller acts once per turn."""
        if event.WhichOneof("event") not in ("turn_started", "snapshot") or not self.my_turn():
            return None
        return self.to_act

    def _seat_from(self, v: d.SeatView) -> SeatState:
        up = list(v.up) if len(v.up) == len(v.cards) else [False] * len(v.cards)
        return SeatState(
            v.seat,
            v.player_id,
            v.stack,
            v.bet,
            list(v.cards),
            v.in_hand,
            v.folded,
            v.sitting_out,
            up,
            None,
            v.waiting_for_big_blind,
            v.connected,
            v.queued_chips,
        )

    def apply(self, event: d.TableEvent) -> None:
        kind = event.WhichOneof("event")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(getattr(event, kind))

    def _name(self, seat: int) -> str:
        s = self.seats.get(seat)
        return s.player_id if s else f"seat {seat}"

    def _on_snapshot(self, s: d.TableState) -> None:
        self.table_id, self.variant = s.info.table_id, s.info.config.variant
        self.hand_number, self.in_hand, self.pot = s.hand_number, s.in_hand, s.pot
        self.board = list(s.board)
        self.seats = {v.seat: self._seat_from(v) for v in s.seats}
        self.to_act = s.to_act if s.HasField("to_act") and s.to_act.player_id else None
        self.button = s.button
        self.pots = list(s.pots)

    def _on_hand_started(self, e: d.HandStarted) -> None:
        self.hand_number, self.in_hand, self.board, self.pot, self.to_act = e.hand_number, True, [], 0, None
        self.button, self.results, self.shown, self.pots = e.button, [], {}, []
        for s in self.seats.values():
            s.cards, s.up, s.bet, s.in_hand, s.folded, s.drawn = [], [], 0, False, False, None
        for v in e.seats:
            seat = self.seats.setdefault(v.seat, self._seat_from(v))
            seat.player_id, seat.stack, seat.in_hand = v.player_id, v.stack, True
            seat.waiting_for_big_blind = seat.sitting_out = False
        self.last = f"hand #{e.hand_number} starts"

    def _on_forced_bet(self, e: d.ForcedBetPosted) -> None:
        if s := self.seats.get(e.seat):
            s.stack -= e.amount
            if e.kind != "ante":  # antes go to the pot, blinds stand as bets in the first round
                s.bet += e.amount
        self.pot += e.amount
        self.last = f"{self._name(e.seat)} posts {e.kind.replace('_', ' ')} {e.amount}"

    def _on_cards_dealt(self, e: d.CardsDealt) -> None:
        if s := self.seats.get(e.seat):
            s.cards.extend(e.cards)
            s.up.extend([e.face_up] * len(e.cards))

    def _on_board_dealt(self, e: d.BoardDealt) -> None:
        self.board.extend(e.cards)
        self.last = f"board: {' '.join(self.board)}"

    def _on_street_started(self, e: d.StreetStarted) -> None:
        if e.index > 0:
            for s in self.seats.values():
                s.bet = 0

    def _on_action(self, e: d.Action) -> None:
        if s := self.seats.get(e.seat):
            s.stack -= e.added
            if e.action != d.ACTION_TYPE_FOLD:
                s.bet = e.to
            else:
                s.folded, s.in_hand = True, False
            if e.action == d.ACTION_TYPE_DRAW:
                self._drew(s, e)
        self.pot += e.added
        self.to_act = None
        amount = f" {e.to}" if e.action in _AMOUNT else ""
        if e.action == d.ACTION_TYPE_DRAW:
            amount = f" {e.discarded}" if e.discarded else " (stands pat)"
        artificial = e.action == d.ACTION_TYPE_ARTIFICIAL_ALL_IN
        extra = " (all-in)" if e.all_in and not artificial else ""
        extra += " (timeout)" if e.timeout else ""
        self.last = f"{self._name(e.seat)} {ACTION_NAMES.get(e.action, '?')}{amount}{extra}"

    @staticmethod
    def _drew(s: SeatState, e: d.Action) -> None:
        """The engine's hand after a draw: the kept cards in order, then those received."""
        s.drawn = e.discarded
        if e.discards or not e.discarded:  # our own draw, or standing pat: we know which cards went
            gone = list(e.discards)
            kept = []
            for card in s.cards:
                if card in gone:
                    gone.remove(card)
                else:
                    kept.append(card)
        else:
            kept = ["??"] * max(0, len(s.cards) - e.discarded)
        s.cards = kept + list(e.received)
        s.up = [False] * len(s.cards)

    def _on_turn_started(self, e: d.TurnStarted) -> None:
        self.to_act = e.to_act
        if e.to_act.time_bank_running:
            self.last = f"{self._name(e.to_act.seat)}: action clock used up, {self.clock_text()}"

    def _on_pots_changed(self, e: d.PotsChanged) -> None:
        self.pots = list(e.pots)
        if len(self.pots) > 1:
            self.last = self.pots_text()

    def _on_bet_returned(self, e: d.BetReturned) -> None:
        if s := self.seats.get(e.seat):
            s.stack += e.amount
        self.pot -= e.amount

    def _on_hand_shown(self, e: d.HandShown) -> None:
        if s := self.seats.get(e.seat):
            s.cards = list(e.cards)
            s.up = [True] * len(s.cards)
        if e.description:
            self.shown[e.seat] = e.description
        self.last = f"{self._name(e.seat)} shows {' '.join(e.cards)} {e.description}".rstrip()

    def _on_pot_awarded(self, e: d.PotAwarded) -> None:
        for w in e.winners:
            if s := self.seats.get(w.seat):
                s.stack += w.amount
        pot = "main pot" if e.pot_index == 0 else f"side pot {e.pot_index}"
        share = "" if e.share in ("", "all") else f" ({e.share} half)"
        names = ", ".join(
            f"{self._name(w.seat)} wins {w.amount}" + (f" with {self.shown[w.seat]}" if w.seat in self.shown else "")
            for w in e.winners
        )
        self.last = f"{pot}{share} {e.amount}: {names}"
        self.results.append(self.last)

    def _on_hand_finished(self, e: d.HandFinished) -> None:
        self.in_hand, self.to_act, self.pot, self.pots = False, None, 0, []
        for s in self.seats.values():
            s.bet = 0

    def _on_restored(self, e: d.TableRestored) -> None:
        self.last = "the dealer restarted: " + (
            "the hand in progress is cancelled, every chip back as before the deal"
            if e.hand_cancelled
            else "the table goes on"
        )

    def _on_seat_changed(self, e: d.SeatChanged) -> None:
        if e.change in ("stood_up", "absent_stood_up"):
            self.seats.pop(e.seat.seat, None)
        else:
            fresh = self._seat_from(e.seat)
            old = self.seats.get(e.seat.seat)
            if (
                old is not None
                and old.player_id == fresh.player_id
                and (not fresh.cards or (all(c == "??" for c in fresh.cards) and len(old.cards) == len(fresh.cards)))
            ):
                fresh.cards, fresh.up, fresh.drawn = old.cards, old.up, old.drawn  # keep what we knew
            self.seats[e.seat.seat] = fresh
        self.last = f"{e.seat.player_id} {CHANGES.get(e.change, e.change.replace('_', ' '))}"

    @staticmethod
    def _cards(s: SeatState) -> str:
        """Cards, the face-up ones (Stud) in brackets: ``As Kd [7c] [8h]``."""
        return " ".join(f"[{c}]" if i < len(s.up) and s.up[i] and c != "??" else c for i, c in enumerate(s.cards))

    def marks(self, s: SeatState) -> str:
        """What a seat is doing, in words."""
        marks = []
        if s.folded:
            marks.append("folded")
        if s.sitting_out:
            marks.append("sitting out")
        elif s.waiting_for_big_blind:
            marks.append("waiting for the big blind")
        if not s.connected:
            marks.append("disconnected")
        if s.drawn is not None and self.in_hand:
            marks.append(f"drew {s.drawn}" if s.drawn else "stood pat")
        if s.queued_chips:
            marks.append(f"+{s.queued_chips} next hand")
        return ", ".join(marks)

    def render(self) -> str:
        """Plain text: one line per seat (D: the button), the board, the pot, whose turn and his clock."""
        lines = [
            f"table {self.table_id} ({self.variant})  hand #{self.hand_number}  pot {self.pot}"
            f"  board: {' '.join(self.board) or '-'}"
        ]
        for n in sorted(self.seats):
            s = self.seats[n]
            mark = ">" if self.to_act is not None and self.to_act.seat == n else " "
            button = "D" if self.button == n and self.button else " "
            who = f"{s.player_id}{' (you)' if s.player_id == self.me else ''}"
            lines.append(
                f" {mark}{button} seat {n}: {who:<20} stack {s.stack:>8}  bet {s.bet:>6}  "
                f"{self._cards(s):<24} {self.marks(s)}".rstrip()
            )
        if self.in_hand and len(self.pots) > 1:
            lines.append(f"   {self.pots_text()}")
        if self.to_act is not None:
            clock = self.clock_text()
            lines.append(f"   to act: {self._name(self.to_act.seat)}{f' ({clock})' if clock else ''}")
        if not self.in_hand and self.results:
            lines.extend(f"   {line}" for line in self.results)
        return "\n".join(lines)


def _seconds(ts: Timestamp) -> float:
    return ts.seconds + ts.nanos / 1e9


#: Seat changes in words.
CHANGES = {
    "sat_down": "sat down",
    "stood_up": "left the table",
    "sat_out": "sits out",
    "came_back": "is back",
    "chips_added": "added chips",
    "chips_queued": "adds chips after this hand",
    "connected": "reconnected",
    "disconnected": "lost the connection",
    "post_now": "posts the big blind next hand",
    "timed_out_sat_out": "was sat out (timed out / away)",
    "absent_stood_up": "was stood up after sitting out",
    "chips_refused": "could not add the chips",
}
