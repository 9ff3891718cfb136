"""Command validation and application: each gRPC command checked, then applied in the actor.

A rejected command raises a :class:`~dealer.errors.DealerError` (its gRPC status and a clear
message) and changes nothing; money moves through the write-ahead (:mod:`dealer.writeahead`).
The table rules themselves are the core's: the ``Table.verify_*`` checks answer "may this
player do that now, and why not" with a :class:`~cardroom.core.engine.Reason`, which
:func:`refused` turns into the gRPC status; this module only checks the wire (ids, fields,
the hand number a client acted on) and the dealer's own state (a close under way).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc

from cardroom.core import ids
from cardroom.core.cards import Card
from cardroom.core.engine import ActionKind, ActionTaken, DrawMade, IllegalAction, Reason
from cardroom.core.table import TableError
from cardroom.runtime.errors import REASON_STATUS, FieldViolation, ServiceError, from_illegal
from cardroom.v1 import dealer_pb2
from dealer import metrics, redact, views
from dealer.errors import DealerError, invalid, not_found, precondition
from dealer.hand_cycle import HandCycle

_TO_AMOUNT = frozenset((ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE))
#: The request field a table refusal of INVALID_ARGUMENT names (default: the amount field).
_FIELD = {Reason.SEAT_OUT_OF_RANGE: "seat"}


def check_player(player_id: str, field: str = "player_id") -> str:
    """The dealer's check of a player id on the wire: the one rule of :mod:`cardroom.core.ids`."""
    return ids.verify_player_id(player_id, field)


def refused(table_id: str, exc: TableError, amount_field: str = "amount") -> DealerError:
    """The dealer error for a refusal of the table rules, with the status of the runtime's one
    table (:data:`~cardroom.runtime.errors.REASON_STATUS`): INVALID_ARGUMENT names the request
    field, the others name the table."""
    if exc.reason is None:
        return precondition(f"table {table_id}: {exc.message}")
    code = REASON_STATUS[exc.reason]
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        field = _FIELD.get(exc.reason, amount_field)
        return ServiceError(
            code, f"{field}: {exc.message}", reason=exc.reason.name, violations=[FieldViolation(field, exc.message)]
        )
    return ServiceError(code, f"table {table_id}: {exc.message}", reason=exc.reason.name)


