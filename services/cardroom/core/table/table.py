"""A cash-game or tournament table driving hands through the engine.

Pure: commands and time are inputs (``now`` in seconds), the deck order of each hand is an
input; nothing here reads a clock or draws random numbers. The dealer service wraps it.

* Table stakes (rules/002 'All-Ins'): only the chips in front of a player play; chips are
  added between hands only — a player dealt into the hand in progress cannot add chips
  until it ends (players not in that hand may).
* Commands during a hand for a player dealt in: *stand up* folds his hand at his next
  turn and frees the seat when the hand ends; *sit out* takes effect when the hand ends.
  In tournaments a player who sits out is still dealt in, his blinds and antes are posted
  and he acts at once by the timeout rule (check or fold; rules/000 'Disconnects').
* Clocks (:mod:`.clock`): each turn gets ``action_seconds`` (``draw_seconds`` to draw);
  :meth:`Table.tick` applies the timeout decision when the clock has run out.
* Artificial all-in (rules/002, 003): the player keeps his hand and his claim on what he put
  in the pot; his remaining chips are set aside and given back after the hand — the
  engine's :meth:`~cardroom.core.engine.Hand.artificial_all_in`. The table decides when
  (:mod:`.clock`: a disconnected player in a limit cash game facing a bet, with money in
  the pot and allowance left). The PHH records it as ``_artificial_all_in`` (see
  :mod:`cardroom.core.phh`) and replays to the same finishing stacks.
* Rake (:mod:`.rake`): computed on the total pot when the engine awards the pots, zero
  unless the drop street was reached; the engine takes it from the main pot first.
* Crash (:mod:`.crash`): cash — the hand is cancelled, stacks restored, the table closed;
  tournament — the hand is rolled back and the same plan is dealt again.
* Tournament tables (``GameKind.TOURNAMENT``, driven by :mod:`cardroom.core.tournament`):
  :meth:`Table.add_chips` is refused (only :meth:`Table.add_tournament_chips`, for re-buys
  and add-ons); a player who loses all his chips leaves his seat when the hand ends
  (``HandRecord.busted``); :meth:`Table.seat_tournament_player` seats a drawn, late or
  moved player who owes nothing; :meth:`Table.set_stakes` sets the level between hands.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field

from cardroom.core.cards import Card
from cardroom.core.engine import (
    ActionKind,
    Event,
    ForcedBet,
    ForcedKind,
    Game,
    Hand,
    LegalActions,
    Options,
    Reason,
    SeatIn,
    Stakes,
    Variant,
)
from cardroom.core.table.autodraw import auto_draw, lowball_auto_draw
from cardroom.core.table.buyin import BuyInLimits
from cardroom.core.table.clock import TimeoutContext, TimeoutDecision, TurnClock, timeout_decision
from cardroom.core.table.crash import CrashRecovery, recover_from_crash
from cardroom.core.table.disconnect import AllInAllowance
from cardroom.core.table.rake import NoRake, RakePolicy, TableRake, hand_rake, rake_table_for, stakes_name
from cardroom.core.table.seating import BeforeDeal, HandPlan, Seating
from cardroom.core.table.settings import GameKind, TableSettings, uses_blinds

_AGGRESSIVE = frozenset((ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE))


class TableError(ValueError):
    """A table command the rules do not allow now (the table is unchanged); ``reason`` says
    why (the ``verify_*`` checks always give one)."""

    def __init__(self, message: str, reason: Reason | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


@dataclass(frozen=True, slots=True)
class HandRecord:
    """A finished hand: its plan, stacks before and after (seat -> chips), the rake."""

    number: int
    plan: HandPlan
    starting_stacks: dict[int, int]
    finishing_stacks: dict[int, int]
    rake: int
    artificial_all_in: tuple[int, ...]
    """Seats made artificially all-in in this hand (sorted)."""
    hand: Hand = field(repr=False, compare=False)
    seat_count: int = 0
    table_name: str = ""
    departed: tuple[tuple[int, str, int], ...] = ()
    """(seat, player, chips) of players who stood up during the hand: chips to accounts."""
    busted: tuple[tuple[int, str], ...] = ()
    """Tournament tables: (seat, player) of players who lost all their chips in this hand;
    they no longer hold a seat (rules/000: 'declared out of the tournament')."""

    def phh(self, **extra: object) -> str:
        """The hand as PHH text, with ``seat_count``, ``table``, ``hand`` and ``_rake`` (and
        ``extra`` fields, e.g. a dealer's ``_hand_id``), written by :func:`phh.dumps_fields`."""
        from cardroom.core import phh

        meta: dict[str, object] = {"seat_count": self.seat_count, "hand": self.number, "_rake": self.rake}
        if self.table_name:
            meta["table"] = self.table_name
        if self.plan.posted_to_enter:
            meta["_posted_to_enter"] = list(self.plan.posted_to_enter)
        fields = phh.to_fields(self.hand)
        fields.update(meta)
        fields.update(extra)
        return phh.dumps_fields(fields)


@dataclass(frozen=True, slots=True)
class RolledBack:
    """The table as a rollback of the hand in progress leaves it (:meth:`Table.rolled_back`)."""

    seating: Seating
    departed: tuple[tuple[int, str, int], ...] = ()
    """(seat, player, chips) of the players who asked to leave during the hand: chips to accounts."""


def table_antes(plan: HandPlan, stakes: Stakes) -> tuple[ForcedBet, ...]:
    """The plan's forced bets plus the antes one player posts for the table: the big blind's
    (``Stakes.big_blind_ante``) and the button's (``Stakes.button_ante``, when the button is
    dealt in) — dead money in the main pot (``ForcedKind.DEAD_ANTE``)."""
    extra: list[ForcedBet] = []
    if stakes.big_blind_ante and plan.big_blind is not None:
        extra.append(ForcedBet(plan.big_blind, ForcedKind.DEAD_ANTE, stakes.big_blind_ante))
    if stakes.button_ante and plan.button is not None and plan.button in plan.dealt:
        extra.append(ForcedBet(plan.button, ForcedKind.DEAD_ANTE, stakes.button_ante))
    return tuple(plan.forced) + tuple(extra)


class Table:
    """One table (see the module docstring). Seats are 1..``settings.seat_count``."""

    def __init__(
        self,
        settings: TableSettings,
        stakes: Stakes,
        *,
        rake: RakePolicy | None = None,
        buy_in: BuyInLimits | None = None,
        allowance: AllInAllowance | None = None,
        options: Options = Options(),
        name: str = "",
    ) -> None:
        self.settings = settings
        self.stakes = stakes
        self.variant = Variant(settings.game, settings.structure)
        if rake is None or settings.play_money:
            low, high = stakes_name(settings.structure, stakes)
            rake = (
                NoRake()
                if settings.play_money or settings.kind is GameKind.TOURNAMENT
                else TableRake(
                    rake_table_for(settings.game, settings.structure, low, high, settings.rake_table),
                    heads_up_table=settings.seat_count == 2,
                )
            )
        self.rake_policy = rake
        self.buy_in = buy_in
        self.allowance = allowance if allowance is not None else AllInAllowance(settings.all_in_allowance)
        self.options = options
        self.name = name
        blinds = uses_blinds(settings.game)
        self.seating = Seating(
            settings.seat_count,
            small_blind=stakes.small_blind if blinds else 0,
            big_blind=stakes.big_blind if blinds else 0,
            ante=stakes.ante,
            blinds=blinds,
            button_rule=settings.button_rule,
        )
        self.hand: Hand | None = None
        self.plan: HandPlan | None = None
        self.hand_number = 0
        self.closed = False
        self.connected: dict[int, bool] = {}
        self.time_bank: dict[int, float] = {}
        self.clock: TurnClock | None = None
        self.total_rake = 0
        self._start_stacks: dict[int, int] = {}
        self._restricted: dict[int, int] = {}  # seat -> street index with no bet/raise
        self._leaving: set[int] = set()
        self._sitting_out: set[int] = set()
        self._away: set[int] = set()
        self._replay: HandPlan | None = None
        """A hand a crash rolled back (tournaments): dealt again with its plan at its stakes."""
        self._before_deal: BeforeDeal | None = None  # what the hand's deal changed in the seating, as before it
        self._queued: dict[int, int] = {}
        self._sat_out_at: dict[int, float] = {}
        self._absent_hands: dict[int, int] = {}
        self.timeouts: dict[int, int] = {}
        """Consecutive turns timed out per seat (reset when the player acts himself)."""
        self.auto_sat_out: list[int] = []
        """Seats the last :meth:`finish` sat out for timing out or a missed orbit while away."""

    # ------------------------------------------------------------------ queries
    @property
    def in_hand(self) -> bool:
        return self.hand is not None and not self.hand.is_over

    def dealt_in(self, seat: int) -> bool:
        """``seat`` was dealt into the hand on the table (in play or not yet finished)."""
        return self.hand is not None and self.plan is not None and seat in self.plan.dealt

    def stack(self, seat: int) -> int:
        """Chips in front of ``seat`` now (during a hand: behind, plus any set aside)."""
        if self.dealt_in(seat):
            assert self.hand is not None
            return self.hand.stack(seat) + self.hand.set_aside(seat)
        return self.seating.seats[seat].stack

    def chips_on_table(self) -> int:
        """Every chip at the table: stacks, and the pot of the hand in progress."""
        total = sum(self.stack(s) for s in self.seating.seats)
        if self.in_hand:
            assert self.hand is not None
            total += self.hand.pot_total
        return total

    def legal_actions(self) -> LegalActions | None:
        """The engine's legal actions, without bet/raise for a player who stood pat on a
        draw timeout (rules/003: 'not be able to bet or raise' in the next betting round)."""
        if not self.in_hand:
            return None
        assert self.hand is not None
        la = self.hand.legal_actions()
        if la is None or not self._is_restricted(la.seat):
            return la
        return LegalActions(la.seat, la.kinds - _AGGRESSIVE, call_amount=la.call_amount, max_discards=la.max_discards)

    def _is_restricted(self, seat: int) -> bool:
        assert self.hand is not None
        return self._restricted.get(seat) == self.hand.street_index

    def time_bank_ahead(self, now: float) -> float:
        """Seconds of extra time the player on turn gets when his action clock runs out, as the
        timeout decision stands now (:func:`.clock.timeout_decision`: connected, money in the pot,
        bank left); 0 when he gets none or his time bank is already running."""
        clock = self.clock
        if clock is None or clock.bank_seconds > 0 or not self.in_hand:
            return 0.0
        decision = timeout_decision(self._timeout_context(clock.seat, now, use_bank=True))
        return self.time_bank.get(clock.seat, 0.0) if decision is TimeoutDecision.USE_TIME_BANK else 0.0

    # ------------------------------------------------------------------ seat commands
    def _check_open(self) -> None:
        if self.closed:
            raise TableError("the table is closed")

    def sit_down(self, seat: int, player: str, chips: int, *, post_now: bool = False, now: float = 0.0) -> None:
        """Take ``seat`` with a buy-in of ``chips``; post the big blind now or wait for it."""
        self._check_open()
        if self.buy_in is not None:
            try:
                self.buy_in.check(chips)
            except ValueError as exc:
                raise TableError(str(exc)) from None
        try:
            self.seating.sit_down(seat, player, chips, post_now=post_now)
        except ValueError as exc:
            raise TableError(str(exc)) from None
        self.connected[seat] = True
        self.time_bank[seat] = self.settings.time_bank_seconds

    def stand_up(self, seat: int, now: float = 0.0) -> int | None:
        """Leave; returns the chips to go back to the account, or None if the player is in
        the hand (at his turn he checks when checking is free, else his hand is folded; he
        leaves when the hand ends). ``now`` starts the next player's full clock when the
        leaver was on turn — one player's leaving never costs another his time."""
        if seat not in self.seating.seats:
            raise TableError(f"seat {seat} is empty")
        if self.dealt_in(seat):
            self._leaving.add(seat)
            self._auto(now)
            return None
        state = self.seating.stand_up(seat)
        self._forget(seat)
        return state.stack

    def _forget(self, seat: int) -> None:
        self.connected.pop(seat, None)
        self._away.discard(seat)
        self._queued.pop(seat, None)
        self._sat_out_at.pop(seat, None)
        self.timeouts.pop(seat, None)
        self._absent_hands.pop(seat, None)

    def sit_out(self, seat: int, now: float = 0.0) -> None:
        """Stop being dealt in (after the hand in progress, if he is in it)."""
        if seat not in self.seating.seats:
            raise TableError(f"seat {seat} is empty")
        if self.settings.kind is GameKind.TOURNAMENT:
            self._away.add(seat)  # still dealt in, blinds posted, acts by the timeout rule
            self._auto(now)
        elif self.dealt_in(seat):
            self._sitting_out.add(seat)
        else:
            self.seating.sit_out(seat)
            self._sat_out_at.setdefault(seat, now)

    def come_back(self, seat: int, *, post_now: bool = False) -> None:
        """Play again: post what is owed (``post_now``) or wait for the big blind."""
        if seat not in self.seating.seats:
            raise TableError(f"seat {seat} is empty")
        self._sitting_out.discard(seat)
        self._away.discard(seat)
        self._sat_out_at.pop(seat, None)
        self.timeouts.pop(seat, None)
        self._absent_hands.pop(seat, None)
        self.seating.come_back(seat, post_now=post_now)

    def waiting_for_big_blind(self, seat: int) -> bool:
        """Ready to play but not dealt in until the big blind reaches him (a new or returning
        player who owes blinds and chose to wait — rules/002 'Button and Blinds')."""
        state = self.seating.seats.get(seat)
        if state is None or not state.ready or not self.seating.blinds or not state.owes or state.post_now:
            return False
        if self.in_hand:
            return not self.dealt_in(seat)
        plan = copy.deepcopy(self.seating).next_hand()  # the next hand as the rules would deal it now
        return plan is not None and seat not in plan.dealt

    def can_post_now(self, seat: int) -> bool:
        """May the player offer to post the big blind now instead of waiting for it (rules/002:
        'they may post the equivalent of the big blind')?"""
        return self.waiting_for_big_blind(seat)

    def post_now(self, seat: int) -> None:
        """Post the big blind (and any dead small blind owed) at the next hand instead of waiting."""
        if not self.can_post_now(seat):
            raise TableError("nothing to post: the player is not waiting for the big blind", Reason.NOT_LEGAL_NOW)
        self.seating.set_post_now(seat, True)

    # ------------------------------------------------------------------ chips queued for the next hand
    def queued_chips(self, seat: int) -> int:
        """Chips the player asked to add while in the hand: added before the next deal."""
        return self._queued.get(seat, 0)

    def _refuse_queue_chips(self, seat: int, amount: int) -> TableError | None:
        if self.closed:
            return TableError("the table is closed", Reason.TABLE_CLOSED)
        if seat not in self.seating.seats:
            return TableError(f"seat {seat} is empty", Reason.SEAT_EMPTY)
        if amount <= 0:
            return TableError(f"the amount added must be positive, got {amount}", Reason.AMOUNT_NOT_POSITIVE)
        if not self.dealt_in(seat):
            return TableError("not in the hand: add the chips now", Reason.NOT_LEGAL_NOW)
        if seat in self._leaving:
            return TableError("the player is leaving the table", Reason.NOT_LEGAL_NOW)
        if self.buy_in is not None:
            try:
                self.buy_in.check_top_up(self.stack(seat) + self.queued_chips(seat), amount)
            except ValueError as exc:
                return TableError(str(exc), Reason.BUY_IN_ABOVE_MAXIMUM)
        return None

    def can_queue_chips(self, seat: int, amount: int) -> bool:
        """May the player in the hand in progress ask for ``amount`` to be added before the next
        deal (rules/002: chips are added between hands only, so the request waits for the end)?"""
        return self._refuse_queue_chips(seat, amount) is None

    def verify_queue_chips(self, seat: int, amount: int) -> None:
        refusal = self._refuse_queue_chips(seat, amount)
        if refusal is not None:
            raise refusal

    def queue_chips(self, seat: int, amount: int) -> None:
        """Queue ``amount`` for the seat; :meth:`take_queued_chips` hands it over after the hand."""
        self.verify_queue_chips(seat, amount)
        self._queued[seat] = self.queued_chips(seat) + amount

    def take_queued_chips(self) -> dict[int, int]:
        """Between hands: the queued additions (seat -> amount), now cleared; the service moves
        the money and calls :meth:`add_chips` for each before the next deal."""
        if self.in_hand:
            raise TableError("chips can be added only between hands", Reason.IN_HAND)
        queued, self._queued = self._queued, {}
        return {s: a for s, a in queued.items() if s in self.seating.seats}

    # ------------------------------------------------------------------ absent players (cash games)
    def sat_out_since(self, seat: int) -> float | None:
        """When the player at ``seat`` was sat out (None if he is not sitting out)."""
        state = self.seating.seats.get(seat)
        if state is None or not state.sitting_out:
            return None
        return self._sat_out_at.get(seat)

    def stand_up_deadline(self) -> float | None:
        """The earliest time a sat-out player is due to be stood up (cash games), or None."""
        limit = self.settings.stand_up_after_seconds
        if limit <= 0 or self.settings.kind is GameKind.TOURNAMENT:
            return None
        times = [t for s in self.seating.seats if (t := self.sat_out_since(s)) is not None]
        return min(times) + limit if times else None

    def overdue_sit_outs(self, now: float) -> list[int]:
        """Seats sat out for ``stand_up_after_seconds`` or more by ``now`` (cash games, between
        hands): the service stands them up and returns their chips to the wallet."""
        limit = self.settings.stand_up_after_seconds
        if limit <= 0 or self.settings.kind is GameKind.TOURNAMENT or self.in_hand:
            return []
        out = []
        for seat in sorted(self.seating.seats):
            if self.seating.seats[seat].sitting_out:
                self._sat_out_at.setdefault(seat, now)  # (a table restored from a snapshot)
            since = self.sat_out_since(seat)
            if since is not None and now >= since + limit:
                out.append(seat)
        return out

    def add_chips(self, seat: int, amount: int) -> None:
        """Add chips between hands (rules/002: 'NEVER DURING A HAND'). Refused at tournament
        tables (rules/000: 'Players may not acquire additional chips beyond the original
        Buy-in unless there are Re-buys and Add-ons' — see :meth:`add_tournament_chips`)."""
        if seat not in self.seating.seats:
            raise TableError(f"seat {seat} is empty")
        if self.settings.kind is GameKind.TOURNAMENT:
            raise TableError("no chips beyond the buy-in at a tournament table, except re-buys and add-ons")
        if self.dealt_in(seat):
            raise TableError("chips can be added only between hands")
        stack = self.seating.seats[seat].stack
        if self.buy_in is not None:
            try:
                self.buy_in.check_top_up(stack, amount)
            except ValueError as exc:
                raise TableError(str(exc)) from None
        elif amount <= 0:
            raise TableError("the amount added must be positive")
        self.seating.set_stack(seat, stack + amount)

    # ------------------------------------------------------------------ tournament tables
    def _check_tournament(self) -> None:
        if self.settings.kind is not GameKind.TOURNAMENT:
            raise TableError("only at a tournament table")

    def add_tournament_chips(self, seat: int, amount: int) -> None:
        """A re-buy or add-on the tournament sold (rules/000): between the player's hands."""
        self._check_tournament()
        if seat not in self.seating.seats:
            raise TableError(f"seat {seat} is empty")
        if self.dealt_in(seat) and self.in_hand:
            raise TableError("chips can be added only between hands")
        if amount <= 0:
            raise TableError("the amount added must be positive")
        self.seating.set_stack(seat, self.seating.seats[seat].stack + amount)

    def seat_tournament_player(self, seat: int, player: str, chips: int, time_bank: float | None = None) -> None:
        """Seat a tournament player (drawn at the start, late registered or moved here): he
        owes nothing and is dealt in at once except between the small blind and the button
        (rules/000 via TDA practice; the dead-button rotation of :mod:`.seating` skips a seat
        there until the button passes it). He is seated not connected (:attr:`connected_when_seated`).
        ``time_bank``: the Extra Time he has left from his last table (a move: "That Extra Time is
        limited ... It decreases as it is being used", rules/000), else the table's full time bank."""
        self._check_tournament()
        self._check_open()
        try:
            self.seating.sit_down(seat, player, chips)
        except ValueError as exc:
            raise TableError(str(exc)) from None
        self.seating.seats[seat].clear_debts()
        self.connected[seat] = self.connected_when_seated
        self.time_bank[seat] = self.settings.time_bank_seconds if time_bank is None else max(0.0, time_bank)

    @property
    def replaying(self) -> bool:
        """A hand rolled back by a crash waits to be dealt again: the same hand, its button, its
        blinds and the stakes it was dealt at (rules/000 'restored by rolling back these hands')."""
        return self._replay is not None

    def set_stakes(self, stakes: Stakes) -> None:
        """The level's blinds / antes / bring-in / limits, from the next hand on."""
        if self.in_hand:
            raise TableError("the stakes change between hands")
        if self.replaying and stakes != self.stakes:
            raise TableError("a rolled-back hand is dealt again at its own stakes: change them after it")
        self.stakes = stakes
        blinds = uses_blinds(self.settings.game)
        self.seating.small_blind = stakes.small_blind if blinds else 0
        self.seating.big_blind = stakes.big_blind if blinds else 0
        self.seating.ante = stakes.ante

    @property
    def connected_when_seated(self) -> bool:
        """Whether a player is connected from his seating on (and from a restore of the table): a cash
        player sits down himself, over his connection; a tournament seats its players, and one is
        connected only once his connection to the table is reported (:meth:`set_connected`) — Extra
        Time is "activated if a player has an active connection to the game", and "If a player is
        not connected before a hand starts, he or she will be dealt cards, and a blind and/or antes
        will be posted automatically" (rules/000)."""
        return self.settings.kind is not GameKind.TOURNAMENT

    def set_connected(self, seat: int, up: bool) -> None:
        """Connection up/down, as reported by the connection monitor."""
        if seat not in self.seating.seats:
            raise TableError(f"seat {seat} is empty")
        self.connected[seat] = up
        if up:
            self._absent_hands.pop(seat, None)

    # ------------------------------------------------------------------ check-only commands
    # can_x() / verify_x(): may this player do x now, and why not (a TableError with its Reason);
    # they change nothing. Services check with them before moving money, then call x().
    def seat_of(self, player: str) -> int | None:
        """The seat ``player`` sits in, or None."""
        return next((s for s, state in self.seating.seats.items() if state.player == player), None)

    def free_seat(self) -> int | None:
        """The lowest free seat, or None when the table is full."""
        return next((s for s in range(1, self.settings.seat_count + 1) if s not in self.seating.seats), None)

    def is_sitting_out(self, seat: int) -> bool:
        """Sitting out now, or from the end of the hand in progress."""
        return self.seating.seats[seat].sitting_out or seat in self._sitting_out or seat in self._away

    def _refuse_sit_down(self, player: str, chips: int, seat: int | None) -> TableError | None:
        count = self.settings.seat_count
        if self.closed:
            return TableError("the table is closed", Reason.TABLE_CLOSED)
        taken = self.seat_of(player)
        if taken is not None:
            return TableError(f"player {player!r} is already seated (seat {taken})", Reason.ALREADY_SEATED)
        if seat is not None and not 1 <= seat <= count:
            return TableError(f"seat {seat} is outside 1..{count}", Reason.SEAT_OUT_OF_RANGE)
        if len(self.seating.seats) >= count:
            return TableError(f"the table is full ({count} seats)", Reason.TABLE_FULL)
        if seat is not None and seat in self.seating.seats:
            return TableError(f"seat {seat} is taken", Reason.SEAT_TAKEN)
        if chips <= 0:
            return TableError(f"the buy-in must be positive, got {chips}", Reason.AMOUNT_NOT_POSITIVE)
        if self.buy_in is not None:
            try:
                self.buy_in.check(chips)
            except ValueError as exc:
                below = chips < self.buy_in.minimum
                return TableError(str(exc), Reason.BUY_IN_BELOW_MINIMUM if below else Reason.BUY_IN_ABOVE_MAXIMUM)
        return None

    def can_sit_down(self, player: str, chips: int, seat: int | None = None) -> bool:
        """May ``player`` sit down with ``chips`` (in ``seat``, or any free seat when None)?"""
        return self._refuse_sit_down(player, chips, seat) is None

    def verify_sit_down(self, player: str, chips: int, seat: int | None = None) -> None:
        """Raise the :class:`TableError` that :meth:`can_sit_down` would answer False for."""
        refusal = self._refuse_sit_down(player, chips, seat)
        if refusal is not None:
            raise refusal

    def _refuse_add_chips(self, seat: int, amount: int) -> TableError | None:
        if self.closed:
            return TableError("the table is closed", Reason.TABLE_CLOSED)
        if seat not in self.seating.seats:
            return TableError(f"seat {seat} is empty", Reason.SEAT_EMPTY)
        if amount <= 0:
            return TableError(f"the amount added must be positive, got {amount}", Reason.AMOUNT_NOT_POSITIVE)
        if self.dealt_in(seat):
            return TableError(
                "chips can be added only between hands (the player is in the hand in progress)", Reason.IN_HAND
            )
        if self.buy_in is not None:
            try:
                self.buy_in.check_top_up(self.seating.seats[seat].stack, amount)
            except ValueError as exc:
                return TableError(str(exc), Reason.BUY_IN_ABOVE_MAXIMUM)
        return None

    def can_add_chips(self, seat: int, amount: int) -> bool:
        """May the player at ``seat`` add ``amount`` now (rules/002: between hands, up to the maximum)?"""
        return self._refuse_add_chips(seat, amount) is None

    def verify_add_chips(self, seat: int, amount: int) -> None:
        refusal = self._refuse_add_chips(seat, amount)
        if refusal is not None:
            raise refusal

    def _refuse_seated(self, seat: int) -> TableError | None:
        if seat not in self.seating.seats:
            return TableError(f"seat {seat} is empty", Reason.SEAT_EMPTY)
        return None

    def can_stand_up(self, seat: int) -> bool:
        """May the player at ``seat`` leave (now, or at the end of the hand he is in)?"""
        return self._refuse_seated(seat) is None

    def verify_stand_up(self, seat: int) -> None:
        refusal = self._refuse_seated(seat)
        if refusal is not None:
            raise refusal

    def _refuse_sit_out(self, seat: int) -> TableError | None:
        if self.closed:
            return TableError("the table is closed", Reason.TABLE_CLOSED)
        return self._refuse_seated(seat)

    def can_sit_out(self, seat: int) -> bool:
        """May the player at ``seat`` sit out (from the end of the hand he is in)?"""
        return self._refuse_sit_out(seat) is None

    def verify_sit_out(self, seat: int) -> None:
        refusal = self._refuse_sit_out(seat)
        if refusal is not None:
            raise refusal

    def _refuse_come_back(self, seat: int) -> TableError | None:
        refusal = self._refuse_sit_out(seat)
        if refusal is None and not self.is_sitting_out(seat):
            player = self.seating.seats[seat].player
            return TableError(f"player {player!r} is not sitting out", Reason.NOT_SITTING_OUT)
        return refusal

    def can_come_back(self, seat: int) -> bool:
        """May the player at ``seat`` sit back in (he sits out, or will from the hand's end)?"""
        return self._refuse_come_back(seat) is None

    def verify_come_back(self, seat: int) -> None:
        refusal = self._refuse_come_back(seat)
        if refusal is not None:
            raise refusal

    def _refuse_act(self, seat: int, kind: ActionKind) -> TableError | None:
        la = self.legal_actions()
        if la is None:
            return TableError("no hand in progress", Reason.NO_HAND_IN_PROGRESS)
        if la.seat != seat:
            return TableError(
                f"not your turn: seat {la.seat} ({self.seating.seats[la.seat].player}) is to act", Reason.OUT_OF_TURN
            )
        if kind not in la.kinds:
            legal = ", ".join(sorted(k.value for k in la.kinds))
            return TableError(f"{kind.value} is not a legal action now (legal: {legal})", Reason.NOT_LEGAL_NOW)
        return None

    def can_act(self, seat: int, kind: ActionKind) -> bool:
        """Is ``kind`` legal for the player at ``seat`` now (his turn, the table's legal actions)?
        Amounts and discards are the engine's to check when he acts."""
        return self._refuse_act(seat, kind) is None

    def verify_act(self, seat: int, kind: ActionKind) -> None:
        refusal = self._refuse_act(seat, kind)
        if refusal is not None:
            raise refusal

    # ------------------------------------------------------------------ hands
    def start_hand(self, deck: Sequence[Card], now: float = 0.0) -> HandPlan | None:
        """Deal the next hand with ``deck`` (its order is the input); None if too few players."""
        self._check_open()
        if self.in_hand:
            raise TableError("a hand is in progress")
        before = self.seating.before_deal() if self._replay is None else None
        plan = self._replay if self._replay is not None else self.seating.next_hand()
        self._replay = None
        if plan is None:
            return None
        self._before_deal = before
        seats = [SeatIn(s, self.seating.seats[s].player, self.seating.seats[s].stack) for s in plan.dealt]
        policy = self.rake_policy
        n = len(seats)
        self.hand = Hand(
            self.variant,
            self.stakes,
            seats,
            plan.button,
            deck,
            table_antes(plan, self.stakes),
            rake=lambda hand, total: hand_rake(policy, total, n, hand.rake_eligible()),
            options=self.options,
        )
        self.plan = plan
        self.hand_number += 1
        self._start_stacks = {s.seat: s.stack for s in seats}
        self._restricted = {}
        self._start_clock(now)
        self._auto(now)
        return plan

    def rolled_back(self) -> RolledBack:
        """The table as a rollback of the hand dealt now would leave it (rules/000: "the hands in progress
        at every table will be restored by rolling back these hands. Each player's chip count will be reset
        to the amount at the beginning of the hand"): the button, the blinds and the debts from before its
        deal, with the seat changes made while it was played (:meth:`Seating.rolled_back`); and what the
        players dealt in asked for meanwhile done, as its end would have done it: those who asked to sit
        out sat out, those who asked to leave gone, their chips (as at the deal) in ``departed``. A rollback
        cancels the hand, not the players' requests: one who left is never dealt the next hand. Between
        hands, the seating itself. What a table's snapshot keeps, so that a crash restores no deal
        half-done."""
        if self.hand is None or self.plan is None or self._before_deal is None:
            return RolledBack(self.seating)
        seating = self.seating.rolled_back(self._before_deal, self.plan.dealt)
        for seat in sorted(self._sitting_out):
            if seat in seating.seats:
                seating.sit_out(seat)
        departed = []
        for seat in sorted(self._leaving):
            if seat in seating.seats:
                state = seating.stand_up(seat)
                departed.append((seat, state.player, state.stack))
        return RolledBack(seating, tuple(departed))

    def act(
        self, seat: int, kind: ActionKind, amount: int | None = None, *, discards: Sequence[Card] = (), now: float = 0.0
    ) -> Event:
        """The player at ``seat`` acts (engine errors propagate as ``IllegalAction``)."""
        if not self.in_hand:
            raise TableError("no hand in progress")
        assert self.hand is not None
        if kind in _AGGRESSIVE and self.hand.actor_seat == seat and self._is_restricted(seat):
            raise TableError("a player who stood pat on a draw timeout may not bet or raise in this betting round")
        event = self.hand.act(kind, amount, discards=discards, seat=seat)
        self.timeouts.pop(seat, None)
        self._spend_bank(seat, now)
        self._start_clock(now)
        self._auto(now)
        return event

    def tick(self, now: float) -> list[tuple[int, TimeoutDecision]]:
        """Apply timeouts whose clock ran out by ``now``; returns what was done."""
        done: list[tuple[int, TimeoutDecision]] = []
        while self.in_hand and self.clock is not None and self.clock.expired(now):
            seat = self.clock.seat
            decision = self._timeout(seat, now)
            done.append((seat, decision))
        return done

    def finish(self, now: float = 0.0) -> HandRecord:
        """Close the finished hand: stacks back to the seats, queued leaves / sit-outs done.

        Cash games: a player who timed out ``sit_out_after_timeouts`` turns in a row, or who
        stayed disconnected for a whole orbit (as many hands as players were dealt in), is sat
        out (:attr:`auto_sat_out`); in tournaments he stays dealt in (rules/000 'Disconnects')."""
        hand, plan = self.hand, self.plan
        if hand is None or plan is None or not hand.is_over:
            raise TableError("no finished hand")
        finishing = {s: hand.stack(s) for s in plan.dealt}
        for s, chips in finishing.items():
            self.seating.set_stack(s, chips)
        self.total_rake += hand.rake_taken
        departed = []
        for s in sorted(self._leaving):
            state = self.seating.stand_up(s)
            departed.append((s, state.player, state.stack))
            self._forget(s)
        busted: list[tuple[int, str]] = []
        if self.settings.kind is GameKind.TOURNAMENT:
            for s in plan.dealt:
                if s in self.seating.seats and self.seating.seats[s].stack == 0:
                    busted.append((s, self.seating.stand_up(s).player))
                    self._forget(s)
        record = HandRecord(
            self.hand_number,
            plan,
            dict(self._start_stacks),
            finishing,
            hand.rake_taken,
            tuple(sorted(hand.artificial_all_in_seats)),
            hand,
            self.settings.seat_count,
            self.name,
            tuple(departed),
            tuple(busted),
        )
        self.auto_sat_out = self._absentees(plan)
        for s in sorted(self._sitting_out | set(self.auto_sat_out)):
            if s in self.seating.seats:
                self.seating.sit_out(s)
                self._sat_out_at.setdefault(s, now)
        self._leaving.clear()
        self._sitting_out.clear()
        self.hand = None
        self.clock = None
        self._before_deal = None
        return record

    def crash(self) -> CrashRecovery:
        """Server crash (rules/003 cash: cancel and close; rules/000 tournament: roll back)."""
        players = {s: st.player for s, st in self.seating.seats.items()}
        start = {s: st.stack for s, st in self.seating.seats.items()}
        current = dict(start)
        if self.in_hand:
            assert self.hand is not None
            for s in self._start_stacks:
                start[s] = self._start_stacks[s]
                current[s] = self.hand.stack(s) + self.hand.set_aside(s)
        recovery = recover_from_crash(self.settings.kind, players, start, current)
        for s, chips in recovery.stacks.items():
            self.seating.set_stack(s, chips)
        if recovery.replay_hand and self.in_hand:
            self._replay = self.plan
            self.hand_number -= 1
        self.hand = None
        self.clock = None
        self._before_deal = None
        self._leaving.clear()
        self._sitting_out.clear()
        if recovery.close_table:
            for s in list(self.seating.seats):
                self.seating.stand_up(s)
            self.closed = True
        return recovery

    # ------------------------------------------------------------------ internals
    def _absentees(self, plan: HandPlan) -> list[int]:
        """Seats of the finished hand to sit out for timing out or being away (cash games)."""
        if self.settings.kind is GameKind.TOURNAMENT:
            return []
        out = []
        limit = self.settings.sit_out_after_timeouts
        for s in plan.dealt:
            if s not in self.seating.seats or self.seating.seats[s].sitting_out:
                continue
            if not self.connected.get(s, True):
                self._absent_hands[s] = self._absent_hands.get(s, 0) + 1
            orbit = self.settings.sit_out_after_missed_orbit and self._absent_hands.get(s, 0) >= max(2, len(plan.dealt))
            if (limit > 0 and self.timeouts.get(s, 0) >= limit) or orbit:
                out.append(s)
                self.timeouts.pop(s, None)
                self._absent_hands.pop(s, None)
        return out

    def _start_clock(self, now: float) -> None:
        """A new turn clock for the player on turn."""
        if not self.in_hand:
            self.clock = None
            return
        assert self.hand is not None
        la = self.hand.legal_actions()
        assert la is not None
        seconds = self.settings.draw_seconds if ActionKind.DRAW in la.kinds else self.settings.action_seconds
        self.clock = TurnClock(la.seat, now, seconds)

    def _spend_bank(self, seat: int, now: float) -> None:
        clock = self.clock
        if clock is not None and clock.seat == seat and clock.bank_seconds > 0:
            used = min(clock.bank_seconds, max(0.0, now - (clock.started + clock.seconds)))
            self.time_bank[seat] = max(0.0, self.time_bank.get(seat, 0.0) - used)

    def _auto(self, now: float = 0.0) -> None:
        """Act at once for players who stood up (fold) or sit out in a tournament (the
        timeout decision: dealt in, blinds posted, check or fold — rules/000)."""
        while self.in_hand:
            assert self.hand is not None
            seat = self.hand.actor_seat
            assert seat is not None
            if seat in self._leaving:
                la = self.hand.legal_actions()
                assert la is not None
                if ActionKind.DRAW in la.kinds:
                    self.hand.act(ActionKind.DRAW, seat=seat)
                elif ActionKind.BRING_IN in la.kinds:
                    self.hand.act(ActionKind.BRING_IN, seat=seat)
                else:  # a free check is taken, never thrown away (issue: leave with a free check)
                    self.hand.act(ActionKind.CHECK if ActionKind.CHECK in la.kinds else ActionKind.FOLD, seat=seat)
                self._start_clock(now)
            elif seat in self._away:
                self._timeout(seat, now, use_bank=False)
            else:
                return

    def _timeout_context(self, seat: int, now: float, *, use_bank: bool) -> TimeoutContext:
        """The facts the timeout decision of the player on turn (``seat``) depends on."""
        hand = self.hand
        clock = self.clock
        assert hand is not None and clock is not None
        la = self.legal_actions()
        assert la is not None and la.seat == seat
        player = self.seating.seats[seat].player
        return TimeoutContext(
            kind=self.settings.kind,
            structure=self.settings.structure,
            connected=self.connected.get(seat, True),
            money_in_pot=hand.committed[hand.position(seat)] > 0,
            can_check=ActionKind.CHECK in la.kinds,
            is_draw=ActionKind.DRAW in la.kinds,
            all_ins_left=self.allowance.left(player, now),
            time_bank_left=0.0 if clock.bank_seconds > 0 or not use_bank else self.time_bank.get(seat, 0.0),
            bring_in_due=ActionKind.BRING_IN in la.kinds,
            bank_when_disconnected=self.settings.time_bank_when_disconnected,
        )

    def _timeout(self, seat: int, now: float, *, use_bank: bool = True) -> TimeoutDecision:
        hand = self.hand
        clock = self.clock
        assert hand is not None and clock is not None
        player = self.seating.seats[seat].player
        decision = timeout_decision(self._timeout_context(seat, now, use_bank=use_bank))
        if decision is TimeoutDecision.USE_TIME_BANK:
            self.clock = clock.with_time_bank(self.time_bank[seat])
            return decision
        if clock.bank_seconds > 0:
            self.time_bank[seat] = 0.0  # the extra time ran out too
        if use_bank:
            self.timeouts[seat] = self.timeouts.get(seat, 0) + 1
        if decision is TimeoutDecision.BRING_IN:
            hand.act(ActionKind.BRING_IN, seat=seat)
        elif decision is TimeoutDecision.STAND_PAT:
            hand.act(ActionKind.DRAW, seat=seat)
            self._restricted[seat] = hand.street_index
        elif decision is TimeoutDecision.AUTO_DRAW:
            cards = hand.hole_cards(seat)
            pick = lowball_auto_draw if self.settings.game is Game.TRIPLE_DRAW_27 else auto_draw
            hand.act(ActionKind.DRAW, discards=pick(cards).discard if len(cards) == 5 else (), seat=seat)
        elif decision is TimeoutDecision.ARTIFICIAL_ALL_IN:
            hand.artificial_all_in(seat)
            self.allowance.use(player, now)
        elif decision is TimeoutDecision.CHECK:
            hand.act(ActionKind.CHECK, seat=seat)
        else:
            hand.act(ActionKind.FOLD, seat=seat)
        self._start_clock(now)
        self._auto(now)
        return decision
