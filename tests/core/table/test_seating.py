"""Seats, button and blinds across hands (rules/000, rules/002, rules/003)."""

import random

import pytest

from cardroom.core.engine.events import ForcedKind
from cardroom.core.table.seating import REMEMBERED_KEPT, HandPlan, Seating
from cardroom.core.table.settings import ButtonRule

SB, BB, DEAD, ANTE = ForcedKind.SMALL_BLIND, ForcedKind.BIG_BLIND, ForcedKind.DEAD_BLIND, ForcedKind.ANTE


def table(*seats: int, n: int = 6, **kw: object) -> Seating:
    s = Seating(n, small_blind=1, big_blind=2, **kw)  # type: ignore[arg-type]
    for seat in seats:
        s.sit_down(seat, f"p{seat}", 100)
    return s


def posts(plan: HandPlan) -> list[tuple[int, ForcedKind]]:
    return [(f.seat, f.kind) for f in plan.forced]


def test_the_first_hand_starts_with_the_button_at_seat_1() -> None:
    """rules/000: 'The tournament starts with the "dealer button" positioned at seat 1'."""
    plan = table(1, 3, 5).next_hand()
    assert plan is not None
    assert (plan.button, plan.small_blind, plan.big_blind) == (1, 3, 5)
    assert posts(plan) == [(3, SB), (5, BB)]


def test_after_each_hand_the_button_moves_clockwise_to_the_next_active_player() -> None:
    """rules/000 'The Button', rules/002 'Button and Blinds'."""
    s = table(1, 3, 5)
    buttons = [s.next_hand().button for _ in range(4)]  # type: ignore[union-attr]
    assert buttons == [1, 3, 5, 1]


def test_the_player_to_the_left_of_the_button_posts_the_small_blind_the_next_the_big_blind() -> None:
    """rules/003 'Blinds': SB left of the dealer, BB the next player in turn."""
    s = table(2, 3, 4, 6)
    for _ in range(6):
        p = s.next_hand()
        assert p is not None
        order = [x for x in range(1, 7)] * 2
        after = [x for x in order[order.index(p.button) + 1 :] if x in p.dealt]
        assert (p.small_blind, p.big_blind) == (after[0], after[1])


def test_when_two_players_remain_the_button_posts_the_small_blind() -> None:
    """rules/000 'Heads-up': 'the player with the "dealer button" posts the small blind'."""
    s = table(2, 5)
    seen = []
    for _ in range(4):
        p = s.next_hand()
        assert p is not None and p.heads_up
        assert p.button == p.small_blind and p.big_blind != p.button
        seen.append(p.big_blind)
    assert seen in ([5, 2, 5, 2], [2, 5, 2, 5])  # the big blind alternates


def test_going_heads_up_nobody_gets_the_big_blind_twice_in_a_row() -> None:
    """rules/000 'Dead Button' when a player is eliminated, then heads-up."""
    s = table(1, 2, 3)
    p = s.next_hand()
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (1, 2, 3)
    s.stand_up(1)
    p2 = s.next_hand()
    assert p2 is not None and p2.heads_up and p2.big_blind == 2 and p2.button == 3


def test_dead_button_when_the_small_blind_position_was_vacated() -> None:
    """rules/000 'Dead Button': blinds re-positioned so that all post their blinds."""
    s = table(1, 2, 3, 4)
    p = s.next_hand()
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (1, 2, 3)
    s.stand_up(2)  # the player who will be the button leaves
    p = s.next_hand()
    assert p is not None
    # the big blind moves on to seat 4, seat 3 posts the small blind, the button is dead on seat 2
    assert (p.button, p.small_blind, p.big_blind) == (2, 3, 4)
    assert p.dead_button and p.dealt == (1, 3, 4)


