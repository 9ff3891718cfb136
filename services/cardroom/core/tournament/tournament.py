"""The :class:`Tournament` state machine: registration -> (seating) -> running -> (final
table) -> finished / cancelled, driven by commands and time (``now``, seconds on the
tournament clock), playing its tables through :class:`cardroom.core.table.Table`.

Pure: the seat draws come from the ``random.Random`` passed in (an input — the service
passes its own generator), every hand's deck order is an argument of :meth:`Tournament.deal`,
time is an argument of every command. Nothing here reads a clock or does I/O. Events
(:mod:`.events`) accumulate in ``events``.

Driving it (the service, or :mod:`.simulation`)::

    t = Tournament(config, rng)
    t.register("ann", now); ...            # first come first served
    t.tick(now)                             # starts at config.start_at (Sit & Go: when full)
    t.deal(table_id, deck, now)             # a hand at an idle table (not on a break, and
                                            # hand-for-hand: once per synchronized hand)
    t.act(table_id, seat, kind, amount, now=now)   # the hand ends by itself when it is over
    t.rebuy(player, now) / t.add_on(player, now) / t.decline_rebuy(player, now)
    t.tick(now)                             # levels, breaks, periods, turn clocks
    t.cancel(now) / t.crash()

Rules: see the package docstring and docs/ARCHITECTURE.md '## Tournaments'.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, unique

from cardroom.core.cards import Card
from cardroom.core.engine import ActionKind, Event
from cardroom.core.table.clock import MAX_TIME_BANK_SECONDS
from cardroom.core.table.crash import CrashRecovery
from cardroom.core.table.seating import HandPlan
from cardroom.core.table.settings import GameKind, TableSettings
from cardroom.core.table.table import HandRecord, Table
from cardroom.core.tournament import events as ev
from cardroom.core.tournament.cancellation import (
    CancellationPayout,
    EntryPaid,
    Payment,
    fifty_fifty,
    in_the_money,
    refund_before_start,
)
from cardroom.core.tournament.config import TournamentConfig
from cardroom.core.tournament.elimination import Bust, Placement, place_batch
from cardroom.core.tournament.handforhand import hand_for_hand_due, synchronized_hand_over
from cardroom.core.tournament.icm import icm_equity
from cardroom.core.tournament.payouts import SatelliteRemainder, guaranteed_pool, prizes, satellite_prizes
from cardroom.core.tournament.rebuys import add_on_refusal, add_on_window, rebuy_period_end, rebuy_refusal, rebuys_left
from cardroom.core.tournament.registration import RegistrationState, registration_refusal, unregistration_refusal
from cardroom.core.tournament.seating import (
    balance_move,
    draw_tables,
    flop_game_move,
    reseat_order,
    stud_move,
    table_to_break,
)
from cardroom.core.tournament.structure import BreakSchedule, Level, LevelStructure


class TournamentError(ValueError):
    """A command the tournament rules do not allow now (nothing changed)."""


@unique
class Status(Enum):
    REGISTRATION = "registration"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


@unique
class PlayerStatus(Enum):
    REGISTERED = "registered"
    ACTIVE = "active"
    PENDING_REBUY = "pending_rebuy"
    """Lost all his chips during the re-buy period: re-buys or is out before his table's next hand."""
    BUSTED = "busted"
    """Out, waiting for the other tables of the synchronized hand (hand-for-hand)."""
    WAITING = "waiting"
    """Shoot-out: won his table, waits for the next round."""
    ELIMINATED = "eliminated"
    FINISHED = "finished"


_IN = (PlayerStatus.ACTIVE, PlayerStatus.PENDING_REBUY, PlayerStatus.BUSTED, PlayerStatus.WAITING)


@dataclass(slots=True)
class Entrant:
    player: str
    number: int
    paid: EntryPaid
    via_satellite: bool = False
    late: bool = False
    status: PlayerStatus = PlayerStatus.REGISTERED
    table: int | None = None
    seat: int | None = None
    rebuys: int = 0
    add_ons: int = 0
    away: bool = False
    bust_chips: int = 0
    placement: Placement | None = None


