"""Command validation and application: each gRPC command checked, then applied in the actor.

A rejected command raises a :class:`~dealer.errors.DealerError` (its gRPC status and a clear
message) and changes nothing; money moves through the write-ahead (:mod:`dealer.writeahead`).
"""

from __future__ import annotations

import asyncio

from cardroom.core.cards import Card
from cardroom.core.engine import ActionKind, ActionTaken, DrawMade, IllegalAction
from cardroom.core.table import TableError
from cardroom.v1 import dealer_pb2

from dealer import metrics, redact, views
from dealer.errors import exists, invalid, not_found, precondition
from dealer.hand_cycle import HandCycle
from dealer.tablespec import check_id

_TO_AMOUNT = frozenset((ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE))


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

    async def sit_down(self, req: dealer_pb2.SitDownRequest, key: str) -> dealer_pb2.SeatResponse:
        self._check_open()
        check_id(req.player_id, "player_id")
        seats = self.table.seating.seats
        taken = views.seat_of(self.table, req.player_id)
        if taken is not None:
            raise exists(f"player {req.player_id!r} is already seated at table {self.table_id} (seat {taken})")
        count = self.spec.settings.seat_count
        if not 0 <= req.seat <= count:
            raise invalid(f"seat: {req.seat} is outside 1..{count}")
        if len(seats) >= count:
            raise precondition(f"table {self.table_id} is full ({count} seats)")
        seat = req.seat or next(s for s in range(1, count + 1) if s not in seats)
        if seat in seats:
            raise exists(f"seat {seat} at table {self.table_id} is taken")
        if req.buy_in <= 0:
            raise invalid(f"buy_in: must be positive, got {req.buy_in}")
        try:
            self.spec.buy_in.check(req.buy_in)
        except ValueError as exc:
            raise precondition(str(exc)) from None
        await self._move_in(req.player_id, seat, req.buy_in, req.post_now, key)
        try:
            self.table.sit_down(seat, req.player_id, req.buy_in, post_now=req.post_now)
        except TableError as exc:   # unexpected after the checks above: give the money back
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
        if req.amount <= 0:
            raise invalid(f"amount: must be positive, got {req.amount}")
        if self.table.dealt_in(seat):
            raise precondition("chips can be added only between hands (you are in the hand in progress)")
        try:
            self.spec.buy_in.check_top_up(self.table.seating.seats[seat].stack, req.amount)
        except ValueError as exc:
            raise precondition(str(exc)) from None
        await self._move_in(req.player_id, seat, req.amount, False, key)
        self.table.add_chips(seat, req.amount)
        await self.write_snapshot()
        self._seat_changed(seat, "chips_added")
        return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))

    async def stand_up(self, req: dealer_pb2.SeatCommandRequest, key: str) -> dealer_pb2.StandUpResponse:
        seat = self._seat(req.player_id)
        chips = self.table.stand_up(seat)
        if chips is None:
            self._emit_hand_events()
            return dealer_pb2.StandUpResponse(pending=True)
        self._queue_cashout(req.player_id, chips, f"dealer:standup:{self.table_id}:{key}")
        await self.write_snapshot()
        await self._flush_cashouts()
        self._seat_changed(seat, "stood_up", req.player_id, chips)
        return dealer_pb2.StandUpResponse(cashed_out=chips)

    async def sit_out(self, req: dealer_pb2.SeatCommandRequest) -> dealer_pb2.SeatResponse:
        self._check_open()
        seat = self._seat(req.player_id)
        try:
            self.table.sit_out(seat)
        except TableError as exc:
            raise precondition(str(exc)) from None
        self._emit_hand_events()
        await self.write_snapshot()
        self._seat_changed(seat, "sat_out")
        return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))

    async def come_back(self, req: dealer_pb2.SeatCommandRequest) -> dealer_pb2.SeatResponse:
        self._check_open()
        seat = self._seat(req.player_id)
        leaving = getattr(self.table, "_sitting_out", set())   # sit-outs queued for the hand's end
        if not self.table.seating.seats[seat].sitting_out and seat not in leaving:
            raise precondition(f"player {req.player_id!r} is not sitting out")
        try:
            self.table.come_back(seat, post_now=req.post_now)
        except (TableError, ValueError) as exc:
            raise precondition(str(exc)) from None
        await self.write_snapshot()
        self._seat_changed(seat, "came_back")
        return dealer_pb2.SeatResponse(seat=views.seat_view(self.table, seat, seat))

    async def set_connected(self, player: str, up: bool) -> bool:
        """Connection up/down from the connection monitor; False if the player is not seated."""
        seat = views.seat_of(self.table, player)
        if seat is None or self.table.connected.get(seat, True) == up:
            return seat is not None
        self.table.set_connected(seat, up)
        if not up:
            metrics.DISCONNECTS.labels(self.variant).inc()
        self._seat_changed(seat, "connected" if up else "disconnected")
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
        if not self.table.in_hand:
            raise precondition(f"no hand in progress at table {self.table_id}")
        if req.hand_number and req.hand_number != self.table.hand_number:
            raise precondition(f"hand {req.hand_number} is over; hand {self.table.hand_number} is in progress")
        la = self.table.legal_actions()
        assert la is not None
        if la.seat != seat:
            to_act = self.table.seating.seats[la.seat].player
            raise precondition(f"not your turn: seat {la.seat} ({to_act}) is to act")
        if kind not in la.kinds:
            legal = ", ".join(sorted(k.value for k in la.kinds))
            raise precondition(f"{kind.value} is not a legal action now (legal: {legal})")
        amount = req.amount if kind in _TO_AMOUNT else None
        try:
            event = self.table.act(seat, kind, amount, discards=discards, now=self.clock.now())
        except IllegalAction as exc:
            raise precondition(exc.message) from None
        except TableError as exc:
            raise precondition(str(exc)) from None
        self._emit_hand_events()
        done = dealer_pb2.Action(seat=seat, player_id=req.player_id, action=req.action)
        if isinstance(event, ActionTaken):
            done.to, done.added, done.all_in = event.to, event.added, event.all_in
        elif isinstance(event, DrawMade):
            done.discarded = len(event.discarded)
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