def test_dead_small_blind_when_the_big_blind_left() -> None:
    """rules/000 'Dead Button': the big blind leaves; next hand has no small blind, and the
    player after him still gets the big blind (nobody skips it)."""
    s = table(1, 2, 3, 4)
    s.next_hand()  # button 1, SB 2, BB 3
    s.stand_up(3)
    p = s.next_hand()
    assert p is not None
    assert (p.button, p.small_blind, p.big_blind) == (2, None, 4)
    assert posts(p) == [(4, BB)]


def test_a_new_player_may_post_the_big_blind_to_play_immediately() -> None:
    """rules/003 'New player': 'post the equivalent of the big blind to start playing'."""
    s = table(1, 2, 3, 4)
    s.next_hand()  # button 1, SB 2, BB 3
    s.sit_down(6, "newbie", 100, post_now=True)
    p = s.next_hand()  # button 2, SB 3, BB 4: seat 6 is in late position
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (2, 3, 4)
    assert 6 in p.dealt and posts(p) == [(3, SB), (4, BB), (6, BB)]
    assert p.posted_to_enter == (6,)
    p = s.next_hand()  # he paid: plays on without posting again
    assert p is not None and 6 in p.dealt and p.big_blind == 6


def test_a_new_player_must_come_in_on_the_big_blind_if_he_does_not_post() -> None:
    """rules/003 'New player': 'must either come in on the big blind ...'."""
    s = table(1, 2, 3, 4)
    s.next_hand()  # button 1, SB 2, BB 3
    s.sit_down(5, "newbie", 100)  # waits
    p = s.next_hand()  # button 2, SB 3, BB 4
    assert p is not None and 5 not in p.dealt
    p = s.next_hand()  # button 3, SB 4, BB 5: his big blind
    assert p is not None and p.big_blind == 5 and 5 in p.dealt
    assert posts(p) == [(4, SB), (5, BB)]


def test_a_new_player_seated_where_the_big_blind_comes_next_just_takes_it() -> None:
    """rules/003 'New player': coming in on the big blind when it reaches him at once."""
    s = table(1, 2, 3)
    s.next_hand()  # button 1, SB 2, BB 3
    s.sit_down(5, "newbie", 100, post_now=True)
    p = s.next_hand()
    assert p is not None and p.big_blind == 5 and posts(p) == [(3, SB), (5, BB)]


def test_a_new_player_between_the_button_and_the_big_blind_waits_for_the_button_to_pass() -> None:
    """rules/002 'stops players ... entering games in late position': no free button or small blind."""
    s = table(1, 3, 5)
    s.next_hand()  # button 1, SB 3, BB 5
    s.sit_down(4, "newbie", 100, post_now=True)  # between next SB (5) and next button (3)?
    p = s.next_hand()  # button 3, SB 5, BB 1: seat 4 sits between button and SB
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (3, 5, 1)
    assert 4 not in p.dealt
    p = s.next_hand()  # button 5, SB 1, BB 3: seat 4 is in late position now
    assert p is not None and 4 in p.dealt and (4, BB) in posts(p)


def test_a_player_that_has_missed_a_big_blind_must_post_it_live_or_wait() -> None:
    """rules/003 'Missed blinds': 'can only come in on the big blind or will have to post this amount (live bet)'."""
    s = table(1, 2, 3, 4, 5)
    s.next_hand()  # button 1, SB 2, BB 3
    s.sit_out(4)
    p = s.next_hand()  # BB passes seat 4
    assert p is not None and p.big_blind == 5 and 4 not in p.dealt
    assert s.seats[4].missed_big and not s.seats[4].missed_small
    s.come_back(4, post_now=True)
    p = s.next_hand()  # button 3, SB 5, BB 1: seat 4 between button and SB waits
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (3, 5, 1)
    assert 4 not in p.dealt
    p = s.next_hand()  # button 5, SB 1, BB 2: seat 4 posts the big blind live
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (5, 1, 2)
    assert posts(p) == [(1, SB), (2, BB), (4, BB)]
    assert not s.seats[4].owes


