"""Leaving, timing out, sitting out and adding chips as a person meets them (issue 13)."""

from __future__ import annotations

import pytest

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind, Game, Stakes, Structure
from cardroom.core.table.buyin import BuyInLimits
from cardroom.core.table.clock import TimeoutDecision
from cardroom.core.table.settings import GameKind, TableSettings
from cardroom.core.table.table import Table, TableError

A = ActionKind
DECK_ORDER = list(DECK)


def holdem(kind: GameKind = GameKind.CASH, seats: tuple[int, ...] = (1, 2, 3), **kw: object) -> Table:
    settings = TableSettings(Game.HOLDEM, Structure.NO_LIMIT, kind, seat_count=6, **kw)  # type: ignore[arg-type]
    t = Table(settings, Stakes.blinds(100, 200), buy_in=BuyInLimits(1000, 20000))
    for s in seats:
        t.sit_down(s, f"p{s}", 10000)
    return t


def play_out(t: Table, now: float) -> None:
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.CHECK if A.CHECK in la.kinds else A.CALL, now=now)


def test_leaving_on_ones_turn_gives_the_next_player_his_full_clock() -> None:
    """rules/003 'Time limits' gives each player the action clock for his decision; the leaver's
    fold must start the next player's clock at the time of the leave, not time him out."""
    t = holdem()
    plan = t.start_hand(DECK_ORDER, now=1000.0)
    assert plan is not None
    la = t.legal_actions()
    assert la is not None
    leaver = la.seat
    assert t.stand_up(leaver, now=1010.0) is None
    nxt = t.legal_actions()
    assert nxt is not None and nxt.seat != leaver
    assert t.clock is not None and t.clock.seat == nxt.seat and t.clock.deadline == 1010.0 + 30.0
    assert t.tick(1011.0) == []  # nobody times out at once
    assert t.tick(1039.0) == []
    assert [s for s, _ in t.tick(1040.0)] == [nxt.seat]


def test_leaving_with_a_free_check_checks_instead_of_folding() -> None:
    """rules/000 'Disconnects': '... his or her hand will be folded unless the check option is
    available to them, at which point the player will auto check' — leaving is treated alike."""
    t = holdem()
    t.start_hand(DECK_ORDER, now=0.0)
    t.act(1, A.CALL, now=1.0)
    t.act(2, A.CALL, now=2.0)
    la = t.legal_actions()
    assert la is not None and la.seat == 3 and A.CHECK in la.kinds
    assert t.stand_up(3, now=3.0) is None
    assert t.hand is not None and not t.hand.folded[t.hand.position(3)]
    assert t.hand.street_index == 1  # the flop: seat 3 checked
    play_out(t, 4.0)
    record = t.finish()
    assert [d[0] for d in record.departed] == [3] and 3 not in t.seating.seats


def test_consecutive_timeouts_sit_a_cash_player_out_after_the_hand() -> None:
    t = holdem(sit_out_after_timeouts=2)
    t.set_connected(3, False)
    now = 0.0
    for _ in range(3):
        t.start_hand(DECK_ORDER, now=now)
        while t.in_hand:
            la = t.legal_actions()
            assert la is not None
            if la.seat == 3:
                now += 31.0
                assert t.tick(now)
            else:
                t.act(la.seat, A.CHECK if A.CHECK in la.kinds else A.CALL, now=now)
        t.finish(now=now)
        if t.is_sitting_out(3):
            break
    assert t.is_sitting_out(3) and 3 in t.auto_sat_out
    assert t.sat_out_since(3) == now


def test_a_player_who_acts_himself_starts_counting_again() -> None:
    t = holdem(sit_out_after_timeouts=2)
    t.start_hand(DECK_ORDER, now=0.0)
    la = t.legal_actions()
    assert la is not None
    seat = la.seat
    assert t.tick(31.0) == [(seat, TimeoutDecision.FOLD)]
    assert t.timeouts[seat] == 1
    play_out(t, 32.0)
    t.finish(now=32.0)
    t.start_hand(DECK_ORDER, now=40.0)
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.CHECK if A.CHECK in la.kinds else A.CALL, now=41.0)
    assert seat not in t.timeouts
    t.finish(now=41.0)
    assert not t.is_sitting_out(seat)


