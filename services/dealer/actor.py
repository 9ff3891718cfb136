"""One table as an asyncio actor: its own command queue and task, no lock shared with others.

Everything that changes the table runs inside the actor's task, one command at a time:
gRPC commands (queued by :meth:`TableActor.submit`), the action clock (the loop wakes at the
turn's deadline and calls ``Table.tick``) and the hand cycle (deal, settle, pause, deal).
Reads (lobby, state, Watch subscription) look at the state between two awaits, so they
always see it consistent.

Money and durability (write-ahead via the table snapshot, see :mod:`dealer.restore`):

* buy-in / add-chips: snapshot with the pending buy-in -> wallet transfer (key from the
  request id) -> seat / stack -> snapshot;
* stand-up / close: seat freed -> snapshot with the pending cash-out -> wallet transfer ->
  snapshot;
* end of hand: snapshot with final stacks and the pending hand record + hand-settled event
  -> publish both (deterministic event ids) -> snapshot;
* start of hand: snapshot marked ``hand_in_progress`` with the stacks before the deal.

``escrow`` is what the table's escrow account holds once the wallet has applied everything
sent; ``escrow == chips on the table + pending cash-outs`` always (the imbalance metric).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from cardroom.core.cards import Card
from cardroom.core.engine import ActionKind, ActionTaken, DrawMade, HandShown, IllegalAction
from cardroom.core.engine.dealing import DeckSource
from cardroom.core.shuffle import commitment, deck_from_seed, new_seed, reshuffle_seed
from cardroom.core.table import Table, TableError
from cardroom.v1 import common_pb2, dealer_pb2, events_pb2
from dealer import metrics, redact, seating_state, views
from dealer.deps import Deps, Watcher
from dealer.settlement import settlement
from dealer.errors import DealerError, exists, invalid, not_found, precondition
from dealer.tablespec import TableSpec, check_id

log = logging.getLogger("dealer.table")
T = TypeVar("T")
_DONE_REQUESTS = 5000
_WATCH_BUFFER = 5000
_RETRY_SECONDS = 2.0
_SEQUENCE_GAP = 100_000   # > events of any hand: restored sequences stay increasing
_TO_AMOUNT = frozenset((ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE))


@dataclass
class _Command:
    run: Callable[[], Awaitable[Any]]
    reply: asyncio.Future[Any]
    request_id: str
    fingerprint: bytes


class TableActor:
    """A table, its money and its watchers (see the module docstring)."""

    def __init__(self, table_id: str, spec: TableSpec, deps: Deps) -> None:
        self.table_id = table_id
        self.spec = spec
        self.deps = deps
        self.variant = spec.variant.code
        self.table: Table = spec.new_table(deps.allowance(spec.settings.all_in_allowance), table_id)
        self.escrow = 0
        self.pending_cashouts: list[dealer_pb2.PendingCashOut] = []
        self.pending_buy_in: dealer_pb2.PendingBuyIn | None = None
        self.unpublished: tuple[dealer_pb2.HandRecordPublished, events_pb2.HandSettled] | None = None
        self.sequence = 0
        self.watchers: set[Watcher] = set()
        self.shown: set[int] = set()
        self.cursor = 0
        self.seed = b""
        self.commitment = ""
        self.hand_started = 0.0
        self.next_hand_at = 0.0
        self.closing = False
        self.close_waiters: list[asyncio.Future[list[dealer_pb2.SeatView]]] = []
        self.cashed_out_at_close: list[dealer_pb2.SeatView] = []
        self.done: OrderedDict[str, tuple[bytes, Any]] = OrderedDict()
        self.queue: asyncio.Queue[_Command] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self._retry_at = 0.0
        self._cancelled = False

    # ------------------------------------------------------------------ lifecycle
    @property
    def closed(self) -> bool:
        return self.table.closed

    def start(self) -> None:
        self.task = asyncio.create_task(self._loop(), name=f"table:{self.table_id}")

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            try:
                await self.task
            except asyncio.CancelledError:
                pass
        for w in list(self.watchers):
            w.end("stopping")

    async def submit(self, run: Callable[[], Awaitable[T]], request_id: str = "", fingerprint: bytes = b"") -> T:
        """Run ``run`` inside the actor; with a ``request_id`` a repeat returns the first result."""
        reply: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(_Command(run, reply, request_id, fingerprint))
        return await reply

    async def _loop(self) -> None:
        while True:
            command = await self._next_command(self._wake_in())
            if command is not None:
                await self._execute(command)
            try:
                await self._advance()
            except Exception:
                log.exception("table step failed", extra={"table_id": self.table_id})
                await asyncio.sleep(1.0)

    async def _next_command(self, wait: float | None) -> _Command | None:
        """A queued command at once, else wait for one at most ``wait`` seconds (None: forever)."""
        try:
            return self.queue.get_nowait()
        except asyncio.QueueEmpty:
            if wait is not None and wait <= 0:
                return None
        try:
            return await asyncio.wait_for(self.queue.get(), wait)
        except TimeoutError:
            return None

    def _wake_in(self) -> float | None:
        now = time.time()
        times: list[float] = []
        if self.table.in_hand and self.table.clock is not None:
            times.append(self.table.clock.deadline)
        elif self.table.hand is not None:
            times.append(now)
        elif not self.closed and self.unpublished is None and (self.closing or self._ready_players() >= 2):
            times.append(self.next_hand_at)   # (no deal while the last hand's settlement is unsent)
        if self.pending_cashouts or self.pending_buy_in is not None or self.unpublished is not None:
            times.append(self._retry_at)
        return max(0.0, min(times) - now) if times else None

    async def _execute(self, command: _Command) -> None:
        if command.reply.done():
            return
        if command.request_id:
            seen = self.done.get(command.request_id)
            if seen is not None:
                if seen[0] != command.fingerprint:
                    command.reply.set_exception(exists(
                        f"request_id {command.request_id!r} was already used for a different request"))
                else:
                    command.reply.set_result(seen[1])
                return
        try:
            result = await command.run()
        except DealerError as err:
            command.reply.set_exception(err)
            return
        except Exception as exc:
            log.exception("command failed", extra={"table_id": self.table_id})
            command.reply.set_exception(exc)
            return
        if command.request_id:
            self.done[command.request_id] = (command.fingerprint, result)
            while len(self.done) > _DONE_REQUESTS:
                self.done.popitem(last=False)
        command.reply.set_result(result)

    async def _advance(self) -> None:
        """Clocks, settlement, retries and the next deal — whatever is due now."""
        now = time.time()
        if now >= self._retry_at and (self.pending_cashouts or self.unpublished or self.pending_buy_in):
            self._retry_at = now + _RETRY_SECONDS
            await self._retry_pending()
        if self.table.in_hand:
            for seat, decision in self.table.tick(now):
                metrics.TIMEOUTS.labels(self.variant, decision.value).inc()
                log.info("turn timed out", extra={"table_id": self.table_id, "seat": seat,
                                                  "decision": decision.value})
            self._emit_hand_events(timeout=True)
        if self.table.hand is not None and not self.table.in_hand:
            await self._finish_hand()
        if self.table.hand is None and not self.closed:
            if self.closing:
                await self._close_now()
            elif now >= self.next_hand_at and self.unpublished is None:
                await self._start_hand(now)
        self._update_imbalance()

    def _ready_players(self) -> int:
        return sum(1 for s in self.table.seating.seats.values() if s.ready)

    # ------------------------------------------------------------------ events out
    def _stamp(self, event: dealer_pb2.TableEvent) -> dealer_pb2.TableEvent:
        self.sequence += 1
        event.table_id = self.table_id
        event.sequence = self.sequence
        event.hand_number = self.table.hand_number
        event.time.CopyFrom(views.timestamp(time.time()))
        return event

    def _broadcast(self, item: redact.Outgoing) -> None:
        self._stamp(item.event)
        for w in list(self.watchers):
            seat = views.seat_of(self.table, w.viewer) if w.viewer else None
            try:
                w.queue.put_nowait(redact.for_viewer(item, seat))
            except asyncio.QueueFull:
                log.warning("slow watcher dropped", extra={"table_id": self.table_id, "viewer": w.viewer})
                self.watchers.discard(w)
                w.end("slow")
        self.deps.publisher.fire(self.deps.topics.events, type="cardroom.dealer.table_event.v1",
                                 key=self.table_id, sequence=self.sequence,
                                 payload=redact.for_viewer(item, None))

    def _emit(self, **kwargs: Any) -> None:
        self._broadcast(redact.Outgoing(dealer_pb2.TableEvent(**kwargs)))

    def _emit_hand_events(self, timeout: bool = False) -> None:
        hand = self.table.hand
        if hand is None:
            return
        if self.cursor < len(hand.events):
            players = dict(zip(hand.seats, hand.players))
            for ev in hand.events[self.cursor:]:
                if isinstance(ev, HandShown):
                    self.shown.add(ev.seat)
                item = redact.from_engine(ev, players, timeout)
                if item is not None:
                    self._broadcast(item)
            self.cursor = len(hand.events)
            to_act = views.legal_view(self.table)
            if to_act is not None:
                self._emit(turn_started=dealer_pb2.TurnStarted(to_act=to_act))

    def _seat_changed(self, seat: int, change: str, player: str = "", stack: int = 0) -> None:
        if seat in self.table.seating.seats:
            view = views.seat_view(self.table, seat)
        else:
            view = dealer_pb2.SeatView(seat=seat, player_id=player, stack=stack)
        self._emit(seat_changed=dealer_pb2.SeatChanged(seat=view, change=change))

    # ------------------------------------------------------------------ reads
    def info(self) -> dealer_pb2.TableInfo:
        return dealer_pb2.TableInfo(
            table_id=self.table_id, config=self.spec.config, seats_taken=len(self.table.seating.seats),
            hands_dealt=self.table.hand_number, closed=self.closed,
            min_buy_in=self.spec.buy_in.minimum, max_buy_in=self.spec.buy_in.maximum or 0)

    def state(self, viewer: str) -> dealer_pb2.TableState:
        return views.table_state(self.info(), self.table, viewer, self.shown, self.commitment)

    def subscribe(self, viewer: str) -> tuple[Watcher, dealer_pb2.TableState]:
        """A new watcher and the state it starts from (no event can fall in between)."""
        watcher = Watcher(viewer, asyncio.Queue(_WATCH_BUFFER))
        state = self.state(viewer)
        if self.closed:
            watcher.end("closed")
        else:
            self.watchers.add(watcher)
        return watcher, state

    def unsubscribe(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)

    def chips(self) -> int:
        return self.table.chips_on_table()

    def imbalance(self) -> int:
        if self.table.hand is not None and not self.table.in_hand:
            return 0   # pots awarded, settlement under way
        pending = sum(c.amount for c in self.pending_cashouts)
        return self.escrow - self.table.chips_on_table() - pending

    def _update_imbalance(self) -> None:
        off = self.imbalance()
        if off:
            log.error("escrow does not match the chips on the table",
                      extra={"table_id": self.table_id, "imbalance": off})

    # ------------------------------------------------------------------ snapshots
    def snapshot(self, *, hand_in_progress: bool = False, seating_json: str | None = None,
                 stacks: dict[int, int] | None = None) -> dealer_pb2.TableSnapshot:
        seating = self.table.seating
        snap = dealer_pb2.TableSnapshot(
            table_id=self.table_id, config=self.spec.config, hands_dealt=self.table.hand_number,
            closed=self.closed, button=seating.last_button or 0,
            seating_json=seating_json if seating_json is not None else seating_state.dump(seating),
            hand_in_progress=hand_in_progress, escrow=self.escrow, pending_cashouts=self.pending_cashouts,
            event_sequence=self.sequence, total_rake=self.table.total_rake)
        for seat, state in sorted(seating.seats.items()):
            chips = stacks.get(seat, state.stack) if stacks is not None else state.stack
            snap.seats.append(dealer_pb2.SeatView(seat=seat, player_id=state.player, stack=chips,
                                                  sitting_out=state.sitting_out))
        if self.pending_buy_in is not None:
            snap.pending_buy_in.CopyFrom(self.pending_buy_in)
        if self.unpublished is not None:
            snap.pending_record.CopyFrom(self.unpublished[0])
            snap.pending_settled.CopyFrom(self.unpublished[1])
        snap.written_at.CopyFrom(views.timestamp(time.time()))
        return snap

    async def write_snapshot(self, **kwargs: Any) -> None:
        """Persist the table (the compacted snapshots topic); failures are logged, not fatal."""
        if not self.deps.publisher.enabled:
            return
        if self.table.in_hand and "hand_in_progress" not in kwargs:
            kwargs["hand_in_progress"] = True
        snap = self.snapshot(**kwargs)
        try:
            await self.deps.publisher.publish(self.deps.topics.snapshots, type="cardroom.dealer.table_snapshot.v1",
                                              key=self.table_id, sequence=self.sequence, payload=snap)
            metrics.SNAPSHOTS.inc()
        except Exception as exc:
            log.error("snapshot not written", extra={"table_id": self.table_id, "error": str(exc)})

    # ------------------------------------------------------------------ money
    @property
    def currency(self) -> int:
        return self.spec.currency

    async def _retry_pending(self) -> None:
        if self.unpublished is not None:
            await self._publish_settlement()
        if self.pending_buy_in is not None:
            await self._resolve_buy_in()
        if self.pending_cashouts:
            await self._flush_cashouts()

    async def _flush_cashouts(self) -> None:
        changed = False
        for c in list(self.pending_cashouts):
            try:
                await self.deps.wallet.cash_out(self.table_id, c.player_id, self.currency, c.amount,
                                                c.idempotency_key)
            except DealerError as err:
                log.warning("cash-out pending", extra={"table_id": self.table_id, "player_id": c.player_id,
                                                       "error": err.message})
                continue
            self.pending_cashouts.remove(c)
            self.escrow -= c.amount
            changed = True
        if changed:
            await self.write_snapshot()

    async def _resolve_buy_in(self) -> None:
        """Redo a buy-in whose outcome is unknown (restore, or the wallet was unreachable)."""
        p = self.pending_buy_in
        assert p is not None
        try:
            await self.deps.wallet.buy_in(self.table_id, p.player_id, self.currency, p.amount, p.idempotency_key)
        except DealerError as err:
            if err.code.name == "UNAVAILABLE":
                return
            self.pending_buy_in = None   # it did not happen
            await self.write_snapshot()
            return
        self.pending_buy_in = None
        self.escrow += p.amount
        seat = views.seat_of(self.table, p.player_id)
        try:
            if seat == p.seat and not self.table.dealt_in(seat):
                self.table.seating.set_stack(seat, self.table.seating.seats[seat].stack + p.amount)
            elif seat is None and p.seat not in self.table.seating.seats:
                self.table.sit_down(p.seat, p.player_id, p.amount, post_now=p.post_now)
            else:
                raise TableError("the seat is no longer available")
        except TableError:
            self.pending_cashouts.append(dealer_pb2.PendingCashOut(
                player_id=p.player_id, amount=p.amount, idempotency_key=p.idempotency_key + ":refund"))
        await self.write_snapshot()

    async def _move_in(self, player: str, seat: int, amount: int, post_now: bool, key: str) -> None:
        """Write-ahead, then the wallet buy-in; on a wallet refusal nothing is left pending."""
        self.pending_buy_in = dealer_pb2.PendingBuyIn(player_id=player, seat=seat, amount=amount,
                                                      idempotency_key=key, post_now=post_now)
        await self.write_snapshot()
        try:
            await self.deps.wallet.buy_in(self.table_id, player, self.currency, amount, key)
        except DealerError:
            self.pending_buy_in = None
            await self.write_snapshot()
            raise
        self.pending_buy_in = None
        self.escrow += amount

    def _queue_cashout(self, player: str, amount: int, key: str) -> None:
        if amount > 0:
            self.pending_cashouts.append(dealer_pb2.PendingCashOut(player_id=player, amount=amount,
                                                                   idempotency_key=key))

    # ------------------------------------------------------------------ hands
    async def _start_hand(self, now: float) -> None:
        if self._ready_players() < 2:
            return
        before = seating_state.dump(self.table.seating)
        seed = new_seed()
        try:
            plan = self.table.start_hand(DeckSource(deck_from_seed(seed), reshuffle_seed(seed)), now)  # type: ignore[arg-type]
        except TableError as exc:
            log.warning("cannot deal", extra={"table_id": self.table_id, "error": str(exc)})
            plan = None
        if plan is None:
            self.next_hand_at = now + 1.0
            return
        self.seed, self.commitment = seed, commitment(seed)
        self.hand_started = now
        self.shown = set()
        self.cursor = 0
        hand = self.table.hand
        assert hand is not None
        await self.write_snapshot(hand_in_progress=True, seating_json=before)
        started = dealer_pb2.HandStarted(
            hand_number=self.table.hand_number, hand_id=self.hand_id(), button=plan.button or 0,
            commitment=self.commitment,
            seats=[dealer_pb2.SeatView(seat=s, player_id=p, stack=c, in_hand=True)
                   for s, p, c in zip(hand.seats, hand.players, hand.starting_stacks)])
        self._emit(hand_started=started)
        self._emit_hand_events()

    def hand_id(self, number: int | None = None) -> str:
        return f"{self.table_id}-{self.table.hand_number if number is None else number}"

    async def _finish_hand(self) -> None:
        hand = self.table.hand
        assert hand is not None
        self._emit_hand_events()
        record = self.table.finish()
        hand_id = self.hand_id(record.number)
        published, settled = settlement(record, hand, self.table_id, hand_id, self.currency, self.seed,
                                        self.commitment)
        nets = {r.seat: r.net for r in settled.results}
        self.escrow -= record.rake
        for seat, player, chips in record.departed:
            self._queue_cashout(player, chips, f"dealer:leave:{hand_id}:{seat}")
        self.unpublished = (published, settled)
        await self.write_snapshot()
        await self._publish_settlement()
        await self._flush_cashouts()
        self._emit(hand_finished=dealer_pb2.HandFinished(
            hand_number=record.number, hand_id=hand_id, rake=record.rake, seed=self.seed.hex(),
            commitment=self.commitment,
            results=[dealer_pb2.SeatAmount(seat=s, amount=n) for s, n in sorted(nets.items())]))
        for seat, player, chips in record.departed:
            self._seat_changed(seat, "stood_up", player, chips)
        metrics.HANDS.labels(self.variant).inc()
        metrics.HAND_SECONDS.labels(self.variant).observe(time.time() - self.hand_started)
        metrics.POTS.labels(self.variant).observe(hand.pot_total)
        if record.rake:
            metrics.RAKE.labels(common_pb2.Currency.Name(self.currency)).inc(record.rake)
        task = asyncio.create_task(self.deps.checker.check(hand, hand_id))
        self.deps.background.add(task)
        task.add_done_callback(self.deps.background.discard)
        self.next_hand_at = time.time() + self.spec.hand_pause

    async def _publish_settlement(self) -> None:
        """Hand record then hand-settled, with event ids fixed by the hand (a redo is a duplicate
        consumers drop); clears the write-ahead entry once both are acknowledged."""
        if self.unpublished is None:
            return
        published, settled = self.unpublished
        topics, pub = self.deps.topics, self.deps.publisher
        try:
            await pub.publish(topics.records, type="cardroom.dealer.hand_record.v1", key=self.table_id,
                              sequence=published.hand_number, payload=published,
                              event_id=f"{published.hand_id}:record")
            await pub.publish(topics.settled, type="cardroom.dealer.hand_settled.v1", key=self.table_id,
                              sequence=published.hand_number, payload=settled,
                              event_id=f"{published.hand_id}:settled")
        except Exception as exc:
            log.error("hand settlement not published; will retry",
                      extra={"table_id": self.table_id, "hand_id": published.hand_id, "error": str(exc)})
            return
        self.unpublished = None
        await self.write_snapshot()

    # ------------------------------------------------------------------ commands
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
            event = self.table.act(seat, kind, amount, discards=discards, now=time.time())
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

    async def _close_now(self) -> None:
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

    # ------------------------------------------------------------------ crash recovery
    def restore(self, snap: dealer_pb2.TableSnapshot) -> None:
        """Load the state of ``snap`` (see :mod:`dealer.restore`); call :meth:`recover` next."""
        seating_state.load(self.table.seating, snap.seating_json)
        for seat in self.table.seating.seats:
            self.table.connected[seat] = True
            self.table.time_bank[seat] = self.spec.settings.time_bank_seconds
        self.table.hand_number = snap.hands_dealt
        self.table.total_rake = snap.total_rake
        self.table.closed = snap.closed
        self.escrow = snap.escrow
        self.sequence = snap.event_sequence + _SEQUENCE_GAP   # events after the snapshot are lost with it
        self.pending_cashouts = list(snap.pending_cashouts)
        if snap.HasField("pending_buy_in"):
            self.pending_buy_in = snap.pending_buy_in
        if snap.HasField("pending_record"):
            self.unpublished = (snap.pending_record, snap.pending_settled)
        self._cancelled = snap.hand_in_progress

    async def recover(self, close: bool) -> None:
        """Redo the write-ahead entries, report a cancelled hand, and close if asked to."""
        if self._cancelled:
            metrics.CANCELLED.labels(self.variant).inc()
            self._emit(hand_finished=dealer_pb2.HandFinished(
                hand_number=self.table.hand_number, hand_id=self.hand_id(), cancelled=True))
            log.warning("hand in progress cancelled by a dealer restart; stacks as before the deal",
                        extra={"table_id": self.table_id, "hand_id": self.hand_id()})
        await self._retry_pending()
        await self.write_snapshot()
        self.next_hand_at = 0.0
        if close and not self.closed:
            self.closing = True