def test_players_that_missed_both_blinds_post_the_small_blind_dead() -> None:
    """rules/003: 'must also post the equivalent of the small blind ... considered as "dead"'."""
    s = table(1, 2, 3, 4, 5)
    s.next_hand()  # button 1, SB 2, BB 3
    s.sit_out(4)
    s.next_hand()  # button 2, SB 3, BB 5 (passes 4: missed big)
    s.next_hand()  # button 3, SB 5, BB 1 (SB passes 4: missed small)
    assert s.seats[4].missed_big and s.seats[4].missed_small
    s.come_back(4, post_now=True)
    p = s.next_hand()  # button 5, SB 1, BB 2: seat 4 is in late position
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (5, 1, 2)
    assert posts(p) == [(1, SB), (2, BB), (4, BB), (4, DEAD)]


def test_or_wait_for_his_turn_to_post_big_blind() -> None:
    """rules/003 'Missed blinds': waiting for the big blind clears what he owes."""
    s = table(1, 2, 3, 4, 5)
    s.next_hand()
    s.sit_out(4)
    s.next_hand()
    s.next_hand()
    s.come_back(4)  # waits
    plans = [s.next_hand() for _ in range(5)]
    first_in = next(p for p in plans if p is not None and 4 in p.dealt)
    assert first_in.big_blind == 4
    assert [f for f in first_in.forced if f.seat == 4] == [f for f in first_in.forced if f.seat == 4 and f.kind is BB]


def test_a_player_cannot_dodge_the_blinds_by_sitting_out_or_leaving() -> None:
    """rules/000 'This prevents players from gaining an advantage by avoiding the blinds'."""
    s = table(1, 2, 3, 4, 5)
    s.next_hand()
    s.sit_out(4)
    s.next_hand()
    s.next_hand()
    assert s.seats[4].owes
    s.stand_up(4)
    s.sit_down(6, "p4", 100, post_now=True)  # same player, another seat
    assert s.seats[6].missed_big and s.seats[6].missed_small


def test_the_debts_of_the_last_players_who_left_owing_are_remembered_not_of_everyone_who_ever_did() -> None:
    """rules/000 (above) and the memory it costs: a table remembers the debts of the last
    REMEMBERED_KEPT players who left owing blinds (each is in every snapshot), the longest gone forgotten
    first; a player who leaves owing again is the most recent."""
    s = table(1, 2, 3)
    s.sit_down(4, "first", 100)
    s.sit_out(4)
    s.next_hand()
    s.next_hand()
    s.next_hand()
    assert s.seats[4].owes
    first_debt = (s.seats[4].missed_big, s.seats[4].missed_small)
    assert any(first_debt)
    s.stand_up(4)
    for n in range(REMEMBERED_KEPT - 1):  # others leave owing (their debts set as the seating records them)
        s.sit_down(5, f"gone-{n}", 100)
        s.seats[5].missed_big = True
        s.stand_up(5)
    assert len(s.remembered) == REMEMBERED_KEPT and next(iter(s.remembered)) == "first"
    s.sit_down(5, "gone-0", 100)  # back, and gone again owing: now the most recent
    assert s.seats[5].missed_big
    s.stand_up(5)
    assert list(s.remembered)[-1] == "gone-0" and len(s.remembered) == REMEMBERED_KEPT
    s.sit_down(5, "one-more", 100)
    s.seats[5].missed_big = True
    s.stand_up(5)
    assert len(s.remembered) == REMEMBERED_KEPT and "first" not in s.remembered  # the longest gone
    s.sit_down(4, "first", 100)
    assert not (s.seats[4].missed_big or s.seats[4].missed_small)  # forgotten: a new player's terms only
    assert "gone-1" in s.remembered and "one-more" in s.remembered


def test_stud_deals_every_ready_player_with_an_ante() -> None:
    """rules/003 7-Card Stud 'Ante': 'Before any cards are dealt the antes must be posted'."""
    s = Seating(8, ante=5, blinds=False)
    for seat in (2, 4, 7):
        s.sit_down(seat, f"p{seat}", 100)
    s.sit_out(4)
    p = s.next_hand()
    assert p is not None and p.button is None and p.dealt == (2, 7)
    assert posts(p) == [(2, ANTE), (7, ANTE)]


