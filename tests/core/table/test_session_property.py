"""Property test over simulated cash-game sessions (issue 5 acceptance; rules/000, 002, 003).

Random players join (posting or waiting for the big blind), sit out, come back, leave, bust
and rebuy, disconnect and time out; over >= 10,000 hands in all games with blinds and
antes the table must keep: exactly one small and one big blind per hand (or the dead-button
variant with no small blind), the button never moves backwards, no player gets the big
blind twice in a row while others skip it, the rake never exceeds the table's cap, and
chips are conserved (stacks + rake; asserted inside the session after every hand).
"""

import random

import pytest

from cardroom.core.engine import ForcedBetPosted, ForcedKind, Structure, Variant
from cardroom.core.table.session import CashSession
from cardroom.core.table.table import HandRecord

SESSIONS = [
    ("NT", 2500),
    ("FT", 2000),
    ("PO", 1000),
    ("FO/8", 1000),
    ("F5CD", 1000),
    ("F2L3D", 1000),
    ("F7S", 800),
    ("FSK", 700),
]


def _d(a: int, b: int, n: int) -> int:
    return (b - a) % n


class Checker:
    def __init__(self, session: CashSession) -> None:
        self.session = session
        self.n = session.table.settings.seat_count
        self.prev: HandRecord | None = None
        self.hands = 0

    def __call__(self, record: HandRecord, gap: bool) -> None:
        self.hands += 1
        plan, hand = record.plan, record.hand
        table = self.session.table
        players = len(plan.dealt)
        # rake never exceeds the cap, nor the pot
        assert 0 <= record.rake <= table.rake_policy.cap(players)
        assert record.rake <= hand.pot_total
        # stacks: what each player had plus what he won, and chips conserved in the hand
        assert sum(record.finishing_stacks.values()) + record.rake == sum(record.starting_stacks.values())
        if plan.button is None:  # Stud, Soko: antes only
            assert all(f.kind is ForcedKind.ANTE for f in plan.forced)
            self.prev = record
            return
        posted = [e for e in hand.events if isinstance(e, ForcedBetPosted)]
        sbs = [f for f in plan.forced if f.kind is ForcedKind.SMALL_BLIND]
        bbs = [f for f in plan.forced if f.kind is ForcedKind.BIG_BLIND]
        # one small blind (or none: dead small blind) and one positional big blind
        assert len(sbs) <= 1 and bbs and bbs[0].seat == plan.big_blind
        assert (plan.small_blind is None) == (not sbs)
        assert all(f.seat in plan.posted_to_enter for f in bbs[1:])
        assert all(f.seat in plan.posted_to_enter for f in plan.forced if f.kind is ForcedKind.DEAD_BLIND)
        assert {e.seat for e in posted} <= set(plan.dealt)
        if plan.heads_up:
            assert plan.button == plan.small_blind and not plan.posted_to_enter
        prev = self.prev
        if prev is not None and not gap and not plan.fresh_start:
            pp = prev.plan
            assert pp.big_blind is not None and pp.button is not None and plan.big_blind is not None
            # no player posts the big blind twice in a row ...
            assert plan.big_blind != pp.big_blind
            # ... while a player dealt in skips it: the big blind goes to the next player
            assert not [
                s for s in plan.dealt if 0 < _d(pp.big_blind, s, self.n) < _d(pp.big_blind, plan.big_blind, self.n)
            ]
            # the button never moves backwards: forward, at most to the last big blind
            if not plan.heads_up and not pp.heads_up:
                assert 0 < _d(pp.button, plan.button, self.n) <= _d(pp.button, pp.big_blind, self.n)
        self.prev = record


@pytest.mark.slow
def test_ten_thousand_session_hands_keep_blinds_button_rake_and_chips() -> None:
    """rules/000 'Dead Button', 'Heads-up'; rules/003 'New player', 'Missed blinds', 'RAKE';
    rules/002 table stakes — over 10,000 simulated hands."""
    total = 0
    for k, (code, hands) in enumerate(SESSIONS):
        session = CashSession(Variant.parse(code), 10, random.Random(1000 + k))
        checker = Checker(session)
        stats = session.run(hands, checker)
        assert stats.hands == hands == checker.hands
        assert stats.rake > 0 and stats.timeouts > 0
        total += stats.hands
    assert total >= 10_000


def test_a_short_session_is_reproducible_from_its_seed() -> None:
    """Same seed, same session (no hidden randomness in the rules core)."""

    def stats(seed: int) -> tuple[int, int, int]:
        s = CashSession(Variant.parse("NT"), 6, random.Random(seed)).run(60)
        return s.bought_in, s.cashed_out, s.rake

    assert stats(7) == stats(7)


@pytest.mark.parametrize("code", ["NT", "FT", "PO", "FO/8", "F5CD", "F2L3D", "F7S", "FSK"])
def test_session_hands_replay_from_their_phh(code: str) -> None:
    """Issue 5: each session hand is written as PHH that replays to the same finishing stacks,
    hands with an artificial all-in included (rules/002, 003: recorded as
    ``_artificial_all_in``; his kept chips are in the finishing stacks).

    Raked hands are compared too (replay takes ``_rake`` again); every artificial all-in in
    these sessions happens in a raked hand. Not compared (a known limit): hands with a dead
    small blind plus a player posting to enter (PHH has no way to say which big blind has
    the option).
    """
    from cardroom.core import phh

    compared = []
    artificial = []

    def check(record: HandRecord, gap: bool) -> None:
        plan = record.plan
        if plan.button is not None and plan.small_blind is None and plan.posted_to_enter:
            return
        text = record.phh()
        replay = phh.loads(text)
        assert replay.finishing_stacks == list(record.hand.stacks), text
        assert dict(zip(replay.hand.seats, replay.finishing_stacks, strict=True)) == record.finishing_stacks, text
        assert replay.hand.artificial_all_in_seats == record.hand.artificial_all_in_seats, text
        compared.append(record.number)
        if record.artificial_all_in:
            artificial.append(record.number)

    CashSession(Variant.parse(code), 9, random.Random(21)).run(200, check)
    assert len(compared) >= 150
    if Variant.parse(code).structure in (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT):
        assert artificial, "no artificial all-in hand was compared"