def test_a_disconnected_player_is_sat_out_after_a_missed_orbit() -> None:
    """A player away for an orbit (as many hands as players dealt in) stops being dealt in."""
    t = holdem(sit_out_after_timeouts=0)
    t.set_connected(2, False)
    hands = 0
    while not t.is_sitting_out(2):
        t.start_hand(DECK_ORDER, now=float(hands))
        play_out(t, float(hands))  # (everyone checks or calls: he never times out here)
        t.finish(now=float(hands))
        hands += 1
        assert hands <= 3
    assert hands == 3 and t.auto_sat_out == [2]


def test_in_tournaments_a_player_who_times_out_stays_dealt_in() -> None:
    """rules/000 'Disconnects': 'he or she will be dealt cards, and a blind and/or antes will be
    posted automatically'."""
    t = holdem(kind=GameKind.TOURNAMENT, sit_out_after_timeouts=1, stand_up_after_seconds=1.0)
    t.set_connected(1, False)
    now = 0.0
    for _ in range(4):
        plan = t.start_hand(DECK_ORDER, now=now)
        assert plan is not None and 1 in plan.dealt
        while t.in_hand:
            la = t.legal_actions()
            assert la is not None
            if la.seat == 1:
                now += 31.0
                assert t.tick(now)
            else:
                t.act(la.seat, A.CHECK if A.CHECK in la.kinds else A.CALL, now=now)
        t.finish(now=now)
        assert not t.is_sitting_out(1) and t.auto_sat_out == []
    assert t.overdue_sit_outs(now + 10_000.0) == []


def test_a_player_sat_out_for_m_minutes_is_due_to_stand_up() -> None:
    t = holdem(stand_up_after_seconds=600.0)
    t.sit_out(2, now=50.0)
    assert t.sat_out_since(2) == 50.0 and t.stand_up_deadline() == 650.0
    assert t.overdue_sit_outs(649.0) == []
    assert t.overdue_sit_outs(650.0) == [2]
    t.come_back(2)
    assert t.overdue_sit_outs(10_000.0) == [] and t.stand_up_deadline() is None


def test_chips_asked_for_during_the_hand_are_queued_for_the_next() -> None:
    """rules/002 'All-Ins': 'You can increase your "table stake" at any time in between hands.
    NEVER DURING A HAND.' — so a request during the hand waits for its end."""
    t = holdem()
    t.start_hand(DECK_ORDER, now=0.0)
    with pytest.raises(TableError, match="between hands"):
        t.verify_add_chips(1, 500)
    assert t.can_queue_chips(1, 500)
    t.queue_chips(1, 500)
    with pytest.raises(TableError, match="above"):
        t.queue_chips(1, 20000)  # the maximum counts what is already queued
    with pytest.raises(TableError, match="between hands"):
        t.take_queued_chips()
    assert t.queued_chips(1) == 500
    play_out(t, 1.0)
    t.finish()
    assert t.take_queued_chips() == {1: 500} and t.queued_chips(1) == 0
    before = t.stack(1)
    t.add_chips(1, 500)
    assert t.stack(1) == before + 500
    with pytest.raises(TableError, match="not in the hand"):
        t.verify_queue_chips(2, 100)


def test_a_new_player_waits_for_the_big_blind_or_posts_it_now() -> None:
    """rules/002 'Button and Blinds': 'When a player first sits at an active table, they may post
    the equivalent of the big blind ... all players may sit out and wait to become the actual big
    blind before playing'."""
    for post in (False, True):
        t = holdem(seats=(1, 3, 5))
        t.start_hand(DECK_ORDER, now=0.0)  # button 1, small blind 3, big blind 5
        play_out(t, 0.0)
        t.finish()
        t.sit_down(2, "p2", 5000)  # just after the next big blind (seat 1)
        assert t.waiting_for_big_blind(2) and t.can_post_now(2)
        if post:
            t.post_now(2)
            assert not t.waiting_for_big_blind(2)
        plan = t.start_hand(DECK_ORDER, now=1.0)
        assert plan is not None and (2 in plan.dealt) is post
        assert t.waiting_for_big_blind(2) is not post
    with pytest.raises(TableError):
        t.post_now(1)