def test_no_hand_with_fewer_than_two_ready_players() -> None:
    s = table(1, 2)
    s.sit_out(2)
    assert s.next_hand() is None
    s.set_stack(2, 0)
    s.come_back(2)
    assert s.next_hand() is None


def _d(a: int, b: int, n: int) -> int:
    return (b - a) % n


@pytest.mark.parametrize("seed", range(8))
def test_random_sessions_keep_the_blind_rules(seed: int) -> None:
    """rules/000 'Dead Button' and 'Heads-up', rules/003 'Missed blinds', over random sit
    downs, sit outs, returns and departures: one small and one big blind per hand (or a dead
    small blind), the big blind moves to the next player dealt in, the button never moves
    backwards."""
    rng = random.Random(seed)
    n = 9
    s = Seating(n, small_blind=1, big_blind=2)
    prev: HandPlan | None = None
    for _ in range(400):
        for _ in range(rng.randint(0, 2)):
            seat = rng.randint(1, n)
            if seat not in s.seats:
                pid = f"p{rng.randint(0, 15)}"
                if all(x.player != pid for x in s.seats.values()):
                    s.sit_down(seat, pid, 100, post_now=rng.random() < 0.5)
            else:
                r = rng.random()
                if r < 0.15:
                    s.stand_up(seat)
                elif r < 0.5:
                    s.sit_out(seat)
                else:
                    s.come_back(seat, post_now=rng.random() < 0.5)
        owing_nothing = {x for x, st in s.seats.items() if st.ready and not st.owes}
        p = s.next_hand()
        if p is None:
            prev = None
            continue
        assert owing_nothing <= set(p.dealt)  # nobody who owes nothing sits out a hand
        assert [f.kind for f in p.forced].count(SB) <= 1
        assert p.forced[0 if p.small_blind is None else 1].seat == p.big_blind
        assert p.big_blind in p.dealt and len(p.dealt) >= 2
        if p.heads_up:
            assert p.button == p.small_blind
        if prev is not None and not p.fresh_start:
            assert p.big_blind != prev.big_blind
            skipped = [x for x in p.dealt if 0 < _d(prev.big_blind, x, n) < _d(prev.big_blind, p.big_blind, n)]
            assert not skipped
            if not p.heads_up and not prev.heads_up:
                assert 0 < _d(prev.button, p.button, n) <= _d(prev.button, prev.big_blind, n)
        prev = p


def test_moving_button_rule_setting() -> None:
    """ButtonRule.MOVING_BUTTON: the button moves to the next player dealt in."""
    s = table(1, 3, 5, button_rule=ButtonRule.MOVING_BUTTON)
    s.next_hand()
    s.stand_up(3)
    p = s.next_hand()
    assert p is not None and p.heads_up and p.button == 5 and p.big_blind == 1


def test_a_player_who_missed_only_the_small_blind_posts_it_dead() -> None:
    """rules/003 'Missed blinds' (missing only the small blind: the casino rule, documented)."""
    s = table(1, 2, 3, 4)
    s.next_hand()  # button 1, SB 2, BB 3
    s.sit_out(3)  # the big blind leaves for a hand
    p = s.next_hand()  # SB dead on seat 3, BB 4, button 2
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (2, None, 4)
    assert s.seats[3].missed_small and not s.seats[3].missed_big
    s.come_back(3, post_now=True)
    p = s.next_hand()  # button 3 (dead for him: he owes), SB 4, BB 1
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (3, 4, 1)
    assert 3 not in p.dealt and p.dead_button
    p = s.next_hand()  # button 4, SB 1, BB 2: seat 3 in late position posts dead
    assert p is not None and (p.button, p.small_blind, p.big_blind) == (4, 1, 2)
    assert posts(p) == [(1, SB), (2, BB), (3, DEAD)]