class Commands(HandCycle):
    """The seat and action commands, and closing the table."""

    def _check_open(self) -> None:
        if self.closed or self.closing:
            raise precondition(f"table {self.table_id} is closed")

    def _seat(self, player: str) -> int:
        if not player:
            raise invalid("player_id: required")
        seat = views.seat_of(self.table, player)
        if seat is None:
            raise not_found(f"player {player!r} is not seated at table {self.table_id}")
        return seat

    def _verify(self, check: Callable[[], None], amount_field: str = "amount") -> None:
        try:
            check()
        except TableError as exc:
            raise refused(self.table_id, exc, amount_field) from None

    async def sit_down(self, req: dealer_pb2.SitDownRequest, key: str) -> dealer_pb2.SeatResponse:
        self._check_open()
        check_player(req.player_id)
        seated = views.seat_of(self.table, req.player_id)
        if seated is not None and self.buy_in_done(key):
            # sent again after a restart or a move of the table (the first answer lost): the first outcome
            return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seated, seated))
        self._verify(lambda: self.table.verify_sit_down(req.player_id, req.buy_in, req.seat or None), "buy_in")
        seat = req.seat or self.table.free_seat()
        assert seat is not None
        await self._move_in(req.player_id, seat, req.buy_in, req.post_now, key)
        try:
            self.table.sit_down(seat, req.player_id, req.buy_in, post_now=req.post_now)
        except TableError as exc:  # unexpected after the checks above: give the money back
            self._queue_cashout(req.player_id, req.buy_in, key + ":refund")
            await self.write_snapshot()
            await self._flush_cashouts()
            raise precondition(str(exc)) from None
        await self.write_snapshot()
        self._seat_changed(seat, "sat_down")
        return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))

    async def add_chips(self, req: dealer_pb2.AddChipsRequest, key: str) -> dealer_pb2.SeatResponse:
        self._check_open()
        seat = self._seat(req.player_id)
        if self.buy_in_done(key):
            # sent again after a restart or a move of the table (the first answer lost): the first outcome
            return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))
        if self.table.in_hand and self.table.dealt_in(seat):
            # rules/002: chips are added between hands only — queued, added before the next deal
            if not self._queued_already(seat, key):  # else: this request, sent again
                self._verify(lambda: self.table.verify_queue_chips(seat, req.amount))
                self._queue_chips(seat, req.player_id, req.amount, key)
                await self.write_snapshot()  # a crash cancels the hand, not the request
                self._seat_changed(seat, "chips_queued")
            return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat), queued=True)
        self._verify(lambda: self.table.verify_add_chips(seat, req.amount))
        await self._move_in(req.player_id, seat, req.amount, False, key)
        self.table.add_chips(seat, req.amount)
        await self.write_snapshot()
        self._seat_changed(seat, "chips_added")
        return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))

    async def stand_up(self, req: dealer_pb2.SeatCommandRequest, key: str) -> dealer_pb2.StandUpResponse:
        seat = self._seat(req.player_id)
        self._verify(lambda: self.table.verify_stand_up(seat))
        returning = self.table.stack(seat)
        chips = self.table.stand_up(seat, self.clock.now())
        if chips is None:
            self._emit_hand_events()
            if seat in self.table.seating.seats:
                returning = self.table.stack(seat)
            await self.write_snapshot()  # a crash cancels the hand, not his leaving (Table.rolled_back)
            return dealer_pb2.StandUpResponse(pending=True, returning=returning)
        self._queue_cashout(req.player_id, chips, f"dealer:standup:{self.table_id}:{key}")
        await self.write_snapshot()
        await self._flush_cashouts()
        self._seat_changed(seat, "stood_up", req.player_id, chips)
        return dealer_pb2.StandUpResponse(cashed_out=chips)

    async def sit_out(self, req: dealer_pb2.SeatCommandRequest) -> dealer_pb2.SeatResponse:
        self._check_open()
        seat = self._seat(req.player_id)
        self._verify(lambda: self.table.verify_sit_out(seat))
        self.table.sit_out(seat, self.clock.now())
        self._emit_hand_events()
        await self.write_snapshot()
        self._seat_changed(seat, "sat_out")
        return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))

    async def come_back(self, req: dealer_pb2.SeatCommandRequest) -> dealer_pb2.SeatResponse:
        self._check_open()
        seat = self._seat(req.player_id)
        if req.post_now and not self.table.is_sitting_out(seat) and self.table.can_post_now(seat):
            self.table.post_now(seat)  # rules/002: post the big blind now instead of waiting for it
            await self.write_snapshot()
            self._seat_changed(seat, "post_now")
            return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))
        self._verify(lambda: self.table.verify_come_back(seat))
        try:
            self.table.come_back(seat, post_now=req.post_now)
        except (TableError, ValueError) as exc:
            raise precondition(str(exc)) from None
        await self.write_snapshot()
        self._seat_changed(seat, "came_back")
        return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))

    async def set_connected(self, player: str, up: bool) -> bool:
        """Connection up/down from the connection monitor, or up as a seated player joins the table's
        feed or watches it (his connection to this table: a tournament seats its players not connected,
        ``Table.connected_when_seated``); False if the player is not seated."""
        seat = views.seat_of(self.table, player)
        if seat is None or self.table.connected.get(seat, True) == up:
            return seat is not None
        self.table.set_connected(seat, up)
        if not up:
            metrics.DISCONNECTS.labels(self.variant).inc()
        self._seat_changed(seat, "connected" if up else "disconnected")
        clock = self.table.clock
        if self.table.in_hand and clock is not None and clock.seat == seat:
            self._emit_hand_events(turn_changed=True)  # his turn's time bank ahead changed with it
        return True

    async def act(self, req: dealer_pb2.ActRequest) -> dealer_pb2.ActResponse:
        seat = self._seat(req.player_id)
        kind = redact.ACTION_KINDS.get(req.action)
        if kind is None:
            raise invalid(f"action: unknown or unspecified action {req.action}")
        if req.amount < 0:
            raise invalid(f"amount: must not be negative, got {req.amount}")
        try:
            discards = [Card.parse(c) for c in req.discards]
        except ValueError as exc:
            raise invalid(f"discards: {exc}") from None
        if self.table.in_hand and req.hand_number and req.hand_number != self.table.hand_number:
            raise precondition(f"hand {req.hand_number} is over; hand {self.table.hand_number} is in progress")
        self._verify(lambda: self.table.verify_act(seat, kind))
        amount = req.amount if kind in _TO_AMOUNT else None
        bank = self._time_bank_left()
        try:
            event = self.table.act(seat, kind, amount, discards=discards, now=self.clock.now())
        except IllegalAction as exc:
            raise from_illegal(exc) from None
        except TableError as exc:
            raise precondition(str(exc)) from None
        metrics.ACTIONS.labels(self.variant, kind.value).inc()
        self._observe_time_bank(bank)
        self._emit_hand_events()
        done = dealer_pb2.Action(seat=seat, player_id=req.player_id, action=req.action)
        if isinstance(event, ActionTaken):
            done.to, done.added, done.all_in = event.to, event.added, event.all_in
        elif isinstance(event, DrawMade):
            done.discarded = len(event.discarded)
            done.discards.extend(str(c) for c in event.discarded)
            done.received.extend(str(c) for c in event.received)
        return dealer_pb2.ActResponse(hand_number=self.table.hand_number, action=done)

    async def close(self) -> asyncio.Future[list[dealer_pb2.SeatView]]:
        """Close now, or when the hand in progress ends; the future gives the cash-outs."""
        waiter: asyncio.Future[list[dealer_pb2.SeatView]] = asyncio.get_running_loop().create_future()
        if self.closed:
            waiter.set_result(list(self.cashed_out_at_close))
            return waiter
        self.close_waiters.append(waiter)
        self.closing = True
        if self.table.hand is None:
            await self._close_now()
        return waiter
