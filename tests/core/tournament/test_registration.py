"""Registration, unregistration, late registration and the start (rules/000 'Tournament Rules')."""

import random

import pytest

from cardroom.core.engine.simulation import shuffled_deck
from cardroom.core.tournament import Status, Tournament, TournamentError
from cardroom.core.tournament.cancellation import CancellationPolicy, Payment
from cardroom.core.tournament.events import Cancelled, PlayerSeated, RegistrationClosed, Started, TableOpened
from tests.core.tournament.helpers import config, of_type, play_hand, started


def test_seats_are_first_come_first_served_up_to_the_maximum() -> None:
    """rules/000: 'Tournament seats are available on a first come first serve basis.'"""
    t = Tournament(config(max_entrants=3), random.Random(1))
    for p in ("a", "b", "c"):
        t.register(p, 0.0)
    assert not t.can_register("d", 0.0)
    with pytest.raises(TournamentError, match="full"):
        t.register("d", 0.0)
    assert [e.number for e in t.entrants.values()] == [1, 2, 3]


def test_below_the_minimum_the_tournament_is_cancelled_and_everything_refunded() -> None:
    """rules/000: 'Tournament registration must meet minimum requirements for that event or the
    tournament will be cancelled. In the event of a tournament cancellation due to an insufficient
    number of entrants all buy-ins and entry fees will be returned to player's accounts.'"""
    t = Tournament(config(min_entrants=5), random.Random(1))
    t.register("a", 0.0, paid_with=(Payment("cash", 500), Payment("gold_chips", 600)))
    t.register("b", 0.0)
    t.tick(3600.0)
    assert t.status is Status.CANCELLED
    payout = t.cancellation
    assert payout is not None and payout.policy is CancellationPolicy.BEFORE_START
    assert payout.refunds["a"] == (Payment("cash", 500), Payment("gold_chips", 600))
    assert payout.total_to("b") == 1100
    (event,) = of_type(t, Cancelled)
    assert dict(event.payouts) == {"a": 1100, "b": 1100}


def test_unregistration_closes_ten_minutes_before_the_start() -> None:
    """rules/000: 'In most tournaments a player can unregister until ten minutes prior to the
    start of the event.'"""
    t = Tournament(config(), random.Random(1))
    t.register("a", 0.0)
    t.register("b", 0.0)
    assert t.can_unregister("a", 3000.0)  # exactly ten minutes before: still allowed
    back = t.unregister("a", 3000.0)
    assert (back.buy_in, back.fee) == (1000, 100)
    assert t.collected == 1000 and t.fees == 100  # only b's entry is left
    with pytest.raises(TournamentError, match="deadline"):
        t.unregister("b", 3000.5)


def test_a_seat_won_in_a_satellite_cannot_be_unregistered() -> None:
    """rules/000: 'Players who have won their seats through a satellite cannot unregister'."""
    t = Tournament(config(), random.Random(1))
    t.register("sat", 0.0, via_satellite=True)
    with pytest.raises(TournamentError, match="satellite"):
        t.unregister("sat", 0.0)


def test_random_seating_and_the_button_at_seat_1() -> None:
    """rules/000: 'All players are seated randomly at the beginning of all tournaments. The
    tournament starts with the "dealer button" positioned at seat 1 (Hold'em & Omaha).'"""
    draws = []
    for seed in (1, 2):
        t = started(25, seed=seed)
        opened = of_type(t, TableOpened)
        assert len(opened) == 3 and sorted(len(o.seats) for o in opened) == [8, 8, 9]
        draws.append([o.seats for o in opened])
        rng = random.Random(0)
        for tid in list(t.tables):
            t.deal(tid, shuffled_deck(rng), 3600.0)
            plan = t.tables[tid].plan
            assert plan is not None and plan.button == 1
    assert draws[0] != draws[1]


def test_a_sit_and_go_starts_when_the_preset_number_is_registered() -> None:
    """rules/000 'Sit & Go': 'They start when the needed number of registered players is reached.'"""
    t = Tournament(
        config(start_at=None, max_entrants=10, min_entrants=10, late_registration_seconds=0.0), random.Random(1)
    )
    for i in range(9):
        t.register(f"p{i}", float(i))
    assert t.status is Status.REGISTRATION
    t.register("p9", 42.0)
    assert t.status is Status.RUNNING and t.started_at == 42.0
    assert of_type(t, Started)[0].tables == 1


def test_late_registration_gets_a_full_stack_and_a_free_seat_for_ten_minutes() -> None:
    """rules/000: 'Late registration is usually available for 10 minutes after the tournament
    start'; issue 11: 'late entrants get a full stack and a random free seat'."""
    t = started(15)
    t.register("late", 3600.0 + 300)
    e = t.entrants["late"]
    assert e.late and e.table is not None and e.seat is not None
    assert t.chips("late") == 1500
    (seated,) = of_type(t, PlayerSeated)
    assert (seated.table, seated.seat) == (e.table, e.seat)
    assert t.collected == 16 * 1000
    assert not t.can_register("later", 3600.0 + 600)
    t.tick(3600.0 + 600)
    assert [r.reason for r in of_type(t, RegistrationClosed)] == ["time"]


def test_late_registration_closes_once_the_first_player_is_eliminated() -> None:
    """rules/000: 'Registration will terminate if all tables allocated at the time of seating
    are full, or once the first player is eliminated.'"""
    t = started(3)
    rng = random.Random(3)
    while not any(e.status.value == "eliminated" for e in t.entrants.values()):
        play_hand(t, next(iter(t.tables)), 3600.0, rng, all_in=True)
    assert [r.reason for r in of_type(t, RegistrationClosed)] == ["first player out"]
    assert not t.can_register("late", 3601.0)


def test_late_registration_closes_when_the_tables_allocated_at_seating_are_full() -> None:
    t = started(9, seat_count=10)  # one table, one free seat
    t.register("late", 3601.0)
    assert [r.reason for r in of_type(t, RegistrationClosed)] == ["tables full"]
    with pytest.raises(TournamentError, match="closed"):
        t.register("later", 3602.0)
