"""Seats, the button and the blinds across hands — a pure state machine.

Seats are numbered 1..seat_count; clockwise is increasing seat number, wrapping around.
Commands (sit down, stand up, sit out, come back, stack changes) are applied between hands;
:meth:`Seating.next_hand` then decides, for the next hand, who is dealt in, the button seat
and the forced bets, and records what each absent player missed.

Rules (rules/000 'The Button', 'Blinds', tournaments 'Dead Button' and 'Heads-up';
rules/002 'Button and Blinds'; rules/003 'New player', 'Missed blinds'):

* **Dead button** (``ButtonRule.DEAD_BUTTON``, the default and the casino rule): the big blind
  moves each hand to the next player clockwise who is ready to play; the small blind is the
  seat that had the big blind last hand, and the button the seat that had the small blind.
  If the player there left or sits out, there is no small blind that hand (it is *dead*) or
  the button stands on a seat whose player is not dealt in (a *dead button*). Nobody gets
  the big blind twice in a row and nobody skips it by moving the button around him.
* ``ButtonRule.MOVING_BUTTON``: the button moves to the next player dealt in and the blinds
  are the next two (simpler; the blinds can skip a player).
* **Heads-up**: with two players dealt in, the button posts the small blind (and acts first
  before the flop — the engine's rule); the big blind still moves to the other player.
* **New player**: must come in on the big blind, or post the equivalent of the big blind
  (live) to play at once from another position.
* **Missed blinds**: a player who sits out (or has no chips) when the big blind passes his
  seat has missed the big blind; when the small blind passes his seat or is dead on it, the
  small blind (so a player away for a whole round has missed both).
  Missed the big blind: post it (live) or come in on the big blind. Missed both: post the big
  blind live plus the small blind *dead* (into the pot), or come in on the big blind.
  Missed only the small blind (not covered by the rules; the casino rule): post the small
  blind dead, or come in on the big blind. Sitting out clears nothing: a player cannot
  dodge the blinds by sitting out, and what he owes is remembered if he leaves the seat and
  sits down again at this table (for the last :data:`REMEMBERED_KEPT` players who left owing:
  a table's memory, in every snapshot, does not grow with every player who ever passed).
* A player who owes blinds and sits between the button and the big blind (where he would
  get a free button or small-blind position) must wait until the button passes him; in a
  heads-up hand a player who owes waits for the big blind.
* When fewer than two players would be dealt in although two or more are ready, the game
  starts afresh: debts are forgiven and every ready player is dealt in (a new game, as
  when a table opens). The first hand at a table puts the button on the first ready seat
  from seat 1 (rules/000 'dealer button positioned at seat 1').
* Stud and Soko (antes, no blinds): every ready player is dealt in and posts the ante.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from cardroom.core.engine.events import ForcedBet, ForcedKind
from cardroom.core.table.settings import ButtonRule

#: The players who left owing blinds whose debts a table remembers, the most recent: the one who left
#: longest ago is forgotten first. A day of a busy table's departures, where every one kept before made
#: its snapshots (two a hand) grow by some 40 bytes for good.
REMEMBERED_KEPT = 64


@dataclass(slots=True)
class SeatState:
    """One occupied seat between hands.

    ``new``: has not played a hand since sitting down (owes the big blind to enter);
    ``missed_big`` / ``missed_small``: blinds missed while away; ``post_now``: a player who
    owes prefers posting to waiting for the big blind.
    """

    seat: int
    player: str
    stack: int
    sitting_out: bool = False
    new: bool = True
    missed_big: bool = False
    missed_small: bool = False
    post_now: bool = False

    @property
    def ready(self) -> bool:
        """Wants to play and has chips."""
        return not self.sitting_out and self.stack > 0

    @property
    def owes_big(self) -> bool:
        return self.new or self.missed_big

    @property
    def owes(self) -> bool:
        return self.new or self.missed_big or self.missed_small

    def clear_debts(self) -> None:
        self.new = self.missed_big = self.missed_small = False


@dataclass(frozen=True, slots=True)
class HandPlan:
    """Who plays the next hand and what they post.

    ``button``: button seat (None in Stud/Soko); ``small_blind`` / ``big_blind``: the
    seats in those positions (``small_blind`` None = dead small blind); ``dealt``: seats
    dealt in, ascending; ``forced``: forced bets for the engine; ``dead_button``: the button
    seat's player is not dealt in; ``fresh_start``: positions were chosen afresh.
    """

    button: int | None
    small_blind: int | None
    big_blind: int | None
    dealt: tuple[int, ...]
    forced: tuple[ForcedBet, ...]
    dead_button: bool = False
    heads_up: bool = False
    fresh_start: bool = False
    posted_to_enter: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class BeforeDeal:
    """What a deal (:meth:`Seating.next_hand`) changes, as it was before it: the rotation and each seat's
    debts (``seat -> (player, new, missed_big, missed_small, post_now)``). :meth:`Seating.rolled_back`
    undoes the deal with it."""

    last_button: int | None
    last_small_blind_seat: int | None
    last_big_blind: int | None
    last_heads_up: bool
    debts: dict[int, tuple[str, bool, bool, bool, bool]]


@dataclass(slots=True)
class Seating:
    """The seats of one table and the blind rotation (see the module docstring).

    ``small_blind`` / ``big_blind`` / ``ante``: amounts posted; ``blinds``: False for Stud
    and Soko.
    """

    seat_count: int
    small_blind: int = 0
    big_blind: int = 0
    ante: int = 0
    blinds: bool = True
    button_rule: ButtonRule = ButtonRule.DEAD_BUTTON
    seats: dict[int, SeatState] = field(default_factory=dict)
    last_button: int | None = None
    last_small_blind_seat: int | None = None
    last_big_blind: int | None = None
    last_heads_up: bool = False
    remembered: dict[str, tuple[bool, bool]] = field(default_factory=dict)
    """Player id -> (missed big, missed small) of players who left owing blinds, the one who left
    longest ago first; :data:`REMEMBERED_KEPT` at most."""

    # ------------------------------------------------------------------ commands
    def sit_down(self, seat: int, player: str, stack: int, *, post_now: bool = False) -> None:
        """Seat ``player`` with ``stack`` chips; he waits for the big blind unless ``post_now``."""
        if not 1 <= seat <= self.seat_count:
            raise ValueError(f"seat {seat} is not at this table (1..{self.seat_count})")
        if seat in self.seats:
            raise ValueError(f"seat {seat} is taken")
        if any(s.player == player for s in self.seats.values()):
            raise ValueError(f"player {player!r} is already seated")
        if stack <= 0:
            raise ValueError("a player sits down with chips")
        state = SeatState(seat, player, stack, post_now=post_now)
        if player in self.remembered:
            state.missed_big, state.missed_small = self.remembered.pop(player)
        self.seats[seat] = state

    def stand_up(self, seat: int) -> SeatState:
        """Free ``seat``; return its last state (the stack goes back to the account)."""
        state = self._get(seat)
        del self.seats[seat]
        if state.missed_big or state.missed_small:
            self.remembered.pop(state.player, None)  # his latest departure is the most recent
            self.remembered[state.player] = (state.missed_big, state.missed_small)
            while len(self.remembered) > REMEMBERED_KEPT:
                del self.remembered[next(iter(self.remembered))]
        return state

    def sit_out(self, seat: int) -> None:
        """The player stays seated but is not dealt in; he misses the blinds that pass him."""
        self._get(seat).sitting_out = True

    def come_back(self, seat: int, *, post_now: bool = False) -> None:
        """A sitting-out player plays again: posts what he owes, or waits for the big blind."""
        state = self._get(seat)
        state.sitting_out = False
        state.post_now = post_now

    def set_post_now(self, seat: int, post_now: bool) -> None:
        """Choose between posting what is owed and waiting for the big blind."""
        self._get(seat).post_now = post_now

    def set_stack(self, seat: int, stack: int) -> None:
        if stack < 0:
            raise ValueError("a stack is never negative")
        self._get(seat).stack = stack

    def _get(self, seat: int) -> SeatState:
        try:
            return self.seats[seat]
        except KeyError:
            raise ValueError(f"seat {seat} is empty") from None

    # ------------------------------------------------------------------ rolling a deal back
    def before_deal(self) -> BeforeDeal:
        """What the next :meth:`next_hand` will change, as it is now (taken just before the deal)."""
        return BeforeDeal(
            self.last_button,
            self.last_small_blind_seat,
            self.last_big_blind,
            self.last_heads_up,
            {s: (st.player, st.new, st.missed_big, st.missed_small, st.post_now) for s, st in self.seats.items()},
        )

    def rolled_back(self, before: BeforeDeal, dealt: tuple[int, ...]) -> Seating:
        """A copy of the seating with the deal of ``before`` undone and every seat change made since kept
        (rules/000 'Crash': the hands in progress are "restored by rolling back these hands"): the button
        and the blinds where they were, each player's debts as they were before the deal (a blind the
        cancelled hand took, or marked missed, is owed or not as before it), the players who sat down,
        left, sat out, came back or added chips since as they are now. ``dealt``: the deal's seats (it
        cleared their ``post_now``; a player not dealt in may have changed his since)."""
        seats: dict[int, SeatState] = {}
        for seat, state in self.seats.items():
            was = before.debts.get(seat)
            if was is None or was[0] != state.player:  # sat down after the deal: as he is
                seats[seat] = replace(state)
                continue
            post_now = was[4] if seat in dealt else state.post_now
            seats[seat] = replace(state, new=was[1], missed_big=was[2], missed_small=was[3], post_now=post_now)
        remembered = dict(self.remembered)
        for seat, was in before.debts.items():
            player = was[0]
            if player in remembered and (seat not in self.seats or self.seats[seat].player != player):
                if was[2] or was[3]:  # left after the deal: what he owed before it
                    remembered[player] = (was[2], was[3])
                else:
                    del remembered[player]
        return replace(
            self,
            seats=seats,
            last_button=before.last_button,
            last_small_blind_seat=before.last_small_blind_seat,
            last_big_blind=before.last_big_blind,
            last_heads_up=before.last_heads_up,
            remembered=remembered,
        )

    # ------------------------------------------------------------------ geometry
    def _after(self, seat: int) -> Iterator[int]:
        """Seat numbers clockwise after ``seat``, ``seat`` itself last."""
        for k in range(1, self.seat_count + 1):
            yield (seat - 1 + k) % self.seat_count + 1

    def _before(self, seat: int) -> Iterator[int]:
        """Seat numbers counterclockwise before ``seat``, ``seat`` itself last."""
        for k in range(1, self.seat_count + 1):
            yield (seat - 1 - k) % self.seat_count + 1

    def distance(self, a: int, b: int) -> int:
        """Clockwise steps from seat ``a`` to seat ``b`` (0..seat_count-1)."""
        return (b - a) % self.seat_count

    def _between(self, a: int, b: int, x: int) -> bool:
        """``x`` strictly inside the clockwise arc from ``a`` to ``b``."""
        return 0 < self.distance(a, x) < self.distance(a, b) if a != b else x != a

    def _ready(self, seat: int) -> bool:
        s = self.seats.get(seat)
        return s is not None and s.ready

    # ------------------------------------------------------------------ planning
    def next_hand(self) -> HandPlan | None:
        """Plan the next hand and record it (missed blinds, debts paid, positions).

        Returns None when fewer than two players are ready.
        """
        ready = [s for s in sorted(self.seats) if self.seats[s].ready]
        if len(ready) < 2:
            return None
        if not self.blinds:
            return self._commit_antes(ready)
        if self.last_big_blind is None:
            return self._fresh(ready)
        if self.button_rule is ButtonRule.MOVING_BUTTON:
            plan = self._moving(ready)
        else:
            plan = self._dead_button(ready)
        return plan if plan is not None else self._fresh(ready)

    def _commit_antes(self, ready: list[int]) -> HandPlan:
        forced = tuple(ForcedBet(s, ForcedKind.ANTE, self.ante) for s in ready if self.ante)
        for s in ready:
            self.seats[s].clear_debts()
        return HandPlan(None, None, None, tuple(ready), forced)

    def _fresh(self, ready: list[int]) -> HandPlan:
        """Start the rotation afresh: every ready player is dealt in, no debts."""
        if self.last_big_blind is None:
            button = ready[0]
            order = [s for s in self._after(button) if s in ready]  # button last
            if len(ready) == 2:
                sb, bb = button, order[0]
            else:
                sb, bb = order[0], order[1]
        else:
            bb = next(s for s in self._after(self.last_big_blind) if s in ready)
            before = [s for s in self._before(bb) if s in ready and s != bb]
            if len(ready) == 2:
                sb = button = before[0]
            else:
                sb, button = before[0], before[1]
        return self._commit(button, sb, bb, tuple(ready), posters=(), fresh=True)

    def _skipped_big(self, bb: int) -> list[int]:
        assert self.last_big_blind is not None
        return [s for s in self.seats if self._between(self.last_big_blind, bb, s) and not self.seats[s].ready]

    def _dead_button(self, ready: list[int]) -> HandPlan | None:
        assert self.last_big_blind is not None
        prev_bb = self.last_big_blind
        bb = next(s for s in self._after(prev_bb) if s in ready)
        if bb == prev_bb:
            return None
        sb_seat = prev_bb
        sb_live = self._ready(sb_seat)
        # the button: the seat that had the small blind, if it lies between the big blind
        # and the small blind seat; otherwise the nearest player before the small blind
        button = self.last_small_blind_seat
        if self.last_heads_up or button is None or button in (bb, sb_seat) or not self._between(bb, sb_seat, button):
            button = next(
                (s for s in self._before(sb_seat) if s not in (bb, sb_seat) and s in ready and not self.seats[s].owes),
                None,
            )
            if button is None or not self._between(bb, sb_seat, button):
                button = next(s for s in self._before(sb_seat))
        dealt = {bb}
        if sb_live:
            dealt.add(sb_seat)
        posters: list[int] = []
        for s in ready:
            if s in dealt:
                continue
            state = self.seats[s]
            in_late = self._between(bb, button, s)
            if not state.owes:
                if in_late or s == button:
                    dealt.add(s)
            elif state.post_now and in_late:
                dealt.add(s)
                posters.append(s)
        if len(dealt) < 2:
            return None
        if len(dealt) == 2:
            if posters:
                dealt -= set(posters)
                posters = []
                if len(dealt) < 2:
                    return None
            other = next(s for s in dealt if s != bb)
            return self._commit(
                other, other, bb, tuple(sorted(dealt)), (), fresh=False, missed_small_seat=None if sb_live else sb_seat
            )
        return self._commit(
            button,
            sb_seat if sb_live else None,
            bb,
            tuple(sorted(dealt)),
            tuple(posters),
            fresh=False,
            sb_seat=sb_seat,
            missed_small_seat=None if sb_live else sb_seat,
        )

    def _moving(self, ready: list[int]) -> HandPlan | None:
        assert self.last_button is not None
        playing = [s for s in ready if not self.seats[s].owes]
        if len(playing) < 2:
            return None
        button = next(s for s in self._after(self.last_button) if s in playing)
        sb = next(s for s in self._after(button) if s in playing)
        bb = next(s for s in self._after(sb) if s in ready)  # a waiting player comes in here
        if bb == button:  # two players: heads-up below
            bb = sb
        posters = tuple(
            s
            for s in ready
            if self.seats[s].owes and self.seats[s].post_now and s not in (bb, button) and self._between(bb, button, s)
        )
        dealt = tuple(sorted(set(playing) | {bb} | set(posters)))
        if len(dealt) == 2:
            # heads-up: the big blind goes to the player who did not have it
            assert self.last_big_blind is not None
            bb = next(s for s in self._after(self.last_big_blind) if s in dealt)
            other = next(s for s in dealt if s != bb)
            return self._commit(other, other, bb, dealt, (), fresh=False)
        return self._commit(button, sb, bb, dealt, posters, fresh=False)

    def _commit(
        self,
        button: int,
        sb: int | None,
        bb: int,
        dealt: tuple[int, ...],
        posters: tuple[int, ...],
        *,
        fresh: bool,
        sb_seat: int | None = None,
        missed_small_seat: int | None = None,
    ) -> HandPlan:
        """Record the hand's positions and debts; build the forced bets.

        Forced-bet order: the positional blinds first (the engine takes the first big blind
        as the one with the option), then the posts of players entering (live big blind,
        dead small blind).
        """
        heads_up = len(dealt) == 2
        if sb_seat is None:
            sb_seat = sb
        if not fresh and self.last_big_blind is not None:
            for s in self._skipped_big(bb):
                self.seats[s].missed_big = True
            last_sb = self.last_small_blind_seat
            passed = [
                x
                for x in self.seats
                if last_sb is not None
                and sb_seat is not None
                and last_sb != sb_seat
                and self._between(last_sb, sb_seat, x)
            ]
            if missed_small_seat is not None:
                passed.append(missed_small_seat)
            for x in passed:
                if x in self.seats and x not in dealt and not self.seats[x].ready:
                    self.seats[x].missed_small = True
        forced: list[ForcedBet] = []
        if self.ante:
            forced += [ForcedBet(s, ForcedKind.ANTE, self.ante) for s in dealt]
        if sb is not None and self.small_blind:
            forced.append(ForcedBet(sb, ForcedKind.SMALL_BLIND, self.small_blind))
        forced.append(ForcedBet(bb, ForcedKind.BIG_BLIND, self.big_blind))
        for s in posters:
            state = self.seats[s]
            if state.owes_big:
                forced.append(ForcedBet(s, ForcedKind.BIG_BLIND, self.big_blind))
            if state.missed_small and self.small_blind:
                forced.append(ForcedBet(s, ForcedKind.DEAD_BLIND, self.small_blind))
        for s in dealt:
            self.seats[s].clear_debts()
            self.seats[s].post_now = False
        self.last_button = button
        self.last_small_blind_seat = sb_seat
        self.last_big_blind = bb
        self.last_heads_up = heads_up
        return HandPlan(
            button=button,
            small_blind=sb,
            big_blind=bb,
            dealt=dealt,
            forced=tuple(forced),
            dead_button=button not in dealt,
            heads_up=heads_up,
            fresh_start=fresh,
            posted_to_enter=posters,
        )
