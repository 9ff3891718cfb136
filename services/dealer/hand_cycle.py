"""The hand cycle: deal, the action clock, settle, pause, deal — and closing between hands.

The actor's loop calls :meth:`HandCycle._advance` after every command and whenever
:meth:`HandCycle._wake_in` says something falls due (the turn's deadline, the next deal,
a write-ahead retry), all on the injected clock.

* start of hand: snapshot marked ``hand_in_progress`` with the stacks before the deal;
* end of hand: the hand record + hand-settled event + the snapshot with the final stacks, in one
  Kafka transaction (:mod:`dealer.writeahead`) -> cash out those who left -> ``HandFinished``; no
  deal while the last hand's settlement is unsent.
"""

from __future__ import annotations

import asyncio

from cardroom.core.engine import Hand
from cardroom.core.engine.dealing import DeckSource
from cardroom.core.shuffle import commitment, deck_from_seed, new_seed, reshuffle_seed
from cardroom.core.table import HandRecord, TableError
from cardroom.core.table.clock import TimeoutDecision
from cardroom.v1 import common_pb2, dealer_pb2
from dealer import metrics
from dealer.errors import DealerError
from dealer.settlement import settlement
from dealer.snapshots import leave_key
from dealer.state import log
from dealer.writeahead import RETRY_SECONDS, WriteAhead