class Tournament:
    """One tournament (module docstring)."""

    def __init__(self, config: TournamentConfig, rng: random.Random) -> None:
        self.config = config
        self.rng = rng
        self.variant = config.variant
        self.status = Status.REGISTRATION
        self.entrants: dict[str, Entrant] = {}
        self.events: list[ev.TournamentEvent] = []
        self.tables: dict[int, Table] = {}
        self.playing: set[int] = set()
        self.reserved: dict[int, dict[int, str]] = {}
        self.hands: list[tuple[int, HandRecord]] = []
        self.started_at: float | None = None
        self.collected = 0
        self.fees = 0
        self.pool_final = False
        self.prize_table: tuple[int, ...] = ()
        self.seats_won = 0
        self.late_open = False
        self.rebuy_open = False
        self.add_on_open = False
        self.hand_for_hand = False
        self.h4h_dealt: set[int] = set()
        self._batch: list[tuple[Bust, int]] = []
        self.level_index = 0
        self._level_started = 0.0
        self._level_hands = 0
        self._round_offset = 0.0
        self.shootout_round = 0
        #: player -> Extra Time left, as the tables that play the hands elsewhere (the dealer) said
        self._time_banks_heard: dict[str, float] = {}
        self.break_number = 0
        self._breaks = BreakSchedule(enabled=False)
        self._next_table = 1
        self._multi_table = False
        self._final_table_announced = False
        self.rebuys_sold = 0
        self.add_ons_sold = 0
        self.cancellation: CancellationPayout | None = None

    # ------------------------------------------------------------------ queries
    @property
    def structure(self) -> LevelStructure:
        so = self.config.shootout
        if so is not None and so.round_structures:
            return so.round_structures[min(self.shootout_round, len(so.round_structures)) - 1]
        return self.config.level_structure

    @property
    def level(self) -> Level:
        return self.structure.level(self.level_index)

    @property
    def on_break(self) -> bool:
        return self.break_number > 0

    @property
    def prize_pool(self) -> int:
        return guaranteed_pool(self.collected, self.config.guarantee)[0]

    @property
    def entries(self) -> int:
        return sum(1 for e in self.entrants.values())

    def remaining(self) -> list[str]:
        """Players still in (not yet placed), registration order."""
        return [p for p, e in self.entrants.items() if e.status in _IN]

    def chips_in_play(self) -> int:
        return sum(t.chips_on_table() for t in self.tables.values())

    def chips_issued(self) -> int:
        """Starting stacks, re-buys and add-ons sold: always equal to :meth:`chips_in_play`."""
        started = sum(1 for e in self.entrants.values() if e.status is not PlayerStatus.REGISTERED)
        return (
            started * self.config.starting_stack
            + self.rebuys_sold * self.config.rebuy_chips
            + self.add_ons_sold * self.config.add_on_chips
        )

    def chips(self, player: str) -> int:
        e = self._entrant(player)
        if e.table is None or e.seat is None or e.status is not PlayerStatus.ACTIVE:
            return 0
        return self.tables[e.table].stack(e.seat)

    def icm(self) -> dict[str, float]:
        """Lobby information: ICM equity (cents) of the players still in, over the prizes of
        the places still to award (empty until the prize pool is final)."""
        if not self.pool_final:
            return {}
        left = self.remaining()
        stacks = {p: self.chips(p) for p in left}
        return icm_equity(stacks, self.prize_table[: len(left)])

    def places_paid(self) -> int:
        return len(self.prize_table)

    def occupied(self, table: int) -> int:
        return len(self.tables[table].seating.seats) + len(self.reserved.get(table, {}))

    def free_seats(self, table: int) -> list[int]:
        t = self.tables[table]
        taken = set(t.seating.seats) | set(self.reserved.get(table, {}))
        return [s for s in range(1, t.settings.seat_count + 1) if s not in taken]

    def drain_events(self) -> list[ev.TournamentEvent]:
        out, self.events = self.events, []
        return out

    def drain_hands(self) -> list[tuple[int, HandRecord]]:
        out, self.hands = self.hands, []
        return out

    def _entrant(self, player: str) -> Entrant:
        try:
            return self.entrants[player]
        except KeyError:
            raise TournamentError(f"{player!r} is not registered") from None

    def _elapsed(self, now: float) -> float:
        return now - (self.started_at if self.started_at is not None else now)

    # ------------------------------------------------------------------ registration
    def verify_register(self, player: str, now: float, *, via_satellite: bool = False) -> None:
        """First come first served up to the maximum; late registration (:mod:`.registration`)."""
        state = RegistrationState(
            registered=len(self.entrants),
            maximum=self.config.max_entrants,
            started=self.status is not Status.REGISTRATION,
            running=self.status is Status.RUNNING,
            late_open=self.late_open,
            elapsed=self._elapsed(now),
            late_seconds=self.config.late_registration_seconds,
            free_seats=sum(len(self.free_seats(t)) for t in self.tables),
        )
        reason = registration_refusal(player in self.entrants, state)
        if reason is not None:
            raise TournamentError(f"{player}: {reason}")

    def can_register(self, player: str, now: float, *, via_satellite: bool = False) -> bool:
        try:
            self.verify_register(player, now, via_satellite=via_satellite)
        except TournamentError:
            return False
        return True

    def register(
        self, player: str, now: float, *, paid_with: Sequence[Payment] = (), via_satellite: bool = False
    ) -> None:
        """Register ``player`` (buy-in + fee, paid as ``paid_with``); late: seated at once."""
        if self.status is Status.RUNNING:
            self._advance(now)
        self.verify_register(player, now, via_satellite=via_satellite)
        cfg = self.config
        paid = EntryPaid(player, cfg.buy_in, cfg.fee, tuple(paid_with))
        late = self.status is Status.RUNNING
        entrant = Entrant(player, len(self.entrants) + 1, paid, via_satellite, late)
        self.entrants[player] = entrant
        self.collected += cfg.buy_in
        self.fees += cfg.fee
        self.events.append(ev.Registered(now, player, late, via_satellite))
        if late:
            free = {t: self.free_seats(t) for t in self.tables}
            counts = {t: self.occupied(t) for t in self.tables}
            table, seat = reseat_order(free, counts, self.rng)
            self._seat(entrant, table, seat, cfg.starting_stack)
            self.events.append(ev.PlayerSeated(now, player, table, seat, cfg.starting_stack))
            if not any(self.free_seats(t) for t in self.tables):
                self._close_late(now, "tables full")
        elif cfg.start_at is None and cfg.max_entrants is not None and len(self.entrants) >= cfg.max_entrants:
            self.start(now)

    def verify_unregister(self, player: str, now: float) -> None:
        """Until the deadline before the start; never a seat won in a satellite."""
        e = self._entrant(player)
        reason = unregistration_refusal(
            started=self.status is not Status.REGISTRATION,
            via_satellite=e.via_satellite,
            now=now,
            start_at=self.config.start_at,
            before_seconds=self.config.unregister_before_seconds,
        )
        if reason is not None:
            raise TournamentError(f"{player}: {reason}")

    def can_unregister(self, player: str, now: float) -> bool:
        try:
            self.verify_unregister(player, now)
        except TournamentError:
            return False
        return True

    def unregister(self, player: str, now: float) -> EntryPaid:
        """Unregister; returns what goes back (buy-in and fee, as paid)."""
        self.verify_unregister(player, now)
        e = self.entrants.pop(player)
        for n, other in enumerate(self.entrants.values(), start=1):
            other.number = n
        self.collected -= e.paid.buy_in
        self.fees -= e.paid.fee
        self.events.append(ev.Unregistered(now, player))
        return e.paid

    # ------------------------------------------------------------------ start
    def start(self, now: float) -> None:
        """Seat everybody at random and start; cancelled (full refunds) below the minimum."""
        if self.status is not Status.REGISTRATION:
            raise TournamentError("the tournament has already started")
        cfg = self.config
        if len(self.entrants) < cfg.min_entrants:
            self._cancel(now, refund_before_start([e.paid for e in self.entrants.values()]))
            return
        self.status = Status.RUNNING
        self.started_at = now
        size = cfg.shootout.table_size if cfg.shootout is not None else None
        draw = draw_tables(list(self.entrants), cfg.seat_count, self.rng, size)
        self._multi_table = len(draw) > 1
        breaks = cfg.breaks if cfg.breaks is not None else (self._multi_table and cfg.shootout is None)
        sched = cfg.level_structure.breaks
        self._breaks = BreakSchedule(breaks, sched.every_seconds, sched.length_seconds)
        self.events.append(ev.Started(now, len(self.entrants), len(draw)))
        if cfg.shootout is not None:
            self.shootout_round = 1
            self.events.append(ev.RoundStarted(now, 1, len(draw), len(self.entrants)))
        for seats in draw:
            self._open_table(now, seats, size, {p: cfg.starting_stack for _, p in seats})
        self.late_open = cfg.late_registration_seconds > 0 and cfg.start_at is not None and cfg.shootout is None
        self.rebuy_open = cfg.rebuys is not None
        self.add_on_open = cfg.add_on is not None
        self._emit_level(now)
        self._check_pool_final(now)
        self._after_change(now)

    def _open_table(
        self,
        now: float,
        seats: Sequence[tuple[int, str]],
        size: int | None,
        chips: dict[str, int],
        time_banks: dict[str, float | None] | None = None,
    ) -> int:
        cfg = self.config
        tid = self._next_table
        self._next_table += 1
        settings = TableSettings(
            cfg.variant.game,
            cfg.variant.structure,
            GameKind.TOURNAMENT,
            seat_count=size or cfg.seat_count,
            action_seconds=cfg.action_seconds,
            time_bank_seconds=cfg.extra_time_seconds,
            time_bank_when_disconnected=cfg.extra_time_when_disconnected,
        )
        table = Table(settings, self.level.stakes(self.variant), name=f"{cfg.name}-t{tid}")
        self.tables[tid] = table
        carried = {seat: bank for seat, p in seats if (bank := (time_banks or {}).get(p)) is not None}
        for seat, player in seats:
            self._seat(self.entrants[player], tid, seat, chips[player], carried.get(seat))
        self.events.append(ev.TableOpened(now, tid, tuple(seats), settings.seat_count, tuple(sorted(carried.items()))))
        return tid

    def _seat(self, e: Entrant, table: int, seat: int, chips: int, time_bank: float | None = None) -> None:
        self.tables[table].seat_tournament_player(seat, e.player, chips, time_bank)
        e.status = PlayerStatus.ACTIVE
        e.table, e.seat = table, seat
        if e.away:
            self.tables[table].sit_out(seat)

    # ------------------------------------------------------------------ time
    def tick(self, now: float) -> None:
        """Time passes: the scheduled start, levels, breaks, periods, turn clocks."""
        if self.status is Status.REGISTRATION:
            if self.config.start_at is not None and now >= self.config.start_at:
                self.start(now)
            return
        if self.status is not Status.RUNNING:
            return
        self._advance(now)
        for tid in sorted(self.playing):
            table = self.tables[tid]
            table.tick(now)
            if not table.in_hand and tid in self.playing:
                self._end_hand(tid, now)
            if self.status is not Status.RUNNING:
                return

    def _play_seconds(self, elapsed: float) -> float:
        return elapsed - self._breaks.break_time_before(elapsed) - self._round_offset

    def _advance(self, now: float) -> None:
        if self.status is not Status.RUNNING:
            return
        elapsed = self._elapsed(now)
        number = self._breaks.break_at(elapsed)
        if number != self.break_number:
            if self.break_number:
                self.events.append(ev.BreakEnded(now, self.break_number))
            if number:
                self.events.append(
                    ev.BreakStarted(now, number, self.started_at_or(now) + number * self._breaks.every_seconds)
                )
            self.break_number = number
        play = self._play_seconds(elapsed)
        levels = self.structure.levels
        while self.level_index < len(levels) - 1 and play - self._level_started >= self.level.seconds:
            self._level_started += self.level.seconds
            self._next_level(now)
        cfg = self.config
        if self.late_open and elapsed >= cfg.late_registration_seconds:
            self._close_late(now, "time")
        if self.rebuy_open and elapsed >= self._rebuy_until():
            self.rebuy_open = False
            self.events.append(ev.RebuyPeriodClosed(now))
            self._resolve_pending(now, None)
        if self.add_on_open and elapsed >= self._add_on_window()[1]:
            self.add_on_open = False
            self.events.append(ev.AddOnPeriodClosed(now))
        self._check_pool_final(now)
        self._after_change(now)

    def break_ends_at(self) -> float | None:
        """When the break under way ends (tournament clock), or None."""
        if not self.break_number or self.started_at is None:
            return None
        return self.started_at + self.break_number * self._breaks.every_seconds

    def started_at_or(self, now: float) -> float:
        return self.started_at if self.started_at is not None else now

    def _next_level(self, now: float) -> None:
        self.level_index += 1
        self._level_hands = 0
        self._emit_level(now)

    def _emit_level(self, now: float) -> None:
        lv = self.level
        self.events.append(
            ev.LevelUp(
                now, self.level_index + 1, lv.small_blind, lv.big_blind, lv.ante, lv.small_bet, lv.big_bet, lv.bring_in
            )
        )

    def _rebuy_until(self) -> float:
        return rebuy_period_end(self.config.rebuys, self._breaks)

    def _add_on_window(self) -> tuple[float, float]:
        return add_on_window(self.config.add_on, self._breaks)

    def _close_late(self, now: float, reason: str) -> None:
        if self.late_open:
            self.late_open = False
            self.events.append(ev.RegistrationClosed(now, reason))
            self._check_pool_final(now)

    def _check_pool_final(self, now: float) -> None:
        """rules/000: 'The total prize pool and the payout structure will not be finalized
        until both the Re-buy and Add-on periods have closed' (and late registration)."""
        if self.pool_final or self.status is not Status.RUNNING:
            return
        if self.late_open or self.rebuy_open or self.add_on_open:
            return
        self.pool_final = True
        pool, overlay = guaranteed_pool(self.collected, self.config.guarantee)
        sat = self.config.satellite
        if sat is not None:
            sp = satellite_prizes(pool, sat.seat_value, sat.remainder)
            table = [sp.seat_value] * sp.seats
            if sp.cash:
                if sp.remainder is SatelliteRemainder.CASH_TO_NEXT_PLACE or not table:
                    table.append(sp.cash)
                else:
                    base, left = divmod(sp.cash, sp.seats)
                    table = [v + base + (1 if i < left else 0) for i, v in enumerate(table)]
            self.seats_won = sp.seats
            self.prize_table = tuple(table)
        else:
            self.prize_table = prizes(pool, len(self.entrants), self.config.unassigned_share)
        self.events.append(
            ev.PrizePoolFinal(now, len(self.entrants), self.collected, overlay, pool, self.prize_table, self.seats_won)
        )

    # ------------------------------------------------------------------ hands
    def verify_deal(self, table: int, now: float | None = None) -> None:
        """May a hand be dealt at ``table`` at ``now`` (default: the tournament's time so far)?
        A break that ``now`` falls in refuses the deal even before :meth:`tick` has started it."""
        if self.status is not Status.RUNNING:
            raise TournamentError("the tournament is not running")
        if table not in self.tables:
            raise TournamentError(f"no table {table}")
        if table in self.playing:
            raise TournamentError("a hand is in progress at this table")
        if self.on_break if now is None else self._breaks.break_at(self._elapsed(now)):
            raise TournamentError("the tournament is on a break")
        if self.hand_for_hand and table in self.h4h_dealt and not self._h4h_round_over():
            raise TournamentError("hand-for-hand: waiting for the other tables")
        if self._satellite_decided():
            raise TournamentError("every satellite seat is won")

    def can_deal(self, table: int, now: float | None = None) -> bool:
        try:
            self.verify_deal(table, now)
        except TournamentError:
            return False
        return True

    def deal(self, table: int, deck: Sequence[Card], now: float) -> HandPlan | None:
        """Deal the next hand at ``table`` with ``deck``; None if it cannot deal (fewer than
        two players). Players there still deciding on a re-buy are out first."""
        self._advance(now)
        self.verify_deal(table)
        if self.hand_for_hand and self._h4h_round_over():
            self._finalize_batch(now)
            self.h4h_dealt.clear()
        self._resolve_pending(now, table)
        if self.status is not Status.RUNNING or table not in self.tables:
            return None
        t = self.tables[table]
        stakes = self.level.stakes(self.variant)
        if stakes != t.stakes and not t.replaying:  # a rolled-back hand again: at its own stakes
            t.set_stakes(stakes)
        plan = t.start_hand(deck, now)
        if plan is None:
            return None
        self.playing.add(table)
        if self.hand_for_hand:
            self.h4h_dealt.add(table)
        self._level_hands += 1
        hands = self.level.hands
        if hands is not None and self._level_hands >= hands and self.level_index < len(self.structure.levels) - 1:
            self._level_started = self._play_seconds(self._elapsed(now))
            self._next_level(now)
        if not t.in_hand:
            self._end_hand(table, now)
        return plan

    def act(
        self,
        table: int,
        seat: int,
        kind: ActionKind,
        amount: int | None = None,
        *,
        discards: Sequence[Card] = (),
        now: float = 0.0,
    ) -> Event:
        """An action at ``table`` (the table's and engine's errors propagate)."""
        if table not in self.playing:
            raise TournamentError("no hand in progress at this table")
        t = self.tables[table]
        event = t.act(seat, kind, amount, discards=discards, now=now)
        if not t.in_hand:
            self._end_hand(table, now)
        return event

    def _end_hand(self, table: int, now: float) -> None:
        t = self.tables[table]
        record = t.finish()
        self.playing.discard(table)
        self.hands.append((table, record))
        for seat, player in record.busted:
            e = self.entrants[player]
            e.bust_chips = record.starting_stacks[seat]
            if self._rebuy_allowed(e, 1):
                e.status = PlayerStatus.PENDING_REBUY
                self.reserved.setdefault(table, {})[seat] = player
            else:
                e.status = PlayerStatus.BUSTED
                self._batch.append((Bust(player, e.bust_chips, e.number), table))
        if not self.hand_for_hand or self._h4h_round_over():
            self._finalize_batch(now)
            self.h4h_dealt.clear()
        self._after_change(now)

    # ------------------------------------------------------------------ eliminations
    def _finalize_batch(self, now: float) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        remaining = len(self.remaining())
        where = {b.player: tid for b, tid in batch}
        for placement in place_batch([b for b, _ in batch], remaining):
            prize = placement.prizes(self.prize_table) if self.pool_final else None
            for p in placement.players:
                e = self.entrants[p]
                e.status = PlayerStatus.ELIMINATED
                e.placement = placement
                e.table = e.seat = None
                self.events.append(
                    ev.Eliminated(
                        now,
                        p,
                        placement.first,
                        placement.last,
                        tuple(x for x in placement.players if x != p),
                        None if prize is None else prize[p],
                        where[p],
                    )
                )
        self._close_late(now, "first player out")

    def _resolve_pending(self, now: float, table: int | None) -> None:
        """Players who did not re-buy (before their table's next hand, or at the end of the
        re-buy period) are out, ranked by their chips at the start of the hand they lost."""
        for tid, seats in list(self.reserved.items()):
            if table is not None and tid != table:
                continue
            for seat, player in list(seats.items()):
                e = self.entrants[player]
                e.status = PlayerStatus.BUSTED
                self._batch.append((Bust(player, e.bust_chips, e.number), tid))
                del seats[seat]
            if not seats:
                del self.reserved[tid]
        if not self.hand_for_hand or self._h4h_round_over():
            self._finalize_batch(now)
        self._after_change(now)

    def decline_rebuy(self, player: str, now: float) -> None:
        e = self._entrant(player)
        if e.status is not PlayerStatus.PENDING_REBUY:
            raise TournamentError(f"{player!r} has no re-buy to decline")
        assert e.table is not None and e.seat is not None
        del self.reserved[e.table][e.seat]
        if not self.reserved[e.table]:
            del self.reserved[e.table]
        e.status = PlayerStatus.BUSTED
        self._batch.append((Bust(player, e.bust_chips, e.number), e.table))
        if not self.hand_for_hand or self._h4h_round_over():
            self._finalize_batch(now)
        self._after_change(now)

    # ------------------------------------------------------------------ re-buys and add-ons
    def _rebuy_allowed(self, e: Entrant, count: int) -> bool:
        return rebuys_left(self.config.rebuys, self.rebuy_open, e.rebuys, count)

    def _between_hands(self, e: Entrant) -> bool:
        if e.status is not PlayerStatus.ACTIVE or e.table is None or e.seat is None:
            return True
        table = self.tables[e.table]
        return not (table.dealt_in(e.seat) and table.in_hand)

    def verify_rebuy(self, player: str, now: float, *, double: bool = False) -> None:
        """At or below the starting stack, during the re-buy period (:mod:`.rebuys`)."""
        e = self._entrant(player)
        period_open = self.status is Status.RUNNING and self.rebuy_open and self._elapsed(now) < self._rebuy_until()
        reason = rebuy_refusal(
            self.config.rebuys,
            period_open=period_open,
            in_tournament=e.status in (PlayerStatus.ACTIVE, PlayerStatus.PENDING_REBUY),
            used=e.rebuys,
            double=double,
            chips=self.chips(player),
            starting_stack=self.config.starting_stack,
            in_hand=not self._between_hands(e),
        )
        if reason is not None:
            raise TournamentError(f"{player}: {reason}")

    def can_rebuy(self, player: str, now: float, *, double: bool = False) -> bool:
        try:
            self.verify_rebuy(player, now, double=double)
        except TournamentError:
            return False
        return True

    def rebuy(self, player: str, now: float, *, double: bool = False) -> None:
        self.verify_rebuy(player, now, double=double)
        e = self.entrants[player]
        n = 2 if double else 1
        chips = self.config.rebuy_chips * n
        if e.status is PlayerStatus.PENDING_REBUY:
            assert e.table is not None and e.seat is not None
            del self.reserved[e.table][e.seat]
            if not self.reserved[e.table]:
                del self.reserved[e.table]
            self._seat(e, e.table, e.seat, chips)
        else:
            assert e.table is not None and e.seat is not None
            self.tables[e.table].add_tournament_chips(e.seat, chips)
        e.rebuys += n
        self.rebuys_sold += n
        self.collected += self.config.rebuy_cost * n
        self.events.append(ev.Rebuy(now, player, chips, self.config.rebuy_cost * n, n))
        self._after_change(now)

    def verify_add_on(self, player: str, now: float) -> None:
        """At the first break, every active player whatever his stack, once (:mod:`.rebuys`)."""
        e = self._entrant(player)
        start, end = self._add_on_window()
        window = self.status is Status.RUNNING and self.add_on_open and start <= self._elapsed(now) < end
        reason = add_on_refusal(
            self.config.add_on,
            window_open=window,
            active=e.status is PlayerStatus.ACTIVE,
            used=e.add_ons,
            in_hand=not self._between_hands(e),
        )
        if reason is not None:
            raise TournamentError(f"{player}: {reason}")

    def can_add_on(self, player: str, now: float) -> bool:
        try:
            self.verify_add_on(player, now)
        except TournamentError:
            return False
        return True

    def add_on(self, player: str, now: float) -> None:
        self.verify_add_on(player, now)
        e = self.entrants[player]
        assert e.table is not None and e.seat is not None
        chips = self.config.add_on_chips
        self.tables[e.table].add_tournament_chips(e.seat, chips)
        e.add_ons += 1
        self.add_ons_sold += 1
        self.collected += self.config.add_on_cost
        self.events.append(ev.AddOn(now, player, chips, self.config.add_on_cost))

    # ------------------------------------------------------------------ presence
    def sit_out(self, player: str) -> None:
        """rules/000: disconnected or sitting out, 'he or she will be dealt cards, and a blind
        and/or antes will be posted automatically ... there is no penalty'."""
        e = self._entrant(player)
        e.away = True
        if e.status is PlayerStatus.ACTIVE and e.table is not None and e.seat is not None:
            self.tables[e.table].sit_out(e.seat)

    def come_back(self, player: str) -> None:
        e = self._entrant(player)
        e.away = False
        if e.status is PlayerStatus.ACTIVE and e.table is not None and e.seat is not None:
            self.tables[e.table].come_back(e.seat)

    def set_connected(self, player: str, up: bool) -> None:
        e = self._entrant(player)
        if e.status is PlayerStatus.ACTIVE and e.table is not None and e.seat is not None:
            self.tables[e.table].set_connected(e.seat, up)

    # ------------------------------------------------------------------ balancing, rounds, end
    def _after_change(self, now: float) -> None:
        if self.status is not Status.RUNNING:
            return
        if self._finish_due():
            self._finish(now)
            return
        if self.config.shootout is not None:
            self._shootout_progress(now)
            return
        self._rebalance(now)
        self._update_hand_for_hand(now)

    def _finish_due(self) -> bool:
        left = self.remaining()
        if any(self.entrants[p].status in (PlayerStatus.PENDING_REBUY, PlayerStatus.BUSTED) for p in left):
            return False
        if len(left) <= 1:
            return True
        return self._satellite_decided() and not self.playing

    def _satellite_decided(self) -> bool:
        """rules/000: 'the tournament will end when all players have qualified for the target
        event regardless of the chip count'."""
        return (
            self.config.satellite is not None
            and self.pool_final
            and 0 < self.seats_won
            and len(self.remaining()) <= self.seats_won
        )

    def _h4h_round_over(self) -> bool:
        return synchronized_hand_over(self.playing, self.h4h_dealt, {t: self.occupied(t) >= 2 for t in self.tables})

    def _move(self, now: float, src: int, seat: int, dst: int, to_seat: int, reason: str) -> None:
        table = self.tables[src]
        player = table.seating.seats[seat].player
        time_bank = table.time_bank.get(seat)  # his Extra Time goes with him
        chips = table.stand_up(seat)
        assert chips is not None
        self._seat(self.entrants[player], dst, to_seat, chips, time_bank)
        self.events.append(ev.PlayerMoved(now, player, src, seat, dst, to_seat, chips, reason))

    def _rebalance(self, now: float) -> None:
        """Break and balance tables between hands (module :mod:`.seating`)."""
        cfg = self.config
        flop = self.variant.spec.uses_button
        while len(self.tables) > 1:
            # a table whose rolled-back hand waits to be dealt again keeps its players, and takes
            # none: that hand is dealt again to the same players (rules/000 'restored by rolling back')
            held = {t for t in self.tables if self.tables[t].replaying}
            counts = {t: self.occupied(t) for t in self.tables}
            idle = {t for t in self.tables if t not in self.playing and t not in self.reserved and t not in held}
            tb = table_to_break(counts, cfg.seat_count, idle, cfg.final_table)
            if (
                tb is not None
                and sum(len(self.free_seats(t)) for t in self.tables if t not in held | {tb}) >= counts[tb]
            ):
                table = self.tables[tb]
                seats = sorted(table.seating.seats)
                self.rng.shuffle(seats)
                for seat in seats:
                    free = {t: self.free_seats(t) for t in self.tables if t != tb and t not in held}
                    others = {t: self.occupied(t) for t in free}
                    dst, to_seat = reseat_order(free, others, self.rng)
                    self._move(now, tb, seat, dst, to_seat, "break")
                del self.tables[tb]
                self.h4h_dealt.discard(tb)
                self.events.append(ev.TableBroken(now, tb))
                continue
            if tb is not None:
                break  # its players go once the held table's hand is over
            move = balance_move({t: c for t, c in counts.items() if t not in held}, idle)
            if move is None:
                break
            src, dst = move
            open_seats = self.free_seats(dst)
            if flop:
                seat, to_seat = flop_game_move(self.tables[src].seating, self.tables[dst].seating, open_seats, self.rng)
            else:
                seat, to_seat = stud_move(self.tables[src].seating, open_seats)
            self._move(now, src, seat, dst, to_seat, "balance")
        if len(self.tables) == 1 and self._multi_table and not self._final_table_announced:
            self._final_table_announced = True
            tid = next(iter(self.tables))
            self.events.append(ev.FinalTable(now, tid, self.occupied(tid)))

    def _update_hand_for_hand(self, now: float) -> None:
        """rules/000: hand-for-hand 'where there is more than one table remaining' in 'the
        final stages' — on while the remaining players are within the margin of the money."""
        left = len(self.remaining())
        want = hand_for_hand_due(
            margin=self.config.hand_for_hand_margin,
            pool_final=self.pool_final,
            tables=len(self.tables),
            remaining=left,
            paid=self.places_paid(),
        )
        if want == self.hand_for_hand:
            return
        self.hand_for_hand = want
        # hands in progress are the first synchronized hand; idle tables wait for them
        self.h4h_dealt = set(self.tables) if want and self.playing else set()
        self.events.append(ev.HandForHand(now, want, left))

    def _shootout_progress(self, now: float) -> None:
        """rules/000 'Shoot-out': a table plays until one player has all its chips; when every
        table of the round has its winner, the winners are seated at the next round's tables."""
        for tid, table in list(self.tables.items()):
            if tid in self.playing or tid in self.reserved:
                continue
            if len(table.seating.seats) == 1:
                seat = next(iter(table.seating.seats))
                e = self.entrants[table.seating.seats[seat].player]
                e.status = PlayerStatus.WAITING
        if any(self.entrants[p].status is not PlayerStatus.WAITING for p in self.remaining()):
            return
        winners = self.remaining()
        if len(winners) <= 1:
            return
        so = self.config.shootout
        assert so is not None
        chips = {p: self.chips_of_waiting(p) for p in winners}
        banks = {p: self.time_bank_of_waiting(p) for p in winners}  # Extra Time is the tournament's, not a round's
        for tid in list(self.tables):
            table = self.tables.pop(tid)
            for seat in list(table.seating.seats):
                table.stand_up(seat)
            self.events.append(ev.TableBroken(now, tid))
        self.shootout_round += 1
        draw = draw_tables(winners, self.config.seat_count, self.rng, so.table_size)
        self.events.append(ev.RoundStarted(now, self.shootout_round, len(draw), len(winners)))
        self._round_offset = self._elapsed(now) - self._breaks.break_time_before(self._elapsed(now))
        self._level_started = 0.0
        self.level_index = 0
        self._level_hands = 0
        self._emit_level(now)
        for seats in draw:
            self._open_table(now, seats, so.table_size, chips, banks)

    def chips_of_waiting(self, player: str) -> int:
        e = self.entrants[player]
        assert e.table is not None and e.seat is not None
        return self.tables[e.table].stack(e.seat)

    def time_bank_of_waiting(self, player: str) -> float | None:
        """The Extra Time a seated player has left: as the tables that play the hands elsewhere said
        (:meth:`set_time_banks`), else as this core counted it when it plays them with Extra Time
        itself; None: unknown (he gets a full time bank)."""
        if player in self._time_banks_heard:
            return self._time_banks_heard[player]
        e = self.entrants[player]
        assert e.table is not None and e.seat is not None
        return self.tables[e.table].time_bank.get(e.seat) if self.config.extra_time_seconds > 0 else None

    def set_time_banks(self, table: int, banks: dict[int, float]) -> None:
        """The Extra Time each seat of ``table`` has left, as the tables that play its hands elsewhere
        (the dealer) counted it, kept for the player's next table; seats nobody holds are ignored.
        rules/000 'Extra time': "It decreases as it is being used"."""
        found = self.tables.get(table)
        if found is None:
            return
        for seat, left in banks.items():
            held = found.seating.seats.get(seat)
            if held is not None and math.isfinite(left):
                self._time_banks_heard[held.player] = min(max(0.0, left), MAX_TIME_BANK_SECONDS)

    def _finish(self, now: float) -> None:
        """The tournament is over: one player has every chip (or every satellite seat is won)."""
        if self.rebuy_open:
            self.rebuy_open = False
            self.events.append(ev.RebuyPeriodClosed(now))
        if self.add_on_open:
            self.add_on_open = False
            self.events.append(ev.AddOnPeriodClosed(now))
        self._close_late(now, "finished")
        self._check_pool_final(now)
        left = self.remaining()
        final = Placement(tuple(left), 1, len(left))
        for p in left:
            self.entrants[p].status = PlayerStatus.FINISHED
            self.entrants[p].placement = final
        results = []
        for e in sorted(self.entrants.values(), key=lambda x: (x.placement.first if x.placement else 0, x.number)):
            assert e.placement is not None
            prize = e.placement.prizes(self.prize_table)[e.player]
            seat = self.config.satellite is not None and e.placement.last <= self.seats_won
            if seat:
                assert self.config.satellite is not None
                self.events.append(ev.SeatWon(now, e.player, self.config.satellite.seat_value))
            results.append(ev.Result(e.player, e.placement.first, e.placement.last, prize, seat))
        for table in self.tables.values():
            table.closed = True
        self.status = Status.FINISHED
        self.events.append(ev.Finished(now, tuple(results), self.prize_pool))

    def results(self) -> list[ev.Result]:
        for event in reversed(self.events):
            if isinstance(event, ev.Finished):
                return list(event.results)
        return []

    # ------------------------------------------------------------------ crash and cancel
    def crash(self) -> dict[int, CrashRecovery]:
        """rules/000: 'the hands in progress at every table will be restored by rolling back
        these hands. Each player's chip count will be reset to the amount at the beginning
        of the hand.' Each table deals the same hand again (a new deck from the dealer)."""
        return {tid: self.roll_back(tid) for tid in sorted(self.playing)}

    def can_roll_back(self, table: int) -> bool:
        try:
            self.verify_roll_back(table)
        except TournamentError:
            return False
        return True

    def verify_roll_back(self, table: int) -> None:
        if table not in self.playing:
            raise TournamentError(f"no hand in progress at table {table}")

    def roll_back(self, table: int) -> CrashRecovery:
        """The crash of one table's dealer (the hands at the other tables go on): the hand in
        progress at ``table`` is rolled back as :meth:`crash` rolls back every table's, and the
        table deals the same hand again (a new deck; its button, blinds and stakes: a level begun
        meanwhile starts with the hand after it)."""
        self.verify_roll_back(table)
        recovery = self.tables[table].crash()
        self.playing.discard(table)
        self.h4h_dealt.discard(table)
        self._level_hands = max(0, self._level_hands - 1)
        return recovery

    def cancel(self, now: float) -> CancellationPayout:
        """Cancel by the cancellation policy of rules/000 (module :mod:`.cancellation`):
        before the start every entry back as paid; in progress the hands under way are first
        rolled back (chip counts as at their start, as after a crash), then 50/50 or in the
        money. Players still deciding on a re-buy count as eliminated."""
        if self.status is Status.REGISTRATION:
            return self._cancel(now, refund_before_start([e.paid for e in self.entrants.values()]))
        if self.status is not Status.RUNNING:
            raise TournamentError("the tournament is over")
        self.crash()
        stacks: dict[str, int] = {}
        for p in self.remaining():
            e = self.entrants[p]
            if e.status in (PlayerStatus.ACTIVE, PlayerStatus.WAITING):
                assert e.table is not None and e.seat is not None
                stacks[p] = self.tables[e.table].stack(e.seat)
        awarded = 0
        for e in self.entrants.values():
            if e.status is PlayerStatus.ELIMINATED and e.placement is not None and self.pool_final:
                awarded += e.placement.prizes(self.prize_table)[e.player]
        guaranteed = self.config.guarantee > 0
        money = max(0, self.collected - awarded) if guaranteed else self.prize_pool - awarded
        fees = {p: self.entrants[p].paid.fee for p in stacks}
        rule = self.config.guarantee_cancellation
        n = len(stacks)
        if self.pool_final and 0 < n <= len(self.prize_table):
            payout = in_the_money(
                self.prize_table[:n],
                stacks,
                fees,
                available=money if guaranteed else None,
                guaranteed=guaranteed,
                guarantee_rule=rule,
            )
        else:
            payout = fifty_fifty(money, stacks, fees, guaranteed=guaranteed, guarantee_rule=rule)
        return self._cancel(now, payout)

    def _cancel(self, now: float, payout: CancellationPayout) -> CancellationPayout:
        self.status = Status.CANCELLED
        self.cancellation = payout
        players = sorted(set(payout.awards) | set(payout.fees) | set(payout.refunds))
        self.events.append(
            ev.Cancelled(
                now,
                payout.policy.value,
                tuple((p, payout.total_to(p)) for p in players),
                payout.distributed,
                payout.house_kept,
            )
        )
        for table in self.tables.values():
            table.closed = True
        return payout


__all__ = ["Entrant", "PlayerStatus", "Status", "Tournament", "TournamentError"]
