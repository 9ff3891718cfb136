"""A tournament's table on the dealer: the cash table actor (:class:`~dealer.actor.TableActor`:
mailbox, clocks, hand cycle, Watch, snapshots) with the tournament's contract of
``protos/cardroom/v1/tournament_tables.proto`` on top:

* no wallet: stacks come with the commands (tournament chips, never money), no buy-in, no
  add-chips, no stand-up, no rake; players only act, sit out and come back (``Dealer/Act``,
  ``SitOut``, ``ComeBack``, ``Watch`` — through the gateway's Play with their own identity);
* seats, removals, moves, re-buy / add-on chips and closing happen between hands: during a
  hand they are kept (``deferred``) and applied when it ends, in arrival order;
* a level (``SetTournamentLevel``) is played from the next hand; a paused table finishes its
  hand and deals no new one until every pause reason is resumed;
* a player who sits out or is disconnected stays dealt in, posts, and times out (check, else
  fold) — the core's tournament table (rules/000 'Disconnects');
* on a dealer restart the hand in progress is ROLLED BACK (the snapshot holds the seating from
  before its deal: every stack as at its start) and the same hand is dealt again with the same
  button, never cancelled (rules/000 'Tournament Rules');
* every command applied and every hand ended is a ``TournamentTableEvent`` on Kafka
  ``cardroom.tournament.tables`` keyed by tournament id: an outbox sent in one Kafka transaction
  with the snapshot that no longer holds it (never by a replica that lost the table), kept in the
  snapshot while that fails and sent again (same event id).

A move leaves this table (between its hands) and arrives at the other one (between *its*
hands): the player and his chips are in the snapshot's ``moves_out`` until the other table has
taken him (idempotent by the move's command id), so a crash in between loses no chip.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from typing import Any

from cardroom.core import ids
from cardroom.core.cards import Card
from cardroom.core.engine import ActionTaken, DrawMade, Hand
from cardroom.core.table import TableError
from cardroom.core.table.clock import MAX_TIME_BANK_SECONDS
from cardroom.runtime.transactions import Outgoing
from cardroom.v1 import dealer_pb2, tournament_tables_pb2 as tt
from dealer import metrics, seating_state
from dealer.actor import TableActor
from dealer.deps import Deps
from dealer.errors import DealerError, invalid, not_found, precondition
from dealer.settlement import settlement
from dealer.state import log
from dealer.tournament_spec import core_stakes, tournament_spec

EVENT_TYPE = "cardroom.dealer.tournament_table_event.v1"
STALE_TABLE_VERSION = "STALE_TABLE_VERSION"
APPLIED_KEPT = 500

Finder = Callable[[str], "TableActor | None"]


def _fingerprint(message: Any) -> bytes:
    return hashlib.sha256(message.SerializeToString(deterministic=True)).digest()


def actions_of(hand: Hand) -> list[tt.TournamentAction]:
    """Every action of ``hand`` in order as the core's ``Table.act`` takes it (forced bets are the
    engine's own): dealt the same deck, the same actions give the same stacks."""
    out: list[tt.TournamentAction] = []
    for event in hand.events:
        if isinstance(event, ActionTaken):
            amount = event.to if event.kind.name in ("BET", "RAISE", "COMPLETE") else 0
            out.append(tt.TournamentAction(seat=event.seat, kind=event.kind.name, amount=amount))
        elif isinstance(event, DrawMade):
            out.append(tt.TournamentAction(seat=event.seat, kind="DRAW", discards=[str(c) for c in event.discarded]))
    return out


