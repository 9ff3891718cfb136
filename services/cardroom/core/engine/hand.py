"""One hand of poker, start to finish: forced bets, dealing, betting, draws, showdown.

Positions: players are kept in *dealing order* — for button games the first seat left of
the button first and the button last (heads-up: [big blind, button]); for Stud and Soko
seats in ascending order from the dealer box. Odd chips go to the first winner in that
order (rules/000 'to the left of the dealer', rules/003 'nearest the dealer box', Soko
'dealt cards first').

No-limit / pot-limit raises: the minimum raise is the largest full bet or raise of the
round (at least the minimum bet). An all-in raise short of a full raise does not reopen
the betting: a player who already acted may only call or fold unless the bet has grown by
at least a full raise since his last action (the casino rule; rules/003 'unless a player
is going all-in'). A check is not an action on a bet: after a short all-in *bet*, players
who checked may raise.

Pot limit: the largest raise makes the player's bet ``current bet + (pot + his call)``
(rules/000: call 5 into 20 → the pot becomes 50). Half-pot limit: the raise is at most half
of (pot + call). Fixed limit caps at ``Stakes.max_bets`` bets (the pre-flop big blind is the
first one unless ``Stakes.blind_counts_as_bet`` is False); spread limit caps each round at
3 x the round's limit instead. A player who already covers every opponent (they are all
in for no more than his bet) is skipped when a betting round starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cardroom.core.cards import Card, check_distinct
from cardroom.core.engine.actions import ActionKind, LegalActions
from cardroom.core.engine.dealing import CardSource, DeckSource
from cardroom.core.engine.errors import IllegalAction, Reason
from cardroom.core.engine.events import (
    ActionTaken,
    ArtificialAllIn,
    BetReturned,
    BoardDealt,
    CardsDealt,
    DrawMade,
    Event,
    ForcedBet,
    ForcedBetPosted,
    ForcedKind,
    HandEnded,
    StreetStarted,
    StubReshuffled,
)
from cardroom.core.engine.options import Options
from cardroom.core.engine.pots import Pot, build_pots
from cardroom.core.engine.showdown import Contest, Settlement, settle
from cardroom.core.engine.spec import Opening, Stakes, Structure, Variant
from cardroom.core.evaluation import bring_in_key, showing_value

__all__ = ["Hand", "Options", "RakeFunction", "SeatIn"]

_FOLD, _CHECK, _CALL, _BET, _RAISE = (
    ActionKind.FOLD,
    ActionKind.CHECK,
    ActionKind.CALL,
    ActionKind.BET,
    ActionKind.RAISE,
)
_BRING_IN, _COMPLETE, _DRAW = ActionKind.BRING_IN, ActionKind.COMPLETE, ActionKind.DRAW
_LIMITS = (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)


def _pair(*kinds: ActionKind) -> tuple[tuple[ActionKind, ...], frozenset[ActionKind]]:
    return kinds, frozenset(kinds)


# legal-action combinations, built once (hashing enums per call is slow)
_COMBOS = [
    _pair(*base, *extra)
    for base in ((_FOLD, _CALL), (_FOLD, _CHECK), (_CHECK,))
    for extra in ((), (_COMPLETE,), (_BET,), (_RAISE,))
]
_DRAW_ONLY = _pair(_DRAW)
_BRING_IN_ONLY = _pair(_BRING_IN)
_BRING_IN_OR = {True: _pair(_BRING_IN, _COMPLETE), False: _pair(_BET, _BRING_IN)}


@dataclass(slots=True)
class SeatIn:
    """A player dealt into the hand: seat number (any int), player id, starting stack."""

    seat: int
    player: str
    stack: int


RakeFunction = Callable[["Hand", int], int]


class Hand:
    """A single hand. Construct it, then call :meth:`act` for the player on turn until
    :attr:`is_over`. See the package docstring for the full API."""

    def __init__(
        self,
        variant: Variant,
        stakes: Stakes,
        seats: Sequence[SeatIn],
        button: int | None,
        deck: Sequence[Card] | CardSource,
        forced_bets: Sequence[ForcedBet] | None = None,
        *,
        rake: RakeFunction | int | None = None,
        options: Options = Options(),
        reshuffle_seed: int = 0,
        bring_in_seat: int | None = None,
    ) -> None:
        spec = variant.spec
        self.variant = variant
        self.spec = spec
        self.stakes = stakes
        self.options = options
        self.button = button
        if isinstance(rake, int):
            amount = rake
            rake = (lambda hand, total: amount) if amount else None
        self._rake = rake
        if len(seats) < 2:
            raise IllegalAction(Reason.BAD_SETUP, "a hand needs at least two players")
        if len(seats) > spec.max_players:
            raise IllegalAction(Reason.BAD_SETUP, f"at most {spec.max_players} players in {variant.code}")
        numbers = [s.seat for s in seats]
        if len(set(numbers)) != len(numbers):
            raise IllegalAction(Reason.BAD_SETUP, "a seat is dealt in twice")
        if any(s.stack <= 0 for s in seats):
            raise IllegalAction(Reason.BAD_SETUP, "every player dealt in needs chips")
        ordered = sorted(seats, key=lambda s: s.seat)
        if spec.uses_button and button is None:
            raise IllegalAction(Reason.BAD_SETUP, f"{variant.code} needs a button seat")
        if button is not None:  # Stud/Soko: an optional dealer-box seat (default: before seat 1)
            after = [s for s in ordered if s.seat > button]
            ordered = after + [s for s in ordered if s.seat <= button]
        n = len(ordered)
        self.n = n
        self.seats: list[int] = [s.seat for s in ordered]
        self.players: list[str] = [s.player for s in ordered]
        self.starting_stacks: list[int] = [s.stack for s in ordered]
        self._pos = {seat: i for i, seat in enumerate(self.seats)}
        self.stacks: list[int] = list(self.starting_stacks)
        self.bets: list[int] = [0] * n
        self.committed: list[int] = [0] * n
        self.dead: list[int] = [0] * n
        """Dead money per position (dead blinds, big-blind/button antes): part of ``committed``,
        in the main pot, never any player's own contribution (see :mod:`.pots`)."""
        self.folded: list[bool] = [False] * n
        self._live_count = n
        self.fold_order: list[int] = []
        self.hole: list[list[Card]] = [[] for _ in range(n)]
        self.up: list[list[bool]] = [[] for _ in range(n)]
        self.board: list[Card] = []
        self.events: list[Event] = []
        self.source: CardSource = deck if isinstance(deck, CardSource) else DeckSource(deck, reshuffle_seed)
        if not isinstance(deck, CardSource) and len(deck) != 52:
            raise IllegalAction(Reason.BAD_SETUP, f"a deck order has 52 cards, not {len(deck)}")
        if not isinstance(deck, CardSource) and len({c.index for c in deck}) != len(deck):
            try:
                check_distinct(deck)
            except ValueError as exc:
                raise IllegalAction(Reason.DUPLICATE_CARD, str(exc)) from None
        self.street_index = -1
        self.actor: int | None = None
        self.is_over = False
        self.draws_made = 0
        self.winnings: list[int] = [0] * n
        self.rake_taken = 0
        self.showdown_order: list[int] = []
        self.pots_awarded: list[Pot] = []
        self._set_aside: dict[int, int] = {}  # position -> chips kept by an artificial all-in
        self.artificial_all_in_seats: list[int] = []
        # betting-round state
        self._queue: list[int] = []
        self._max_bet = 0
        self._full_raise = 0
        self._raise_count = 0
        self._acted_at: list[int | None] = [None] * n
        self._aggressor: int | None = None
        self._last_aggressor: int | None = None
        self._betting_closed = False
        self._bring_in_pending = False
        self._completed = True
        self._drawing = False
        self._double_allowed = False
        self._fl_size = 0
        self._big_blind_pos: int | None = None
        self._straddle_pos: int | None = None  # the last straddle: pre-flop action starts left of it
        self._bring_in_seat = bring_in_seat  # a replay's own bring-in (its up-cards may be unknown)
        self._mucking: set[int] = set()  # positions that muck at the showdown
        self._big_blind_price = 0  # the full big blind: the pre-flop price even when it is short
        self.nominal_forced: list[ForcedBet] = []
        """The forced bets as asked (a short stack posts what it has: see the ForcedBetPosted events)."""
        self._la_cache: tuple[int, int, int, int] | None = None  # (events, actor, min_to, max_to)
        self._post_forced(forced_bets)
        self._next_street()

    # ------------------------------------------------------------------ queries
    @property
    def actor_seat(self) -> int | None:
        """Seat whose turn it is (None when the hand is over)."""
        return None if self.actor is None else self.seats[self.actor]

    def position(self, seat: int) -> int:
        return self._pos[seat]

    @property
    def flop_dealt(self) -> bool:
        """True once a flop was dealt (Hold'em/Omaha rake rule, rules/003)."""
        return len(self.board) >= 3 and self.spec.has_board

    @property
    def street_name(self) -> str:
        return self.spec.streets[max(self.street_index, 0)].name

    def rake_eligible(self) -> bool:
        """No flop, no drop (rules/003): a flop in Hold'em/Omaha, a draw in draw games, a
        third card in Soko (its second street), a fourth card in Stud (fourth street)."""
        if self.spec.has_board:
            return self.flop_dealt
        if self.spec.is_draw:
            return self.draws_made > 0
        return self.street_index >= 1

    def pots(self, *, include_bets: bool = True) -> list[Pot]:
        """Current pots (chips committed so far, bets included); members are seats.

        ``include_bets=False``: the pots in the middle only, as a table shows them during the
        hand — the bets of the betting round still in front of the players are left out until
        the round closes (after an all-in, the side pots as the betting goes on)."""
        live = [not f for f in self.folded]
        committed = self.committed if include_bets else [c - b for c, b in zip(self.committed, self.bets, strict=True)]
        return [
            Pot(p.amount, tuple(self.seats[i] for i in p.members))
            for p in build_pots(committed, live, self.fold_order, self.dead)
        ]

    @property
    def pot_total(self) -> int:
        return sum(self.committed)

    def stack(self, seat: int) -> int:
        """Chips behind (not yet in the pot) of ``seat``."""
        return self.stacks[self._pos[seat]]

    def set_aside(self, seat: int) -> int:
        """Chips ``seat`` keeps out of play after an artificial all-in (0 otherwise, and 0 once
        the hand is over: they are back in his stack)."""
        return self._set_aside.get(self._pos[seat], 0)

    def bet(self, seat: int) -> int:
        """``seat``'s bet in the current betting round."""
        return self.bets[self._pos[seat]]

    def is_folded(self, seat: int) -> bool:
        return self.folded[self._pos[seat]]

    def is_all_in(self, seat: int) -> bool:
        i = self._pos[seat]
        return not self.folded[i] and self.stacks[i] == 0

    def results(self) -> dict[int, int]:
        """Net chips per seat (final stack minus starting stack)."""
        return {self.seats[i]: self.stacks[i] - self.starting_stacks[i] for i in range(self.n)}

    def hole_cards(self, seat: int) -> tuple[Card, ...]:
        return tuple(self.hole[self._pos[seat]])

    def up_cards(self, seat: int) -> tuple[Card, ...]:
        i = self._pos[seat]
        return tuple(c for c, u in zip(self.hole[i], self.up[i], strict=True) if u)

    def legal_actions(self) -> LegalActions | None:
        """The actions open to the player on turn, with amount bounds (None if over)."""
        i = self.actor
        if i is None:
            return None
        seat = self.seats[i]
        if self._drawing:
            return LegalActions(seat, _DRAW_ONLY[1], max_discards=min(5, len(self.hole[i])), ordered=_DRAW_ONLY[0])
        stack = self.stacks[i]
        bet = self.bets[i]
        if self._bring_in_pending:
            lo, hi = self._raise_bounds(i)
            if stack + bet > self.stakes.bring_in and hi > 0:
                pair = _BRING_IN_OR[self.variant.structure in _LIMITS]
            else:
                pair = _BRING_IN_ONLY
            return LegalActions(seat, pair[1], min_to=lo, max_to=hi, ordered=pair[0])
        to_call = self._max_bet - bet
        base = 0 if to_call > 0 else (1 if self.options.open_fold else 2)
        lo = hi = 0
        extra = 0
        if self._can_raise(i):
            lo, hi = self._raise_bounds(i)
            self._la_cache = (len(self.events), i, lo, hi)
            if not self._completed and self.variant.structure in _LIMITS:
                extra = 1
            elif self._max_bet == 0:
                extra = 2
            else:
                extra = 3
        ordered, kinds = _COMBOS[base * 4 + extra]
        return LegalActions(seat, kinds, min(stack, to_call), lo, hi, 0, ordered)

    # ------------------------------------------------------------------ actions
    def act(
        self, kind: ActionKind, amount: int | None = None, *, discards: Sequence[Card] = (), seat: int | None = None
    ) -> Event:
        """Apply the action of the player on turn (``seat`` checks who is acting).
        ``amount`` is the *to* amount for BET/RAISE/COMPLETE. Raises :class:`IllegalAction`
        with the state unchanged if the action is not legal."""
        i = self.actor
        if i is None:
            raise IllegalAction(Reason.HAND_OVER, "the hand is over")
        if seat is not None and seat != self.seats[i]:
            raise IllegalAction(Reason.OUT_OF_TURN, f"seat {seat} acted but it is seat {self.seats[i]}'s turn")
        if self._drawing:
            if kind is not _DRAW:
                raise IllegalAction(Reason.NOT_LEGAL_NOW, f"{kind.value} during a draw: only draw is legal")
            return self._draw(i, discards)
        if kind is _DRAW:
            raise IllegalAction(Reason.NOT_LEGAL_NOW, "draw during a betting round")
        stack, bet = self.stacks[i], self.bets[i]
        to_call = self._max_bet - bet
        if self._bring_in_pending:
            if kind is _BRING_IN:
                return self._put(i, _BRING_IN, min(self.stakes.bring_in, stack + bet), True)
            if kind is not _COMPLETE and kind is not _BET and kind is not _RAISE:
                raise IllegalAction(Reason.NOT_LEGAL_NOW, f"{kind.value}: the bring-in must bring in or complete")
            return self._raise_to(i, kind, amount)
        if kind is _FOLD:
            if to_call <= 0 and not self.options.open_fold:
                raise IllegalAction(Reason.NOT_LEGAL_NOW, "fold when checking is free")
            return self._fold(i)
        if kind is _CHECK:
            if to_call > 0:
                raise IllegalAction(Reason.NOT_LEGAL_NOW, f"check facing a bet of {self._max_bet}")
            return self._passive(i, _CHECK, bet)
        if kind is _CALL:
            if to_call <= 0:
                raise IllegalAction(Reason.NOT_LEGAL_NOW, "call with nothing to call (check instead)")
            return self._passive(i, _CALL, min(self._max_bet, bet + stack))
        if kind is _BET and self._max_bet > 0:
            raise IllegalAction(Reason.NOT_LEGAL_NOW, f"bet when there is a bet of {self._max_bet} (raise)")
        if kind is _RAISE and self._max_bet == 0:
            raise IllegalAction(Reason.NOT_LEGAL_NOW, "raise with no bet to raise (bet)")
        if kind is _BRING_IN:
            raise IllegalAction(Reason.NOT_LEGAL_NOW, "no bring-in is due")
        return self._raise_to(i, kind, amount)

    def artificial_all_in(self, seat: int) -> Event:
        """Treat ``seat``, the player on turn, as all-in for what he has already put in the
        pot (rules/002 'All-Ins' on Internet disconnects, rules/003 'Artificial All-In').

        He acts no more this hand and contests only the pots he contributed to: later bets
        make side pots without him. His remaining chips are set aside (:meth:`set_aside`)
        and are back in his stack when the hand ends. Legal in a betting round of a fixed-
        or spread-limit game (rules/003: not PL, half-PL or NL), not while a bring-in is due,
        and only if he has chips in the pot this hand (antes and blinds count); otherwise
        :class:`IllegalAction` with the state unchanged. Returns the :class:`ArtificialAllIn`
        event."""
        i = self.actor
        if i is None:
            raise IllegalAction(Reason.HAND_OVER, "the hand is over")
        if seat != self.seats[i]:
            raise IllegalAction(
                Reason.OUT_OF_TURN, f"artificial all-in for seat {seat} but it is seat {self.seats[i]}'s turn"
            )
        structure = self.variant.structure
        if structure not in _LIMITS:
            raise IllegalAction(
                Reason.NOT_LEGAL_NOW,
                f"artificial all-in: only in fixed and spread limit games (rules/003), not {structure.value}",
            )
        if self._drawing:
            raise IllegalAction(Reason.NOT_LEGAL_NOW, "artificial all-in during a draw: only draw is legal")
        if self._bring_in_pending:
            raise IllegalAction(Reason.NOT_LEGAL_NOW, "artificial all-in: the bring-in is due (bring in or complete)")
        committed = self.committed[i]
        if committed <= 0:
            raise IllegalAction(
                Reason.NO_MONEY_IN_POT,
                f"artificial all-in: seat {seat} has no money in the pot (rules/003: his hand is folded instead)",
            )
        kept = self.stacks[i]
        self.stacks[i] = 0
        self._set_aside[i] = kept
        self.artificial_all_in_seats.append(seat)
        event = ArtificialAllIn(seat, self.bets[i], committed, kept)
        self.events.append(event)
        self._acted_at[i] = self._max_bet
        queue = self._queue
        del queue[0]
        if queue:
            self.actor = queue[0]
        else:
            self.actor = None
            self._close_round()
        return event

    def muck_at_showdown(self, seat: int) -> None:
        """``seat`` will muck his hand at the showdown instead of showing it (rules/000
        'Showdown': "anyone else can fold. Players who elect to fold do not have to show their
        cards"): his hand contests no pot there, his chips stay in. Given before the showdown
        (a replay states it up front); ignored if every remaining hand of a pot mucks."""
        if self.is_over:
            raise IllegalAction(Reason.HAND_OVER, "the hand is over")
        self._mucking.add(self._pos[seat])

    def fold(self) -> Event:
        return self.act(_FOLD)

    def check(self) -> Event:
        return self.act(_CHECK)

    def call(self) -> Event:
        return self.act(_CALL)

    def check_or_call(self) -> Event:
        return self.act(_CALL if self._max_bet > self.bets[self.actor or 0] else _CHECK)

    def bet_or_raise_to(self, amount: int) -> Event:
        kind = _BET if self._max_bet == 0 else _RAISE
        if self._bring_in_pending or (not self._completed and self.variant.structure in _LIMITS):
            kind = _COMPLETE
        return self.act(kind, amount)

    def draw(self, discards: Sequence[Card] = ()) -> Event:
        return self.act(_DRAW, discards=discards)

    # ------------------------------------------------------------------ internals: set-up
    def _emit(self, event: Event) -> None:
        self.events.append(event)

    def _post(self, i: int, kind: ForcedKind, amount: int) -> None:
        amount = min(amount, self.stacks[i])
        if amount <= 0:
            return
        self.stacks[i] -= amount
        self.committed[i] += amount
        if kind in (ForcedKind.SMALL_BLIND, ForcedKind.BIG_BLIND, ForcedKind.STRADDLE):
            self.bets[i] += amount
        elif kind is ForcedKind.DEAD_BLIND or kind is ForcedKind.DEAD_ANTE:
            self.dead[i] += amount
        self._emit(ForcedBetPosted(self.seats[i], kind, amount, self.stacks[i] == 0))

    def _post_forced(self, forced: Sequence[ForcedBet] | None) -> None:
        st = self.stakes
        if forced is None:
            forced = []
            if st.ante:
                forced += [ForcedBet(s, ForcedKind.ANTE, st.ante) for s in self.seats]
            if self.spec.uses_button:
                if self.n == 2:
                    sb, bb = self.seats[1], self.seats[0]
                else:
                    sb, bb = self.seats[0], self.seats[1]
                if st.small_blind:
                    forced.append(ForcedBet(sb, ForcedKind.SMALL_BLIND, st.small_blind))
                if st.big_blind:
                    forced.append(ForcedBet(bb, ForcedKind.BIG_BLIND, st.big_blind))
                if st.big_blind_ante:  # posted by the big blind for the table: dead money
                    forced.append(ForcedBet(bb, ForcedKind.DEAD_ANTE, st.big_blind_ante))
                if st.button_ante and self.button in self._pos:
                    forced.append(ForcedBet(self.button, ForcedKind.DEAD_ANTE, st.button_ante))
        self.nominal_forced = list(forced)
        for fb in forced:
            if fb.seat not in self._pos:
                raise IllegalAction(Reason.BAD_SETUP, f"forced bet for seat {fb.seat}, not dealt in")
            if fb.amount < 0:
                raise IllegalAction(Reason.BAD_SETUP, "negative forced bet")
        # antes and dead money first, then live blinds (a short stack pays the ante first)
        first = (ForcedKind.ANTE, ForcedKind.DEAD_ANTE, ForcedKind.DEAD_BLIND)
        order = sorted(forced, key=lambda f: 0 if f.kind in first else 1)
        for fb in order:
            i = self._pos[fb.seat]
            if fb.kind is ForcedKind.BRING_IN:
                continue  # the bring-in is an action of the first Stud round
            self._post(i, fb.kind, fb.amount)
            if fb.kind is ForcedKind.STRADDLE:
                self._straddle_pos = i
            if fb.kind is ForcedKind.BIG_BLIND and self._big_blind_pos is None:
                self._big_blind_pos = i
                if self.options.full_big_blind_when_short:
                    self._big_blind_price = fb.amount

    # ------------------------------------------------------------------ internals: streets
    def _live(self) -> list[int]:
        return [i for i in range(self.n) if not self.folded[i]]

    def _next_street(self) -> None:
        self._aggressor = None
        self.street_index += 1
        k = self.street_index
        if k >= len(self.spec.streets):
            self._showdown()
            return
        street = self.spec.streets[k]
        self.events.append(StreetStarted(k, street.name))
        src = self.source
        live = self._live()
        if (
            k > 0
            and street.burn
            and self.options.burn
            and not ((street.down or street.up) and src.community_needed(len(live) + 1))
        ):
            src.burn()
        community = False
        if street.down or street.up:
            if k > 0 and self.spec.is_stud_like and src.community_needed(len(live)):
                card = src.board()
                self.board.append(card)
                self._emit(BoardDealt((card,)))
                community = True
            else:
                down, up = street.down, street.up
                seats = self.seats
                hole, ups = self.hole, self.up
                emit = self.events.append
                live_seats = [seats[i] for i in live]
                if not up:  # face down only (blind games, 7th street)
                    for i, d in zip(live, src.deal(live_seats, down), strict=True):
                        hole[i] += d
                        ups[i] += [False] * down
                        emit(CardsDealt(seats[i], tuple(d), seats[i]))
                else:
                    downs = src.deal(live_seats, down) if down else [[] for _ in live]
                    opens = src.deal(live_seats, up)
                    for j, i in enumerate(live):
                        d, u = downs[j], opens[j]
                        hole[i] += d + u
                        ups[i] += [False] * len(d) + [True] * len(u)
                        seat = seats[i]
                        if d:
                            emit(CardsDealt(seat, tuple(d), seat))
                        emit(CardsDealt(seat, tuple(u), None))
        if street.board:
            cards = tuple(src.boards(street.board))
            self.board.extend(cards)
            self._emit(BoardDealt(cards))
        if street.draw:
            self._drawing = True
            self._queue = list(live)
            self.actor = self._queue[0]
            return
        if community:
            self._close_round()  # rules/003: no betting on the shared-card round
            return
        self._start_betting()

    def _draw(self, i: int, discards: Sequence[Card]) -> Event:
        held = self.hole[i]
        discards = tuple(discards)
        if len(discards) > 5:
            raise IllegalAction(Reason.TOO_MANY_DISCARDS, f"{len(discards)} discards: at most 5")
        if len(set(discards)) != len(discards):
            raise IllegalAction(Reason.DUPLICATE_CARD, "the same card discarded twice")
        for c in discards:
            if c not in held:
                raise IllegalAction(Reason.CARD_NOT_HELD, f"{c} is not in seat {self.seats[i]}'s hand")
        new, reshuffled = self.source.draw(self.seats[i], discards)
        if reshuffled:
            self._emit(StubReshuffled(reshuffled))
        kept = [c for c in held if c not in discards]
        self.hole[i] = kept + new
        self.up[i] = [False] * len(self.hole[i])
        self.draws_made += 1
        event = DrawMade(self.seats[i], discards, tuple(new))
        self._emit(event)
        self._queue.pop(0)
        if self._queue:
            self.actor = self._queue[0]
        else:
            self._drawing = False
            self.actor = None
            if self._betting_closed:
                self._close_round()
            else:
                self._start_betting()
        return event

    def _opener(self) -> int:
        street = self.spec.streets[self.street_index]
        if street.opening is Opening.POSITION:
            if self.street_index == 0 and self._straddle_pos is not None:
                start = self._straddle_pos + 1
            elif self.street_index == 0 and self._big_blind_pos is not None:
                start = self._big_blind_pos + 1
            elif self.street_index == 0 and any(self.bets):
                top = max(range(self.n), key=lambda j: (self.bets[j], -j))
                start = top + 1
            else:
                start = 0
            for d in range(self.n):
                j = (start + d) % self.n
                if not self.folded[j]:
                    return j
            raise AssertionError("no live player")  # pragma: no cover
        live = self._live()
        if street.opening is Opening.BRING_IN and self._bring_in_seat is not None:
            if self._bring_in_seat not in self._pos or self.folded[self._pos[self._bring_in_seat]]:
                raise IllegalAction(Reason.BAD_SETUP, f"bring-in seat {self._bring_in_seat} is not in the hand")
            return self._pos[self._bring_in_seat]
        if street.opening is Opening.BRING_IN:
            highest = self.spec.bring_in_highest or self.variant.structure in (
                Structure.POT_LIMIT,
                Structure.NO_LIMIT,
                Structure.HALF_POT_LIMIT,
            )
            return max(live, key=lambda j: bring_in_key(self._up_list(j)[-1], highest))
        return max(live, key=lambda j: (showing_value(self._up_list(j)), -j))

    def _up_list(self, i: int) -> list[Card]:
        return [c for c, u in zip(self.hole[i], self.up[i], strict=True) if u]

    def _start_betting(self) -> None:
        k = self.street_index
        n = self.n
        if k > 0:
            self.bets = [0] * n
            if self._betting_closed:
                self._close_round()
                return
        st = self.stakes
        bets = self.bets
        max_bet = self._max_bet = max(bets)
        if k == 0 and self._big_blind_price > max_bet:
            # rules/000: a short all-in big blind still costs the full blind to call, and the
            # minimum raise counts from it
            max_bet = self._max_bet = self._big_blind_price
        self._acted_at = [None] * n
        self._aggressor = None
        self._raise_count = 0
        structure = self.variant.structure
        street = self.spec.streets[k]
        if k == 0 and max_bet > 0 and structure in _LIMITS and st.blind_counts_as_bet:
            self._raise_count = 1
        self._fl_size = st.big_bet if street.big_bet else st.small_bet
        self._full_raise = self._fl_size if structure is Structure.FIXED_LIMIT else st.min_bet
        self._double_allowed = False
        if (
            k == 1
            and structure is Structure.FIXED_LIMIT
            and self.spec.is_stud_like
            and self.options.stud_double_on_open_pair
        ):
            # rules/003: an open pair on 4th street allows the double (big) bet
            for j in self._live():
                ups = self._up_list(j)
                if len({c.rank for c in ups}) < len(ups):
                    self._double_allowed = True
        pending = self._bring_in_pending = street.opening is Opening.BRING_IN and st.bring_in > 0
        self._completed = not (pending and structure in _LIMITS)
        opener = self._opener()
        stacks, folded = self.stacks, self.folded
        first = second = 0
        for j in range(n):
            if not folded[j]:
                t = stacks[j] + bets[j]
                if t > first:
                    first, second = t, first
                elif t > second:
                    second = t
        # a player who already covers every opponent has nothing to decide (pokerkit agrees)
        queue = []
        for d in range(n):
            j = (opener + d) % n
            if not folded[j] and stacks[j] > 0 and second > bets[j]:
                queue.append(j)
        self._queue = queue
        if not queue:
            self._close_round()
            return
        self.actor = queue[0]

    # ------------------------------------------------------------------ internals: betting
    def _can_raise(self, i: int) -> bool:
        stack = self.stacks[i]
        to_call = self._max_bet - self.bets[i]
        if stack <= to_call:
            return False
        st = self.stakes
        structure = self.variant.structure
        if structure is Structure.FIXED_LIMIT and st.max_bets is not None and self._raise_count >= st.max_bets:
            return False
        if structure is Structure.SPREAD_LIMIT and self._max_bet >= self._spread_limit()[1]:
            return False  # the round is capped at 3 x the limit
        acted = self._acted_at[i]
        if acted and self._max_bet - acted < self._full_raise:
            return False  # a short all-in did not reopen the betting (a check does not count)
        # somebody must be able to answer the raise
        for j in range(self.n):
            if j != i and not self.folded[j] and self.stacks[j] + self.bets[j] > self._max_bet:
                return True
        return False

    def _raise_bounds(self, i: int) -> tuple[int, int]:
        """(min_to, max_to) of a bet/raise/complete, all-in capped."""
        st = self.stakes
        structure = self.variant.structure
        allin = self.stacks[i] + self.bets[i]
        mb = self._max_bet
        if self._bring_in_pending or not self._completed:
            if structure in _LIMITS:
                lo = hi = st.small_bet
            else:
                # big-bet Stud/Soko: instead of the bring-in, bet at least the small bet
                lo = max(st.small_bet, st.bring_in + 1)
                hi = max(lo, self._pot_max(i) if structure is not Structure.NO_LIMIT else allin)
        elif structure is Structure.FIXED_LIMIT:
            size = self._fl_size
            if self._double_allowed and size < self.stakes.big_bet:
                # rules/003: open pair on 4th street: bet/raise the small or the double bet
                # (rules/000's reading, a setting: the big bet only)
                low = self.stakes.big_bet if self.options.stud_open_pair_big_bet_mandatory else size
                return min(mb + low, allin), min(mb + self.stakes.big_bet, allin)
            lo = hi = mb + size
        elif structure is Structure.SPREAD_LIMIT:
            limit, cap = self._spread_limit()
            lo = mb + max(self._full_raise, st.big_blind)
            hi = min(mb + limit, cap)
            lo = min(lo, hi)
        else:
            lo = mb + self._full_raise if mb > 0 else st.min_bet
            hi = allin if structure is Structure.NO_LIMIT else self._pot_max(i)
            hi = max(hi, lo)
        chip = st.chip
        if chip > 1:  # whole chips (an all-in excepted): round the minimum up, the maximum down
            lo = -(-lo // chip) * chip
            if hi < allin:
                hi = max(lo, hi // chip * chip)
        return min(lo, allin), min(hi, allin)

    def _spread_limit(self) -> tuple[int, int]:
        """Spread limit: (this round's maximum bet, the round's cap = 3 x that maximum)."""
        st = self.stakes
        maxima = st.spread_maxima or (st.big_blind or st.small_bet,)
        limit = maxima[min(self.street_index, len(maxima) - 1)]
        return limit, st.spread_cap_multiple * limit

    def _pot_max(self, i: int) -> int:
        to_call = self._max_bet - self.bets[i]
        pot = sum(self.committed) + to_call
        if self.variant.structure is Structure.HALF_POT_LIMIT:
            pot //= 2
        return self._max_bet + pot

    def _raise_to(self, i: int, kind: ActionKind, amount: int | None) -> Event:
        if amount is None:
            raise IllegalAction(Reason.AMOUNT_REQUIRED, f"{kind.value} needs a to-amount")
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise IllegalAction(Reason.AMOUNT_REQUIRED, f"amount must be an integer, got {amount!r}")
        cache = self._la_cache
        cached = cache is not None and cache[0] == len(self.events) and cache[1] == i
        if not cached and not self._bring_in_pending and not self._can_raise(i):
            st = self.stakes
            if (
                self.variant.structure is Structure.FIXED_LIMIT
                and st.max_bets is not None
                and self._raise_count >= st.max_bets
            ):
                raise IllegalAction(Reason.CAPPED, f"the betting is capped at {st.max_bets} bets")
            acted = self._acted_at[i]
            if acted and self._max_bet - acted < self._full_raise:
                raise IllegalAction(
                    Reason.RAISE_NOT_REOPENED, "a short all-in raise did not reopen the betting: call or fold"
                )
            raise IllegalAction(Reason.NOT_LEGAL_NOW, f"{kind.value} is not possible now")
        limits = self.variant.structure in _LIMITS
        if self._bring_in_pending:
            expected = _COMPLETE if limits else _BET
        elif not self._completed and limits:
            expected = _COMPLETE
        else:
            expected = _BET if self._max_bet == 0 else _RAISE
        if kind is not expected:
            if expected is _COMPLETE:
                message = f"{kind.value}: the bring-in must be completed first"
            elif kind is _COMPLETE:
                message = "complete: nothing to complete"
            else:
                message = f"{kind.value} is not possible now ({expected.value})"
            raise IllegalAction(Reason.NOT_LEGAL_NOW, message)
        lo, hi = (cache[2], cache[3]) if cached else self._raise_bounds(i)  # type: ignore[index]
        allin = self.stacks[i] + self.bets[i]
        structure = self.variant.structure
        if structure is Structure.FIXED_LIMIT and amount != lo and amount != hi:
            raise IllegalAction(
                Reason.WRONG_LIMIT_AMOUNT,
                f"fixed limit: the only legal amount is {lo}" if lo == hi else f"fixed limit: {lo} or {hi}",
            )
        if amount < lo:
            raise IllegalAction(Reason.AMOUNT_BELOW_MINIMUM, f"{kind.value} to {amount}: minimum is {lo}")
        if amount > hi:
            raise IllegalAction(Reason.AMOUNT_ABOVE_MAXIMUM, f"{kind.value} to {amount}: maximum is {hi}")
        if amount > allin:
            raise IllegalAction(Reason.AMOUNT_ABOVE_MAXIMUM, f"{kind.value} to {amount}: stack allows {allin}")
        chip = self.stakes.chip
        if amount % chip and amount != allin:
            raise IllegalAction(
                Reason.NOT_WHOLE_CHIPS,
                f"{kind.value} to {amount}: bets are in whole chips of {chip} (rules/003: the {chip} chip)",
            )
        return self._put(i, kind, amount, True)

    def _passive(self, i: int, kind: ActionKind, to: int) -> Event:
        """Check or call (to ``to``); advance the turn. The hot path of :meth:`_put`."""
        bets = self.bets
        added = to - bets[i]
        stacks = self.stacks
        if added:
            stacks[i] -= added
            bets[i] = to
            self.committed[i] += added
        event = ActionTaken(self.seats[i], kind, to, added, stacks[i] == 0)
        self.events.append(event)
        self._acted_at[i] = self._max_bet
        queue = self._queue
        del queue[0]
        if queue:
            self.actor = queue[0]
        else:
            self.actor = None
            self._close_round()
        return event

    def _put(self, i: int, kind: ActionKind, to: int, aggressive: bool) -> Event:
        """Move chips so that seat ``i``'s bet becomes ``to``; advance the turn."""
        added = to - self.bets[i]
        self.stacks[i] -= added
        self.bets[i] = to
        self.committed[i] += added
        event = ActionTaken(self.seats[i], kind, to, added, self.stacks[i] == 0)
        self._emit(event)
        queue = self._queue
        queue.pop(0)
        if kind is _BRING_IN:
            self._bring_in_pending = False
            self._max_bet = max(self._max_bet, to)
            self._acted_at[i] = self._max_bet
        elif aggressive and to > self._max_bet:
            increase = to - self._max_bet
            structure = self.variant.structure
            full = False
            if kind is _COMPLETE:
                self._completed = True
                self._bring_in_pending = False
                self._raise_count = 1
                full = True
            else:
                self._raise_count += 1
                if structure is Structure.FIXED_LIMIT:
                    if self._double_allowed and increase > self._fl_size:
                        self._fl_size = self.stakes.big_bet  # the double bet was made
                        self._full_raise = self._fl_size
                    full = increase >= self._full_raise
                elif increase >= self._full_raise:
                    self._full_raise = increase
                    full = True
            if full:
                acted = self._acted_at
                for j in range(self.n):
                    acted[j] = None
            self._max_bet = to
            self._aggressor = i
            self._acted_at[i] = to
            n = self.n
            queue.clear()
            for d in range(1, n):
                j = (i + d) % n
                if not self.folded[j] and self.stacks[j] > 0:
                    queue.append(j)
        else:
            self._acted_at[i] = self._max_bet
        if queue:
            self.actor = queue[0]
        else:
            self.actor = None
            self._close_round()
        return event

    def _fold(self, i: int) -> Event:
        self.folded[i] = True
        self.fold_order.append(i)
        event = ActionTaken(self.seats[i], _FOLD, self.bets[i], 0, False)
        self._emit(event)
        self.source.muck(self.hole[i])
        self._queue.pop(0)
        self._live_count -= 1
        if self._live_count == 1:
            self._queue.clear()
            self.actor = None
            self._return_uncalled()
            self._award_uncontested(self.folded.index(False))
            return event
        if self._queue:
            self.actor = self._queue[0]
        else:
            self.actor = None
            self._close_round()
        return event

    def _return_uncalled(self) -> None:
        bets = self.bets
        top = max(bets)
        if top <= 0:
            return
        holders = [j for j in range(self.n) if bets[j] == top]
        if len(holders) != 1:
            return
        j = holders[0]
        second = max(b for k, b in enumerate(bets) if k != j)
        excess = top - second
        if excess > 0:
            bets[j] -= excess
            self.stacks[j] += excess
            self.committed[j] -= excess
            self._emit(BetReturned(self.seats[j], excess))

    def _close_round(self) -> None:
        """End of a betting round: return an uncalled bet, then deal on or show down."""
        self.actor = None
        self._return_uncalled()
        if self.street_index == len(self.spec.streets) - 1:
            self._last_aggressor = self._aggressor
        with_chips = sum(1 for j in range(self.n) if not self.folded[j] and self.stacks[j] > 0)
        if with_chips <= 1:
            self._betting_closed = True
        self._next_street()

    # ------------------------------------------------------------------ internals: showdown
    def _award_uncontested(self, winner: int) -> None:
        self._settle()

    def _showdown(self) -> None:
        self._settle()

    def _settle(self) -> None:
        """Take the rake, settle the pots (:func:`.showdown.settle`) and end the hand."""
        self.actor = None
        rake = 0
        if self._rake is not None:
            total = sum(self.committed)
            rake = max(0, min(int(self._rake(self, total)), total))
        settlement = settle(
            Contest(
                self.variant.game,
                self.spec.hi_lo,
                self.spec.is_stud_like,
                tuple(self.seats),
                tuple(tuple(h) for h in self.hole),
                tuple(tuple(u) for u in self.up),
                tuple(self.board),
                tuple(self.folded),
                tuple(self.committed),
                tuple(self.dead),
                tuple(self.fold_order),
                tuple(self.stacks),
                self._last_aggressor,
                rake,
                self.options,
                self.stakes.chip,
                frozenset(self._mucking),
            )
        )
        self._apply(settlement)
        self._finish()

    def _apply(self, s: Settlement) -> None:
        self.pots_awarded = list(s.pots)
        self.rake_taken = s.rake
        self.showdown_order = [self.seats[i] for i in s.order]
        for j, won in enumerate(s.winnings):
            self.winnings[j] += won
        self.events.extend(s.events)

    def _finish(self) -> None:
        self.actor = None
        self.is_over = True
        for j in range(self.n):
            self.stacks[j] += self.winnings[j]
        if self._set_aside:  # artificial all-ins: the chips set aside come back
            for j, kept in self._set_aside.items():
                self.stacks[j] += kept
            self._set_aside = {}
        self._emit(HandEnded(tuple((self.seats[j], self.stacks[j] - self.starting_stacks[j]) for j in range(self.n))))
