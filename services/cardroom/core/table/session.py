"""A simulated cash-game session at one table, for checking the table rules.

Random players (from a pool of ``players`` ids) join — posting the big blind or waiting for
it —, sit out, come back, leave, bust and rebuy, lose their connection and let their clock
run out; actions are random legal actions. Randomness comes only from the ``random.Random``
passed in, so a seed replays the same session. Chip conservation is asserted after every
hand: chips bought in = chips at the table + rake + chips taken away.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind, Stakes, Structure, Variant, default_stakes
from cardroom.core.table.buyin import BuyInLimits, buy_in_limits
from cardroom.core.table.settings import GameKind, TableSettings, is_limit
from cardroom.core.table.table import HandRecord, Table


@dataclass(slots=True)
class SessionStats:
    """Totals of a session (chips)."""

    hands: int = 0
    idle_rounds: int = 0
    bought_in: int = 0
    cashed_out: int = 0
    rake: int = 0
    timeouts: int = 0
    artificial_all_ins: int = 0


HandCallback = Callable[[HandRecord, bool], None]
"""Called after every hand with its record and whether hands were skipped before it."""


def session_stakes(variant: Variant) -> Stakes:
    """Stakes in cents for a session: $1/$2 blinds, $2/$4 limit, Stud $2/$4 with antes."""
    return default_stakes(variant, 200)


def session_buy_in(variant: Variant, stakes: Stakes) -> BuyInLimits:
    """Buy-in limits of the table (rules/002 multiples of the lower stake)."""
    if variant.spec.uses_button:
        low = stakes.small_bet if is_limit(variant.structure) else stakes.small_blind
        high = stakes.big_bet if is_limit(variant.structure) else stakes.big_blind
    else:
        low, high = stakes.small_bet, stakes.big_bet
    return buy_in_limits(variant.structure, low, high)


class CashSession:
    """Drives one :class:`Table` with random commands and actions."""

    def __init__(
        self,
        variant: Variant,
        players: int,
        rng: random.Random,
        *,
        seat_count: int | None = None,
        name: str = "session",
    ) -> None:
        self.variant = variant
        self.rng = rng
        self.stakes = session_stakes(variant)
        self.limits = session_buy_in(variant, self.stakes)
        seats = seat_count or min(variant.spec.max_players, max(2, players))
        settings = TableSettings(
            variant.game,
            variant.structure,
            GameKind.CASH,
            seat_count=seats,
            sit_out_after_timeouts=0,
            sit_out_after_missed_orbit=False,
            stand_up_after_seconds=0.0,
        )  # (random away-and-back drives it)
        self.table = Table(settings, self.stakes, buy_in=self.limits, name=name)
        self.pool = [f"player{i + 1}" for i in range(max(2, players))]
        self.stats = SessionStats()
        self.now = 0.0

    # ------------------------------------------------------------------ helpers
    def _buy_in_amount(self) -> int:
        lo = self.limits.minimum
        hi = self.limits.maximum if self.limits.maximum is not None else 5 * lo
        return self.rng.randint(lo, hi)

    def _check_conservation(self) -> None:
        on_table = self.table.chips_on_table()
        assert self.stats.bought_in == on_table + self.stats.rake + self.stats.cashed_out, (
            "chips not conserved",
            self.stats,
            on_table,
        )

    def _between_hands(self) -> None:
        rng, table = self.rng, self.table
        seating = table.seating
        # busted players rebuy or leave
        for seat, state in list(seating.seats.items()):
            if state.stack == 0:
                if rng.random() < 0.6:
                    amount = self._buy_in_amount()
                    table.add_chips(seat, amount)
                    self.stats.bought_in += amount
                else:
                    self.stats.cashed_out += table.stand_up(seat) or 0
        for _ in range(rng.randint(0, 2)):
            r = rng.random()
            empty = [s for s in range(1, table.settings.seat_count + 1) if s not in seating.seats]
            seated = sorted(seating.seats)
            here = {st.player for st in seating.seats.values()}
            away = [p for p in self.pool if p not in here]
            if r < 0.35 and empty and away:
                amount = self._buy_in_amount()
                table.sit_down(rng.choice(empty), rng.choice(away), amount, post_now=rng.random() < 0.5)
                self.stats.bought_in += amount
            elif r < 0.45 and seated:
                self.stats.cashed_out += table.stand_up(rng.choice(seated)) or 0
            elif r < 0.6 and seated:
                table.sit_out(rng.choice(seated))
            elif r < 0.85 and seated:
                table.come_back(rng.choice(seated), post_now=rng.random() < 0.5)
            elif r < 0.9 and seated:
                seat = rng.choice(seated)
                top = self.limits.maximum
                room = (top - seating.seats[seat].stack) if top is not None else self.limits.minimum
                if room > 0:
                    amount = rng.randint(1, room)
                    table.add_chips(seat, amount)
                    self.stats.bought_in += amount
            elif seated:
                table.set_connected(rng.choice(seated), rng.random() < 0.5)

    def _random_action(self) -> None:
        rng, table = self.rng, self.table
        hand = table.hand
        assert hand is not None
        la = table.legal_actions()
        assert la is not None
        self.now += rng.uniform(0.5, 5.0)
        r = rng.random()
        if r < 0.03:
            # the clock runs out
            assert table.clock is not None
            self.now = table.clock.deadline
            before = table.clock.bank_seconds
            done = table.tick(self.now)
            self.stats.timeouts += len(done)
            if before == 0 and table.clock is not None and table.clock.bank_seconds:
                self.now = table.clock.deadline
                self.stats.timeouts += len(table.tick(self.now))
            return
        if r < 0.04:
            # a player in the hand (maybe not the one on turn) gets up or sits out
            seat = rng.choice(table.plan.dealt if table.plan else [la.seat])
            if seat in table.seating.seats:
                if rng.random() < 0.5:
                    left = table.stand_up(seat)
                    assert left is None
                else:
                    table.sit_out(seat)
            return
        kinds = sorted(la.kinds, key=lambda k: k.value)
        kind = rng.choice(kinds)
        if kind is ActionKind.DRAW:
            cards = hand.hole_cards(la.seat)
            k = rng.randint(0, la.max_discards)
            table.act(la.seat, kind, discards=rng.sample(list(cards), k), now=self.now)
        elif kind in (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE):
            if self.variant.structure is Structure.FIXED_LIMIT:
                amount = rng.choice((la.min_to, la.max_to))  # one amount, or the double bet
            else:
                amount = rng.randint(la.min_to, la.max_to)
            table.act(la.seat, kind, amount, now=self.now)
        else:
            table.act(la.seat, kind, now=self.now)

    # ------------------------------------------------------------------ the session
    def run(self, hands: int, on_hand: HandCallback | None = None, *, max_idle: int = 10_000) -> SessionStats:
        """Play until ``hands`` hands were dealt; ``on_hand(record, gap)`` after each."""
        gap = True
        idle = 0
        while self.stats.hands < hands:
            self._between_hands()
            deck = list(DECK)
            self.rng.shuffle(deck)
            self.now += 10.0
            plan = self.table.start_hand(deck, self.now)
            if plan is None:
                gap = True
                idle += 1
                self.stats.idle_rounds += 1
                if idle > max_idle:
                    raise RuntimeError("the session cannot deal a hand")
                continue
            idle = 0
            while self.table.in_hand:
                self._random_action()
                if self.table.in_hand:
                    self._check_conservation()
            record = self.table.finish(self.now)
            self.stats.hands += 1
            self.stats.rake += record.rake
            self.stats.cashed_out += sum(chips for _, _, chips in record.departed)
            self.stats.artificial_all_ins += len(record.artificial_all_in)
            self._check_conservation()
            if on_hand is not None:
                on_hand(record, gap)
            gap = False
        return self.stats


def run_session(code: str, players: int, hands: int, seed: int, on_hand: HandCallback | None = None) -> SessionStats:
    """Play a cash-game session of ``hands`` hands of variant ``code`` (e.g. ``FT``)."""
    variant = Variant.parse(code)
    return CashSession(variant, players, random.Random(seed)).run(hands, on_hand)


__all__ = ["CashSession", "HandCallback", "SessionStats", "run_session", "session_buy_in", "session_stakes"]