class TournamentTableActor(TableActor):
    """One tournament table (module docstring); ``find`` looks up the dealer's other tables."""

    holds_money = False  # tournament chips are not money: no escrow, not in dealer_table_chips

    def __init__(self, table_id: str, opened: tt.OpenTournamentTableRequest, deps: Deps, find: Finder) -> None:
        super().__init__(table_id, tournament_spec(opened), deps)
        self.opened = opened
        self.tournament_id = opened.tournament_id
        self.number = opened.table
        self.find = find
        self.version = 0
        self.paused: set[str] = set()
        self.wire_stakes = tt.TournamentStakes()
        self.wire_stakes.CopyFrom(opened.stakes)
        self.next_stakes: tt.TournamentStakes | None = None
        self.deferred: list[tt.TournamentTableCommand] = []
        self.applied: list[str] = []
        self.outbox: list[tt.TournamentTableEvent] = []
        self.t_sequence = 0
        self.moves_out: list[tt.TournamentMoveOut] = []
        self.busted_seats: set[int] = set()
        self.hands_played = 0
        self.before_deal = seating_state.dump(self.table.seating)
        self.deals: list[tt.DealTournamentHandRequest] = []  # deal_on_request: the hands asked for
        self._dealing: tt.DealTournamentHandRequest | None = None
        self._delivering: set[str] = set()
        self._rolled_back = False
        self._redeal_pending = False
        """A hand rolled back by a restart waits to be dealt again: to the same players, as the
        tournament's core deals it, so a player seated meanwhile waits for its end."""

    @property
    def newcomers_wait(self) -> bool:
        """A player seated now (an arrival, a seat command) waits for the end of the hand
        (``deferred``): one is in progress, or a rolled-back one waits to be dealt again, to its
        own players (the core seated him during it, not dealt in). Chips (an add-on at the break,
        a re-buy) and removals are the core's at once between hands: only a hand in progress
        defers them."""
        return self.table.hand is not None or self._redeal_pending

    def _waits(self, command: tt.TournamentTableCommand) -> bool:
        """Whether ``command`` waits for the end of the hand (see :attr:`newcomers_wait`)."""
        return self.table.hand is not None or (self._redeal_pending and command.WhichOneof("command") == "seat")

    # ------------------------------------------------------------------ state on the wire
    def seats(self) -> list[tt.TournamentSeat]:
        return [
            tt.TournamentSeat(seat=s, player_id=st.player, chips=st.stack, sitting_out=self.table.is_sitting_out(s))
            for s, st in sorted(self.table.seating.seats.items())
        ]

    def tournament_state(self, *, deferred: bool = False, removed: int = 0) -> tt.TournamentTableState:
        return tt.TournamentTableState(
            tournament_id=self.tournament_id,
            table=self.number,
            version=self.version,
            in_hand=self.table.hand is not None,
            paused=bool(self.paused),
            closed=self.closed,
            stakes=self.wire_stakes,
            seats=self.seats(),
            removed_chips=removed,
            deferred=deferred,
            hands_played=self.hands_played,
        )

    async def read_state(self) -> tt.TournamentTableState:
        return self.tournament_state()

    def tournament_snapshot(self) -> tt.TournamentTableSnapshot:
        snap = tt.TournamentTableSnapshot(
            opened=self.opened,
            version=self.version,
            paused=sorted(self.paused),
            stakes=self.wire_stakes,
            deferred=self.deferred,
            applied_commands=self.applied,
            outbox=self.outbox,
            event_sequence=self.t_sequence,
            moves_out=self.moves_out,
            busted_seats=sorted(self.busted_seats),
            away_seats=[s for s in sorted(self.table.seating.seats) if self.table.is_sitting_out(s)],
            hands_played=self.hands_played,
            deals=self.deals,
            redeal_pending=self._redeal_pending,
        )
        if self.next_stakes is not None:
            snap.next_stakes.CopyFrom(self.next_stakes)
        return snap

    def snapshot(
        self, *, hand_in_progress: bool = False, seating_json: str | None = None, stacks: dict[int, int] | None = None
    ) -> dealer_pb2.TableSnapshot:
        if self.table.hand is not None:  # a hand on: the seating from before its deal (rolled back on restore)
            hand_in_progress, seating_json = True, self.before_deal
        snap = super().snapshot(hand_in_progress=hand_in_progress, seating_json=seating_json, stacks=stacks)
        snap.tournament.CopyFrom(self.tournament_snapshot())
        return snap

    def retirable(self) -> bool:
        return super().retirable() and not self.moves_out  # a move being delivered is in flight

    def imbalance(self, chips: int | None = None) -> int:
        return 0  # no escrow: tournament chips are not money

    # ------------------------------------------------------------------ the outbox
    def _queue_event(self, **kwargs: Any) -> None:
        self.t_sequence += 1
        self.outbox.append(
            tt.TournamentTableEvent(
                tournament_id=self.tournament_id, table=self.number, sequence=self.t_sequence, **kwargs
            )
        )

    def _applied_event(self, *, removed: int = 0) -> None:
        self._queue_event(command_applied=self.tournament_state(removed=removed))

    def _outbox_records(self, events: list[tt.TournamentTableEvent]) -> list[Outgoing]:
        return [
            Outgoing(
                self.deps.topics.tournament_tables,
                EVENT_TYPE,
                self.tournament_id,
                event.sequence,
                event,
                f"{self.table_id}:{event.sequence}",
            )
            for event in events
        ]

    async def _publish_pending(self) -> bool:
        """The hand's PHH record if one is pending (history and audits; no hand-settled event: no
        money moved) and the outbox, with the snapshot that no longer holds them, in one Kafka
        transaction of the table's partition: each goes out exactly once, and never from a replica
        that lost the table (its commit is refused: docs/sharding.md). When the commit fails they
        stay pending, in a snapshot written as usual, and are sent again (same event ids)."""
        pending, events = self.unpublished, list(self.outbox)
        if pending is None and not events:
            return True
        records: list[Outgoing] = []
        batch_id = self.table_id
        if pending is not None:
            published, _ = pending
            batch_id = published.hand_id
            records.append(
                Outgoing(
                    self.deps.topics.records,
                    "cardroom.dealer.hand_record.v1",
                    self.table_id,
                    published.hand_number,
                    published,
                    f"{published.hand_id}:record",
                )
            )
        if events:  # the batch's id names its whole content: a retry with more events is another batch
            batch_id += f":events:{events[0].sequence}-{events[-1].sequence}"
        records += self._outbox_records(events)
        self.unpublished, self.outbox = None, []  # the snapshot of the transaction: published
        if await self.commit_with_snapshot(batch_id, records):
            return True
        self.unpublished = pending
        self.outbox[:0] = events  # before any event queued meanwhile
        await self.write_snapshot()  # kept pending (and durable) until the retry
        return False

    async def _publish_settlement(self) -> None:
        """The end of a hand, and the table loop's retries: :meth:`_publish_pending`."""
        await self._publish_pending()

    @property
    def has_pending(self) -> bool:
        undelivered = any(m.move.command_id not in self._delivering for m in self.moves_out)
        return self.unpublished is not None or bool(self.outbox) or undelivered

    async def _retry_pending(self) -> None:
        await self._publish_pending()
        self._deliver_moves()

    async def commit(self) -> None:
        """After a change: the snapshot, in one transaction with the events it made (and a record
        still pending), then the moves."""
        if self.unpublished is None and not self.outbox:
            await self.write_snapshot()
        else:
            await self._publish_pending()
        self._deliver_moves()

    # ------------------------------------------------------------------ the hand cycle
    def _ready_players(self) -> int:
        asked = self._dealing is not None or self._asked() is not None
        if self.paused or self.closed or (self.opened.deal_on_request and not asked):
            return 0
        return sum(1 for st in self.table.seating.seats.values() if st.stack > 0)

    def _asked(self) -> tt.DealTournamentHandRequest | None:
        """deal_on_request: the deal asked for the table's next hand, if it was."""
        return next((d for d in self.deals if d.hand_number == self.table.hand_number + 1), None)

    def _next_seed(self) -> bytes:
        if self._dealing is None:
            return super()._next_seed()
        return hashlib.sha256(" ".join(self._dealing.deck).encode()).digest()  # the deck's own fingerprint

    def _deck(self, seed: bytes) -> object:
        if self._dealing is None:
            return super()._deck(seed)
        return [Card.parse(c) for c in self._dealing.deck]  # the tournament's deck, as the core deals it

    async def _start_hand(self, now: float) -> None:
        if self._ready_players() < 2:
            return
        self._apply_next_stakes()
        self.before_deal = seating_state.dump(self.table.seating)
        if self.opened.deal_on_request:  # the deal asked for is used up by this hand (a rolled-back
            self._dealing = self._asked()  # hand waits for a new one: its cards were seen)
            self.deals = [d for d in self.deals if d.hand_number > self.table.hand_number + 1]
            self._use_deal_stakes()
        try:
            await super()._start_hand(now)
        finally:
            self._dealing = None
        if self.table.hand is not None:
            self._redeal_pending = False  # dealt again: the commands that waited follow its end

    def _use_deal_stakes(self) -> None:
        """The hand is played at the stakes the tournament dealt it at: a level that began with the
        deal is this hand's, even though its SetTournamentLevel comes after the deal."""
        if self._dealing is None or not self._dealing.HasField("stakes"):
            return
        stakes = self._dealing.stakes
        if stakes != self.wire_stakes:
            self.table.set_stakes(core_stakes(self.spec.variant, stakes))
            self.wire_stakes = stakes
        if self.next_stakes is not None and self.next_stakes == stakes:
            self.next_stakes = None  # the level that follows the deal is already this hand's

    def _apply_next_stakes(self) -> None:
        if self.next_stakes is None or self.table.in_hand:
            return
        self.table.set_stakes(core_stakes(self.spec.variant, self.next_stakes))
        self.wire_stakes, self.next_stakes = self.next_stakes, None

    async def _finish_hand(self) -> None:
        hand = self.table.hand
        assert hand is not None
        self._emit_hand_events()
        now = self.clock.now()
        record = self.table.finish(now)
        hand_id = self.hand_id(record.number)
        published, settled = settlement(
            record, hand, self.table_id, hand_id, self.currency, self.seed, self.commitment, now
        )
        self._keep_player_hands(record, hand, hand_id)
        players = dict(zip(hand.seats, hand.players, strict=True))
        self.hands_played += 1
        self.busted_seats = {s for s, _ in record.busted}
        self._queue_event(
            hand_ended=tt.TournamentHandEnded(
                tournament_id=self.tournament_id,
                table=self.number,
                hand_id=hand_id,
                hand_number=record.number,
                starting=[
                    tt.TournamentSeat(seat=s, player_id=players[s], chips=c)
                    for s, c in sorted(record.starting_stacks.items())
                ],
                ending=[  # with each seat's Extra Time left: the tournament keeps it for his next table
                    tt.TournamentSeat(
                        seat=s, player_id=players[s], chips=c, time_bank_left=self.table.time_bank.get(s, 0.0)
                    )
                    for s, c in sorted(record.finishing_stacks.items())
                ],
                busted_seats=sorted(self.busted_seats),
                actions=actions_of(hand),
            )
        )
        self.unpublished = (published, settled)
        self.before_deal = seating_state.dump(self.table.seating)
        self._apply_next_stakes()  # between hands now: the next level, then the commands that waited
        self._apply_deferred()
        await self._publish_settlement()  # the record with the snapshot, in one transaction
        self._deliver_moves()
        nets = {s: record.finishing_stacks[s] - record.starting_stacks[s] for s in record.starting_stacks}
        self._emit(
            hand_finished=dealer_pb2.HandFinished(
                hand_number=record.number,
                hand_id=hand_id,
                seed=self.seed.hex(),
                commitment=self.commitment,
                results=[dealer_pb2.SeatAmount(seat=s, amount=n) for s, n in sorted(nets.items())],
            )
        )
        for seat, player in record.busted:
            self._seat_changed(seat, "busted", player, 0)
        metrics.HANDS.labels(self.variant).inc()
        metrics.HAND_SECONDS.labels(self.variant).observe(now - self.hand_started)
        metrics.POTS.labels(self.variant).observe(hand.pot_total)
        task = asyncio.create_task(self.deps.checker.check(hand, hand_id))
        self.deps.background.add(task)
        task.add_done_callback(self.deps.background.discard)
        if self.closed:
            self._end_watchers()
        self.next_hand_at = now + self.spec.hand_pause

    # ------------------------------------------------------------------ commands of the tournament
    def seen(self, command_id: str) -> bool:
        return command_id in self.applied or any(c.command_id == command_id for c in self.deferred)

    def _remember(self, command_id: str) -> None:
        self.applied.append(command_id)
        if len(self.applied) > APPLIED_KEPT:
            del self.applied[: len(self.applied) - APPLIED_KEPT]

    def _expect(self, version: int) -> None:
        """Optimistic concurrency: ``version`` 0 asks for none, any other must be the table's."""
        if version and version != self.version:
            raise precondition(
                f"version: table {self.number} of {self.tournament_id} is at version {self.version}, not {version};"
                " read it again (GetTournamentTable)",
                STALE_TABLE_VERSION,
            )

    def _open_check(self) -> None:
        if self.closed:
            raise precondition(f"table {self.number} of {self.tournament_id} is closed", "TABLE_CLOSED")

    def _check_seat_number(self, seat: int, field: str = "seat") -> None:
        if not 1 <= seat <= self.table.settings.seat_count:
            raise invalid(f"{field}: {seat} is outside 1..{self.table.settings.seat_count}", field=field)

    def _check_new_seat(self, seat: tt.TournamentSeat, field: str = "seat") -> None:
        ids.verify_player_id(seat.player_id, f"{field}.player_id")
        self._check_seat_number(seat.seat, f"{field}.seat")
        if seat.chips <= 0:
            raise invalid(f"{field}.chips: a seated player has chips (got {seat.chips})", field=f"{field}.chips")
        if seat.HasField("time_bank_left") and not 0 <= seat.time_bank_left <= MAX_TIME_BANK_SECONDS:
            raise invalid(
                f"{field}.time_bank_left: {seat.time_bank_left} is outside 0..{MAX_TIME_BANK_SECONDS:.0f} seconds",
                field=f"{field}.time_bank_left",
            )

    async def tournament_command(self, command: tt.TournamentTableCommand, version: int) -> tt.TournamentTableState:
        """Seat / remove / move / add chips / close: checked now, applied now between hands or
        kept for the end of the hand in progress (``deferred``)."""
        if self.seen(command.command_id):
            return self.tournament_state()
        self._open_check()
        self._expect(version)
        self._verify_command(command)
        self.version += 1
        if self._waits(command):
            self.deferred.append(command)
            await self.commit()
            return self.tournament_state(deferred=True)
        removed = self._apply(command)
        await self.commit()
        return self.tournament_state(removed=removed)

    def _verify_command(self, command: tt.TournamentTableCommand) -> None:
        """What can be checked when the command arrives (the rest when it is applied)."""
        kind = command.WhichOneof("command")
        if kind == "seat":
            self._check_new_seat(command.seat.seat)
            if not self._waits(command):
                self._seat_free(command.seat.seat)
        elif kind == "remove":
            self._check_seat_number(command.remove.seat)
            if not self._waits(command) and command.remove.seat not in self.table.seating.seats:
                if command.remove.seat not in self.busted_seats:
                    raise not_found(f"seat: no player at seat {command.remove.seat} of table {self.number}")
        elif kind == "add_chips":
            self._check_seat_number(command.add_chips.seat)
            if command.add_chips.chips <= 0:
                raise invalid("chips: must be positive", field="chips")
            if command.add_chips.seat not in self.table.seating.seats:
                raise not_found(f"seat: no player at seat {command.add_chips.seat} of table {self.number}")
        elif kind == "move":
            move = command.move
            self._check_seat_number(move.from_seat, "from_seat")
            if move.from_seat not in self.table.seating.seats:
                raise not_found(f"from_seat: no player at seat {move.from_seat} of table {self.number}")
            target = self.target_of(move)
            if target is None or target.closed:
                raise not_found(f"to_table: no open table {move.to_table} of {self.tournament_id}")
            target._check_seat_number(move.to_seat, "to_seat")
        elif kind != "close":
            raise invalid("command: empty")

    def _seat_free(self, seat: tt.TournamentSeat) -> None:
        taken = self.table.seating.seats.get(seat.seat)
        if taken is not None:
            raise precondition(
                f"seat: seat {seat.seat} of table {self.number} is taken by {taken.player}", "SEAT_TAKEN"
            )
        if self.table.seat_of(seat.player_id) is not None:
            raise precondition(f"player_id: {seat.player_id} is already seated at table {self.number}", "SEATED_TWICE")

    def _apply(self, command: tt.TournamentTableCommand) -> int:
        """Apply one command between hands (the chips a removal took off); queues its event."""
        kind = command.WhichOneof("command")
        removed = 0
        if kind == "seat":
            self._sit(command.seat.seat, arrival=command.command_id.endswith(":arrive"))
        elif kind == "remove":
            seat = command.remove.seat
            if seat in self.table.seating.seats:
                player = self.table.seating.seats[seat].player
                removed = self.table.stand_up(seat, self.clock.now()) or 0
                self._seat_changed(seat, "removed", player, removed)
        elif kind == "add_chips":
            self.table.add_tournament_chips(command.add_chips.seat, command.add_chips.chips)
            self._seat_changed(command.add_chips.seat, "chips_added")
        elif kind == "move":
            move = command.move
            state = self.table.seating.seats.get(move.from_seat)
            if state is None:
                raise TableError(f"no player at seat {move.from_seat} to move")
            leaving = tt.TournamentSeat(
                seat=move.to_seat,
                player_id=state.player,
                chips=state.stack,
                sitting_out=self.table.is_sitting_out(move.from_seat),
                time_bank_left=self.table.time_bank.get(move.from_seat, self.table.settings.time_bank_seconds),
            )
            self.table.stand_up(move.from_seat, self.clock.now())
            self.moves_out.append(tt.TournamentMoveOut(move=move, seat=leaving))
            self._seat_changed(move.from_seat, "moved_out", leaving.player_id, leaving.chips)
        elif kind == "close":
            for s in sorted(self.table.seating.seats):
                if self.table.seating.seats[s].stack:
                    log.info(
                        "tournament table closed with a player seated (the winner, or a break)",
                        extra={"table_id": self.table_id, "seat": s, "player_id": self.table.seating.seats[s].player},
                    )
                self.table.stand_up(s, self.clock.now())
            self.table.closed = True
            self._emit(table_closed=dealer_pb2.TableClosed(reason="closed by the tournament"))
            if self.table.hand is None:
                self._end_watchers()
        self._remember(command.command_id)
        self._applied_event(removed=removed)
        return removed

    def _sit(self, seat: tt.TournamentSeat, *, arrival: bool = False) -> None:
        """Seat a player; a moved player (``arrival``) whose seat was taken meanwhile gets the lowest
        free one: his chips are on no other table any more."""
        if arrival and seat.seat in self.table.seating.seats:
            free = self.table.free_seat()
            if free is None:
                raise TableError(f"table {self.number} is full: the moved player {seat.player_id} has no seat")
            log.warning("moved player's seat taken; seated at another", extra={"table_id": self.table_id, "seat": free})
            seat.seat = free
        self._seat_free(seat)
        bank = seat.time_bank_left if seat.HasField("time_bank_left") else None  # a moved player's, else full
        self.table.seat_tournament_player(seat.seat, seat.player_id, seat.chips, bank)
        if seat.sitting_out:
            self.table.sit_out(seat.seat, self.clock.now())
        self.busted_seats.discard(seat.seat)
        self._seat_changed(seat.seat, "seated")

    def _apply_deferred(self) -> None:
        waiting, self.deferred = self.deferred, []
        for command in waiting:
            try:
                self._apply(command)
            except (TableError, DealerError, ids.InvalidId) as exc:
                log.error(
                    "deferred tournament command not applied",
                    extra={"table_id": self.table_id, "command_id": command.command_id, "error": str(exc)},
                )
                self._remember(command.command_id)

    def _end_watchers(self) -> None:
        for w in list(self.watchers):
            w.end("closed")
        self.watchers.clear()

    async def set_level(self, request: tt.SetTournamentLevelRequest) -> tt.TournamentTableState:
        if self.seen(request.command_id):
            return self.tournament_state()
        self._open_check()
        self._expect(request.version)
        core_stakes(self.spec.variant, request.stakes)  # refused now, never at the next deal
        self.version += 1
        self.next_stakes = request.stakes
        self._apply_next_stakes()  # between hands: at once (the next hand is the next one dealt)
        self._remember(request.command_id)
        self._applied_event()
        await self.commit()
        return self.tournament_state()

    async def pause(self, request: tt.PauseTournamentTableRequest, on: bool) -> tt.TournamentTableState:
        if self.seen(request.command_id):
            return self.tournament_state()
        self._open_check()
        reason = request.reason or "paused"
        self.version += 1
        if on:
            self.paused.add(reason)
        elif request.reason:
            self.paused.discard(reason)
        else:
            self.paused.clear()
        if not self.paused:
            self.next_hand_at = min(self.next_hand_at, self.clock.now() + self.spec.hand_pause)
        self._remember(request.command_id)
        self._applied_event()
        await self.commit()
        return self.tournament_state()

    async def deal_hand(self, request: tt.DealTournamentHandRequest) -> tt.TournamentTableState:
        """deal_on_request: deal hand ``hand_number`` with the tournament's deck when between hands."""
        if self.seen(request.command_id) or (
            self.table.hand is not None and request.hand_number == self.table.hand_number
        ):
            return self.tournament_state()
        self._open_check()
        if not self.opened.deal_on_request:
            raise precondition(f"table {self.number} deals by itself (opened without deal_on_request)", "DEALS_ITSELF")
        if request.hand_number <= self.table.hand_number:
            raise precondition(
                f"hand_number: hand {request.hand_number} of table {self.number} was dealt already", "HAND_DEALT"
            )
        try:
            cards = [Card.parse(c) for c in request.deck]
        except ValueError as exc:
            raise invalid(f"deck: {exc}", field="deck") from None
        if len(set(cards)) != len(cards) or len(cards) < 2 * self.table.settings.seat_count:
            raise invalid("deck: distinct cards, enough for every seat", field="deck")
        if request.HasField("stakes"):
            core_stakes(self.spec.variant, request.stakes, "stakes")  # refused now, never at the deal
        self.deals = [d for d in self.deals if d.hand_number != request.hand_number] + [request]
        self._remember(request.command_id)
        self.next_hand_at = min(self.next_hand_at, self.clock.now())
        await self.write_snapshot()
        return self.tournament_state()

    # ------------------------------------------------------------------ moves between tables
    def target_of(self, move: tt.MoveTournamentPlayerRequest) -> TournamentTableActor | None:
        actor = self.find(ids.tournament_table_id(self.tournament_id, move.to_table))
        return actor if isinstance(actor, TournamentTableActor) else None

    def _deliver_moves(self) -> None:
        for out in self.moves_out:
            key = out.move.command_id
            if key not in self._delivering:
                self._delivering.add(key)
                task = asyncio.create_task(self._deliver(out))
                self.deps.background.add(task)
                task.add_done_callback(self.deps.background.discard)

    async def _deliver(self, out: tt.TournamentMoveOut) -> None:
        """Seat the moved player at the other table (outside this actor: two tables moving players
        to each other never wait on one another), then forget the move here."""
        key = out.move.command_id
        try:
            target = self.target_of(out.move)
            if target is None:
                raise not_found(f"no table {out.move.to_table} of {self.tournament_id} on this dealer")
            arrival = tt.TournamentTableCommand(
                command_id=f"{key}:arrive", seat=tt.SeatTournamentPlayerRequest(seat=out.seat)
            )
            await target.submit(lambda: target.arrive(arrival), arrival.command_id, _fingerprint(arrival))
            await self.submit(lambda: self._moved(key))
        except Exception as exc:  # noqa: BLE001 - kept in moves_out, redone at the next retry
            log.error(
                "move not delivered; will retry", extra={"table_id": self.table_id, "move": key, "error": repr(exc)}
            )
        finally:
            self._delivering.discard(key)

    async def arrive(self, arrival: tt.TournamentTableCommand) -> tt.TournamentTableState:
        """A player moved here from another table (his chips with him)."""
        if self.seen(arrival.command_id):
            return self.tournament_state()
        self._open_check()
        if not self.newcomers_wait and self.table.free_seat() is None:
            raise precondition(f"table {self.number} is full", "TABLE_FULL")
        self.version += 1
        if self.newcomers_wait:
            self.deferred.append(arrival)
            await self.commit()
            return self.tournament_state(deferred=True)
        self._apply(arrival)
        await self.commit()
        return self.tournament_state()

    async def _moved(self, key: str) -> None:
        self.moves_out = [m for m in self.moves_out if m.move.command_id != key]
        await self.write_snapshot()

    # ------------------------------------------------------------------ players' seat commands
    def _not_here(self, what: str) -> DealerError:
        return precondition(
            f"table {self.table_id} is a tournament table: {what}; the tournament seats and moves its players",
            "TOURNAMENT_TABLE",
        )

    async def sit_down(self, req: dealer_pb2.SitDownRequest, key: str) -> dealer_pb2.SeatResponse:
        raise self._not_here("no buy-in")

    async def add_chips(self, req: dealer_pb2.AddChipsRequest, key: str) -> dealer_pb2.SeatResponse:
        raise self._not_here("chips come only from re-buys and add-ons")

    async def stand_up(self, req: dealer_pb2.SeatCommandRequest, key: str) -> dealer_pb2.StandUpResponse:
        raise self._not_here("a player cannot leave with his chips (sit out instead)")

    async def close(self) -> asyncio.Future[list[dealer_pb2.SeatView]]:
        raise self._not_here("only the tournament closes it")

    # ------------------------------------------------------------------ crash recovery
    @classmethod
    def from_snapshot(
        cls, table_id: str, snap: dealer_pb2.TableSnapshot, deps: Deps, find: Finder
    ) -> TournamentTableActor:
        t = snap.tournament
        actor = cls(table_id, t.opened, deps, find)
        actor.restore(snap)
        actor.version = t.version
        actor.paused = set(t.paused)
        actor.wire_stakes.CopyFrom(t.stakes)
        actor.table.set_stakes(core_stakes(actor.spec.variant, t.stakes))
        actor.next_stakes = t.next_stakes if t.HasField("next_stakes") else None
        actor.deferred = list(t.deferred)
        actor.applied = list(t.applied_commands)
        actor.outbox = list(t.outbox)
        actor.t_sequence = t.event_sequence
        actor.moves_out = list(t.moves_out)
        actor.busted_seats = set(t.busted_seats)
        actor.hands_played = t.hands_played
        actor.deals = list(t.deals)
        for seat in t.away_seats:
            if seat in actor.table.seating.seats:
                actor.table.sit_out(seat)
        for seat, bank in t.time_banks.items():  # an older snapshot's (restore() takes TableSnapshot.time_banks)
            if seat in actor.table.seating.seats:
                actor.table.time_bank[seat] = bank
        actor.before_deal = seating_state.dump(actor.table.seating)
        if snap.hand_in_progress:  # the same hand again: its number, its button, its stacks
            actor.table.hand_number = max(0, snap.hands_dealt - 1)
            actor._rolled_back = True
        actor._redeal_pending = snap.hand_in_progress or t.redeal_pending  # (a restart before the re-deal)
        actor._cancelled = False
        actor.reconcile_due = ""  # no escrow to reconcile: tournament chips never touch the wallet
        return actor

    async def recover(self, close: bool) -> None:
        """Tell the watchers and the tournament that the hand in progress was rolled back, then
        redo the outbox and the moves (``close`` is for cash tables: a tournament table goes on)."""
        self._emit(restored=dealer_pb2.TableRestored(snapshot_sequence=self.restored_from, hand_cancelled=False))
        if self._rolled_back:
            stacks = self.seats()
            number = self.table.hand_number + 1
            self._queue_event(
                hand_ended=tt.TournamentHandEnded(
                    tournament_id=self.tournament_id,
                    table=self.number,
                    hand_id=self.hand_id(number),
                    hand_number=number,
                    starting=stacks,
                    ending=stacks,
                    rolled_back=True,
                )
            )
            log.warning(
                "hand in progress rolled back by a dealer restart; dealt again (rules/000)",
                extra={"table_id": self.table_id, "hand_id": self.hand_id(number)},
            )
        await self.commit()
        self.next_hand_at = 0.0


__all__ = ["EVENT_TYPE", "STALE_TABLE_VERSION", "TournamentTableActor"]
