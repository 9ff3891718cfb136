"""Engine events -> ``TableEvent`` protos, and the per-viewer redaction of them.

Each outgoing event is kept once in full with ``owner``: the seat allowed to see its hidden
cards (face-down hole cards, drawn cards), or None when nothing in it is hidden. A viewer
sees the full event only when he sits in ``owner``; anyone else gets "??" for each hidden
card. Cards shown at showdown are public; mucked hands are never shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardroom.core.engine import (
    ActionKind,
    ActionTaken,
    ArtificialAllIn,
    BetReturned,
    BoardDealt,
    CardsDealt,
    DrawMade,
    Event,
    ForcedBetPosted,
    HandMucked,
    HandShown,
    PotAwarded,
    StreetStarted,
)
from cardroom.v1 import dealer_pb2

HIDDEN = "??"
ACTION_TYPES: dict[ActionKind, dealer_pb2.ActionType] = {
    ActionKind.FOLD: dealer_pb2.ACTION_TYPE_FOLD,
    ActionKind.CHECK: dealer_pb2.ACTION_TYPE_CHECK,
    ActionKind.CALL: dealer_pb2.ACTION_TYPE_CALL,
    ActionKind.BET: dealer_pb2.ACTION_TYPE_BET,
    ActionKind.RAISE: dealer_pb2.ACTION_TYPE_RAISE,
    ActionKind.BRING_IN: dealer_pb2.ACTION_TYPE_BRING_IN,
    ActionKind.COMPLETE: dealer_pb2.ACTION_TYPE_COMPLETE,
    ActionKind.DRAW: dealer_pb2.ACTION_TYPE_DRAW,
}
ACTION_KINDS: dict[int, ActionKind] = {v: k for k, v in ACTION_TYPES.items()}


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One table event in full, and the seat that may see its hidden cards."""

    event: dealer_pb2.TableEvent
    owner: int | None = None


def _strs(cards: object) -> list[str]:
    return [str(c) for c in cards]  # type: ignore[attr-defined]


def from_engine(ev: Event, players: dict[int, str], timeout: bool = False) -> Outgoing | None:
    """The table event of an engine event (None for internal ones)."""
    out = dealer_pb2.TableEvent()
    owner: int | None = None
    if isinstance(ev, ForcedBetPosted):
        out.forced_bet.CopyFrom(
            dealer_pb2.ForcedBetPosted(seat=ev.seat, kind=ev.kind.value, amount=ev.amount, all_in=ev.all_in)
        )
    elif isinstance(ev, CardsDealt):
        out.cards_dealt.CopyFrom(
            dealer_pb2.CardsDealt(seat=ev.seat, cards=_strs(ev.cards), face_up=ev.visible_to is None)
        )
        owner = ev.visible_to
    elif isinstance(ev, BoardDealt):
        out.board_dealt.CopyFrom(dealer_pb2.BoardDealt(cards=_strs(ev.cards)))
    elif isinstance(ev, StreetStarted):
        out.street_started.CopyFrom(dealer_pb2.StreetStarted(index=ev.index, name=ev.name))
    elif isinstance(ev, ActionTaken):
        out.action.CopyFrom(
            dealer_pb2.Action(
                seat=ev.seat,
                player_id=players.get(ev.seat, ""),
                action=ACTION_TYPES[ev.kind],
                to=ev.to,
                added=ev.added,
                all_in=ev.all_in,
                timeout=timeout,
            )
        )
    elif isinstance(ev, ArtificialAllIn):
        # rules/002, 003: all-in for what he put in, at his current bet; nothing added (the
        # chips he keeps are set aside and given back after the hand)
        out.action.CopyFrom(
            dealer_pb2.Action(
                seat=ev.seat,
                player_id=players.get(ev.seat, ""),
                action=dealer_pb2.ACTION_TYPE_ARTIFICIAL_ALL_IN,
                to=ev.bet,
                added=0,
                all_in=True,
                timeout=timeout,
            )
        )
    elif isinstance(ev, DrawMade):
        out.action.CopyFrom(
            dealer_pb2.Action(
                seat=ev.seat,
                player_id=players.get(ev.seat, ""),
                action=dealer_pb2.ACTION_TYPE_DRAW,
                discarded=len(ev.discarded),
                received=_strs(ev.received),
                discards=_strs(ev.discarded),
                timeout=timeout,
            )
        )
        owner = ev.seat
    elif isinstance(ev, BetReturned):
        out.bet_returned.CopyFrom(dealer_pb2.BetReturned(seat=ev.seat, amount=ev.amount))
    elif isinstance(ev, HandShown):
        out.hand_shown.CopyFrom(dealer_pb2.HandShown(seat=ev.seat, cards=_strs(ev.cards), description=ev.description))
    elif isinstance(ev, HandMucked):
        out.hand_mucked.CopyFrom(dealer_pb2.HandMucked(seat=ev.seat))
    elif isinstance(ev, PotAwarded):
        out.pot_awarded.CopyFrom(
            dealer_pb2.PotAwarded(
                pot_index=ev.pot_index,
                share=ev.share,
                amount=ev.amount,
                rake=ev.rake,
                members=list(ev.members),
                winners=[dealer_pb2.SeatAmount(seat=s, amount=a) for s, a in ev.winners],
            )
        )
    else:
        return None
    return Outgoing(out, owner)


def for_viewer(item: Outgoing, viewer_seat: int | None) -> dealer_pb2.TableEvent:
    """The event as ``viewer_seat`` may see it (None: an observer)."""
    if item.owner is None or item.owner == viewer_seat:
        return item.event
    event = dealer_pb2.TableEvent()
    event.CopyFrom(item.event)
    which = event.WhichOneof("event")
    if which == "cards_dealt":
        event.cards_dealt.cards[:] = [HIDDEN] * len(event.cards_dealt.cards)
    elif which == "action":
        event.action.received[:] = [HIDDEN] * len(event.action.received)
        del event.action.discards[:]
    elif which == "seat_changed":
        view = event.seat_changed.seat
        view.cards[:] = [c if i < len(view.up) and view.up[i] else HIDDEN for i, c in enumerate(view.cards)]
    return event
