"""A player's picture of one table, kept up to date from the Play stream's table events."""

from __future__ import annotations

from dataclasses import dataclass, field

from cardroom.v1 import dealer_pb2 as d

ACTION_NAMES = {
    d.ACTION_TYPE_FOLD: "fold", d.ACTION_TYPE_CHECK: "check", d.ACTION_TYPE_CALL: "call",
    d.ACTION_TYPE_BET: "bet", d.ACTION_TYPE_RAISE: "raise", d.ACTION_TYPE_BRING_IN: "bring-in",
    d.ACTION_TYPE_COMPLETE: "complete", d.ACTION_TYPE_DRAW: "draw",
}


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
    last: str = ""   # one line about the last event

    def my_seat(self) -> SeatState | None:
        return next((s for s in self.seats.values() if s.player_id == self.me), None)

    def my_turn(self) -> bool:
        return self.to_act is not None and self.to_act.player_id == self.me

    def _seat_from(self, v: d.SeatView) -> SeatState:
        return SeatState(v.seat, v.player_id, v.stack, v.bet, list(v.cards), v.in_hand, v.folded, v.sitting_out)

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

    def _on_hand_started(self, e: d.HandStarted) -> None:
        self.hand_number, self.in_hand, self.board, self.pot, self.to_act = e.hand_number, True, [], 0, None
        for s in self.seats.values():
            s.cards, s.bet, s.in_hand, s.folded = [], 0, False, False
        for v in e.seats:
            seat = self.seats.setdefault(v.seat, self._seat_from(v))
            seat.player_id, seat.stack, seat.in_hand = v.player_id, v.stack, True
        self.last = f"hand #{e.hand_number} starts"

    def _on_forced_bet(self, e: d.ForcedBetPosted) -> None:
        if s := self.seats.get(e.seat):
            s.stack -= e.amount
            if e.kind != "ante":   # antes go to the pot, blinds stand as bets in the first round
                s.bet += e.amount
        self.pot += e.amount
        self.last = f"{self._name(e.seat)} posts {e.kind.replace('_', ' ')} {e.amount}"

    def _on_cards_dealt(self, e: d.CardsDealt) -> None:
        if s := self.seats.get(e.seat):
            s.cards.extend(e.cards)

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
                kept = [c for c in s.cards][: max(0, len(s.cards) - e.discarded)]
                s.cards = kept + list(e.received)
        self.pot += e.added
        self.to_act = None
        amount = f" {e.to}" if e.action in (d.ACTION_TYPE_BET, d.ACTION_TYPE_RAISE, d.ACTION_TYPE_COMPLETE) else ""
        extra = " (all-in)" if e.all_in else (" (timeout)" if e.timeout else "")
        self.last = f"{self._name(e.seat)} {ACTION_NAMES.get(e.action, '?')}{amount}{extra}"

    def _on_turn_started(self, e: d.TurnStarted) -> None:
        self.to_act = e.to_act

    def _on_bet_returned(self, e: d.BetReturned) -> None:
        if s := self.seats.get(e.seat):
            s.stack += e.amount
        self.pot -= e.amount

    def _on_hand_shown(self, e: d.HandShown) -> None:
        if s := self.seats.get(e.seat):
            s.cards = list(e.cards)
        self.last = f"{self._name(e.seat)} shows {' '.join(e.cards)} {e.description}".rstrip()

    def _on_pot_awarded(self, e: d.PotAwarded) -> None:
        for w in e.winners:
            if s := self.seats.get(w.seat):
                s.stack += w.amount
        names = ", ".join(f"{self._name(w.seat)} {w.amount}" for w in e.winners)
        self.last = f"pot {e.pot_index + 1} ({e.share}): {names}"

    def _on_hand_finished(self, e: d.HandFinished) -> None:
        self.in_hand, self.to_act, self.pot = False, None, 0
        for s in self.seats.values():
            s.bet = 0

    def _on_seat_changed(self, e: d.SeatChanged) -> None:
        if e.change == "stood_up":
            self.seats.pop(e.seat.seat, None)
        else:
            self.seats[e.seat.seat] = self._seat_from(e.seat)
        self.last = f"{e.seat.player_id} {e.change.replace('_', ' ')}"

    def render(self) -> str:
        """Plain text: one line per seat, the board, the pot, whose turn."""
        lines = [f"table {self.table_id} ({self.variant})  hand #{self.hand_number}  pot {self.pot}"
                 f"  board: {' '.join(self.board) or '-'}"]
        for n in sorted(self.seats):
            s = self.seats[n]
            mark = ">" if self.to_act is not None and self.to_act.seat == n else " "
            state = "folded" if s.folded else ("out" if s.sitting_out else "")
            who = f"{s.player_id}{' (you)' if s.player_id == self.me else ''}"
            lines.append(f" {mark} seat {n}: {who:<20} stack {s.stack:>8}  bet {s.bet:>6}  {' '.join(s.cards):<20} {state}")
        if self.to_act is not None:
            lines.append(f"   to act: {self._name(self.to_act.seat)}")
        return "\n".join(lines)
