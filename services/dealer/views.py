"""Read-only views of a table as protos: lobby info, seats, legal actions, the viewer's state."""

from __future__ import annotations

from cardroom.core.engine import ActionKind
from cardroom.core.table import Table
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import dealer_pb2
from dealer.redact import ACTION_TYPES, HIDDEN


def seat_of(table: Table, player: str) -> int | None:
    """The seat ``player`` sits in, or None (the table's own answer)."""
    return table.seat_of(player)


def seat_view(
    table: Table, seat: int, viewer_seat: int | None = None, shown: frozenset[int] | set[int] = frozenset()
) -> dealer_pb2.SeatView:
    """One occupied seat; hole cards only as the viewer may see them."""
    state = table.seating.seats[seat]
    view = dealer_pb2.SeatView(
        seat=seat,
        player_id=state.player,
        stack=table.stack(seat),
        sitting_out=state.sitting_out,
        connected=table.connected.get(seat, True),
        waiting_for_big_blind=table.waiting_for_big_blind(seat),
        queued_chips=table.queued_chips(seat),
        timeouts=table.timeouts.get(seat, 0),
    )
    hand = table.hand
    if hand is not None and table.dealt_in(seat):
        i = hand.position(seat)
        view.folded = hand.folded[i]
        view.in_hand = not hand.folded[i] and not hand.is_over
        if not hand.is_over:
            view.bet = hand.bets[i]
        for card, up in zip(hand.hole[i], hand.up[i], strict=True):
            visible = up or seat == viewer_seat or seat in shown
            view.cards.append(str(card) if visible else HIDDEN)
            view.up.append(bool(up))
    return view


def legal_view(table: Table, now: float) -> dealer_pb2.LegalActionsView | None:
    """The legal actions of the player on turn, with his clocks: the action clock's deadline and
    the time bank he gets after it (the rules core's timeout decision as it stands at ``now``), or
    once it runs, the turn's deadline with it."""
    la = table.legal_actions()
    if la is None:
        return None
    view = dealer_pb2.LegalActionsView(
        seat=la.seat,
        player_id=table.seating.seats[la.seat].player,
        actions=sorted(ACTION_TYPES[k] for k in la.kinds),
        call_amount=la.call_amount,
        min_to=la.min_to,
        max_to=la.max_to,
        max_discards=la.max_discards,
    )
    clock = table.clock
    if clock is not None:
        # the two clocks, separately: the action clock, then (once it is used up) the time bank
        view.deadline.CopyFrom(timestamp(clock.deadline))
        view.action_deadline.CopyFrom(timestamp(clock.started + clock.seconds))
        view.time_bank_running = clock.bank_seconds > 0
        view.time_bank_seconds = clock.bank_seconds if view.time_bank_running else table.time_bank_ahead(now)
    if ActionKind.BRING_IN in la.kinds:
        view.bring_in = min(table.stakes.bring_in, table.stack(la.seat))
    return view


def pot_views(table: Table) -> list[dealer_pb2.PotView]:
    """The pots in the middle of the hand in progress, from the rules core (bets in front not yet
    in them); empty between hands."""
    hand = table.hand
    if hand is None or hand.is_over:
        return []
    return [dealer_pb2.PotView(amount=p.amount, members=p.members) for p in hand.pots(include_bets=False)]


def table_state(
    info: dealer_pb2.TableInfo, table: Table, viewer: str, shown: set[int], commitment: str, now: float
) -> dealer_pb2.TableState:
    """The table as ``viewer`` (a player id, or "" for an observer) may see it now."""
    viewer_seat = seat_of(table, viewer) if viewer else None
    state = dealer_pb2.TableState(
        info=info, hand_number=table.hand_number, in_hand=table.in_hand, commitment=commitment if table.in_hand else ""
    )
    hand = table.hand
    if hand is not None:
        if table.plan is not None and table.plan.button is not None:
            state.button = table.plan.button
        state.board.extend(str(c) for c in hand.board)
        if table.in_hand:
            state.pot = hand.pot_total
    state.pots.extend(pot_views(table))
    for seat in sorted(table.seating.seats):
        state.seats.append(seat_view(table, seat, viewer_seat, shown))
    to_act = legal_view(table, now)
    if to_act is not None:
        state.to_act.CopyFrom(to_act)
    return state