class HandCycle(WriteAhead):
    """What the table does by itself, as time passes."""

    def _ready_players(self) -> int:
        return sum(1 for s in self.table.seating.seats.values() if s.ready)

    def _wake_in(self) -> float | None:
        now = self.clock.now()
        times: list[float] = []
        if self.table.in_hand and self.table.clock is not None:
            times.append(self.table.clock.deadline)
        elif self.table.hand is not None:
            times.append(now)
        elif (
            not self.closed
            and self.unpublished is None
            and (self.closing or (self._ready_players() >= 2 and not self.draining))
        ):
            times.append(self.next_hand_at)  # (no deal while the last hand's settlement is unsent)
        if not self.table.in_hand and not self.closed:
            due = self.table.stand_up_deadline()
            if due is not None:
                times.append(due)
        if self.has_pending:
            times.append(self._retry_at)
        return max(0.0, min(times) - now) if times else None

    def _time_bank_left(self) -> float:
        return sum(self.table.time_bank.values())

    def _observe_time_bank(self, before: float) -> None:
        """Count the time-bank seconds a tick or an action consumed (the bank only shrinks in a hand)."""
        used = before - self._time_bank_left()
        if used > 0:
            metrics.TIME_BANK_SECONDS.labels(self.variant).inc(used)

    async def _advance(self) -> None:
        """Clocks, settlement, retries and the next deal — whatever is due now; nothing once the table's
        hold ended (it moved: its owner deals it) — the loop logs that and waits."""
        self.verify_holding()
        now = self.clock.now()
        if now >= self._retry_at and self.has_pending:
            self._retry_at = now + RETRY_SECONDS
            await self._retry_pending()
        if self.table.in_hand:
            bank = self._time_bank_left()
            bank_started = False
            for seat, decision in self.table.tick(now):
                metrics.TIMEOUTS.labels(self.variant, decision.value).inc()
                if decision is TimeoutDecision.USE_TIME_BANK:
                    metrics.TIME_BANK_USES.labels(self.variant).inc()
                    bank_started = True
                elif decision is TimeoutDecision.ARTIFICIAL_ALL_IN:
                    metrics.ARTIFICIAL_ALL_INS.labels(self.variant).inc()
                log.info("turn timed out", extra={"table_id": self.table_id, "seat": seat, "decision": decision.value})
            self._observe_time_bank(bank)
            self._emit_hand_events(timeout=True, turn_changed=bank_started)  # the time bank runs: a new turn clock
        if self.table.hand is not None and not self.table.in_hand:
            await self._finish_hand()
        if self.table.hand is None and not self.closed:
            if not self.closing:
                await self._stand_up_absent(now)
            if self.closing:
                await self._close_now()
            elif now >= self.next_hand_at and self.unpublished is None and not self.draining:
                if self.reconcile_due:  # between hands: the wallet had the pause to apply the last one
                    await self._reconcile_escrow()
                await self._start_hand(now)
        self._update_imbalance()

    @property
    def drained(self) -> bool:
        """Draining and nothing left to finish: no hand, its settlement sent."""
        return self.draining and self.table.hand is None and self.unpublished is None

    async def drain(self) -> None:
        """SIGTERM (issue 14 item 11): deal no new hand; the one in progress plays on to its end."""
        self.draining = True

    def _next_seed(self) -> bytes:
        """The next hand's shuffle seed (committed to before the deal, revealed after it)."""
        return new_seed()

    def _deck(self, seed: bytes) -> object:
        """The next hand's deck from its seed (with the reshuffle of draw games)."""
        return DeckSource(deck_from_seed(seed), reshuffle_seed(seed))

    async def _start_hand(self, now: float) -> None:
        if self._ready_players() < 2:
            return
        seed = self._next_seed()
        try:
            plan = self.table.start_hand(self._deck(seed), now)  # type: ignore[arg-type]
        except TableError as exc:
            log.warning("cannot deal", extra={"table_id": self.table_id, "error": str(exc)})
            plan = None
        if plan is None:
            self.next_hand_at = now + 1.0
            return
        self.seed, self.commitment = seed, commitment(seed)
        self.hand_started = now
        self.shown = set()
        self.pots_sent = ()
        self.cursor = 0
        hand = self.table.hand
        assert hand is not None
        # durable before anyone sees the deal (a crash after it cancels this hand, rules/003), but
        # in the request of the events fired meanwhile: no player is waiting on the deal
        # (the seating as a rollback of this hand leaves it: from before the deal)
        await self.write_snapshot(linger=True)
        started = dealer_pb2.HandStarted(
            hand_number=self.table.hand_number,
            hand_id=self.hand_id(),
            button=plan.button or 0,
            commitment=self.commitment,
            seats=[
                dealer_pb2.SeatView(seat=s, player_id=p, stack=c, in_hand=True)
                for s, p, c in zip(hand.seats, hand.players, hand.starting_stacks, strict=True)
            ],
        )
        self._emit(hand_started=started)
        self._emit_hand_events()

    async def _finish_hand(self) -> None:
        hand = self.table.hand
        assert hand is not None
        self._emit_hand_events()
        record = self.table.finish(self.clock.now())
        hand_id = self.hand_id(record.number)
        published, settled = settlement(
            record, hand, self.table_id, hand_id, self.currency, self.seed, self.commitment, self.clock.now()
        )
        nets = {r.seat: r.net for r in settled.results}
        self._keep_player_hands(record, hand, hand_id)
        self.escrow -= record.rake
        for seat, player, chips in record.departed:
            self._queue_cashout(player, chips, leave_key(hand_id, seat))
        self.unpublished = (published, settled)
        self.last_settled_hand_id = hand_id
        await self._publish_settlement()  # with its snapshot, in one transaction
        await self._flush_cashouts()
        self._emit(
            hand_finished=dealer_pb2.HandFinished(
                hand_number=record.number,
                hand_id=hand_id,
                rake=record.rake,
                seed=self.seed.hex(),
                commitment=self.commitment,
                results=[dealer_pb2.SeatAmount(seat=s, amount=n) for s, n in sorted(nets.items())],
            )
        )
        for seat, player, chips in record.departed:
            self._seat_changed(seat, "stood_up", player, chips)
        for seat in self.table.auto_sat_out:
            log.info("sat out (timed out / away)", extra={"table_id": self.table_id, "seat": seat})
            self._seat_changed(seat, "timed_out_sat_out")
        await self._add_queued_chips()
        metrics.HANDS.labels(self.variant).inc()
        metrics.HAND_SECONDS.labels(self.variant).observe(self.clock.now() - self.hand_started)
        metrics.POTS.labels(self.variant).observe(hand.pot_total)
        self.lobby_stats.add_hand(self.clock.now(), hand.pot_total)
        if record.rake:
            metrics.RAKE.labels(common_pb2.Currency.Name(self.currency)).inc(record.rake)
        task = asyncio.create_task(self.deps.checker.check(hand, hand_id))
        self.deps.background.add(task)
        task.add_done_callback(self.deps.background.discard)
        self.next_hand_at = self.clock.now() + self.spec.hand_pause

    def _keep_player_hands(self, record: HandRecord, hand: Hand, hand_id: str) -> None:
        """Each player's own redacted record of the hand, for ``PlayerHands`` (never fails the hand)."""
        try:
            self.deps.player_hands.add_hand(
                record, hand, self.table_id, hand_id, self.variant, self.currency, self.clock.now()
            )
        except Exception:
            log.exception("player hand records not kept", extra={"table_id": self.table_id, "hand_id": hand_id})

    async def _add_queued_chips(self) -> None:
        """Chips asked for during the hand (or the hand a restore cancelled), moved from the wallet and added
        before the next deal. A seat's queue leaves the table's state as its write-ahead buy-in enters it
        (one snapshot): a crash in between loses no request and adds none twice; its requests are done from
        then on, whatever the outcome (a request sent again after a restart adds nothing)."""
        self.table.take_queued_chips()  # the core's running totals (its top-up check): the entries hold them too
        unwritten = False
        for seat in sorted(self.chips_queued):
            queued = self.chips_queued.pop(seat)
            self.buy_ins_done.extend(queued.requests)
            unwritten = True
            state = self.table.seating.seats.get(seat)
            try:
                if state is None or state.player != queued.player_id:
                    raise TableError("the player left the table")
                self.table.verify_add_chips(seat, queued.amount)
                await self._move_in(queued.player_id, seat, queued.amount, False, queued.idempotency_key)
            except (TableError, DealerError) as exc:
                log.info("queued chips not added", extra={"table_id": self.table_id, "seat": seat, "error": str(exc)})
                if state is not None:
                    self._seat_changed(seat, "chips_refused")
                continue
            self.table.add_chips(seat, queued.amount)
            unwritten = not await self.write_snapshot()
            self._seat_changed(seat, "chips_added")
        if unwritten:
            await self.write_snapshot()

    async def _stand_up_absent(self, now: float) -> None:
        """Cash games: a player sat out for the table's limit is stood up, his chips cashed out."""
        overdue = self.table.overdue_sit_outs(now)
        if not overdue:
            return
        for seat in overdue:
            player = self.table.seating.seats[seat].player
            chips = self.table.stand_up(seat, now)
            assert chips is not None
            self._queue_cashout(player, chips, f"dealer:absent:{self.table_id}:{self.table.hand_number}:{seat}")
            self._seat_changed(seat, "absent_stood_up", player, chips)
        await self.write_snapshot()
        await self._flush_cashouts()

    async def _close_now(self) -> None:
        """Close between hands: every stack cashed out, watchers told, close waiters answered."""
        cashed: list[dealer_pb2.SeatView] = []
        for seat in sorted(self.table.seating.seats):
            player = self.table.seating.seats[seat].player
            chips = self.table.stand_up(seat)
            assert chips is not None
            self._queue_cashout(player, chips, f"dealer:close:{self.table_id}:{seat}:{player}")
            cashed.append(dealer_pb2.SeatView(seat=seat, player_id=player, stack=chips))
        self.table.closed = True
        self.closing = False
        self.cashed_out_at_close = cashed
        await self.write_snapshot()
        await self._flush_cashouts()
        self._emit(table_closed=dealer_pb2.TableClosed(reason="closed"))
        for w in list(self.watchers):
            w.end("closed")
        self.watchers.clear()
        for waiter in self.close_waiters:
            if not waiter.done():
                waiter.set_result(cashed)
        self.close_waiters.clear()
