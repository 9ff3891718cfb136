"""All-in, side pots, showdown order, hi/lo splits, odd chips, rake (rules/000, 001, 003)."""

from __future__ import annotations

import pytest

from cardroom.core.engine import (
    ActionKind as A,
    BoardDealt,
    HandMucked,
    HandShown,
    Options,
    PotAwarded,
    Stakes,
    StreetStarted,
)

from .helpers import last, make, of_type

NL = Stakes.blinds(1, 2)
ROYAL_BOARD = "Ts Js Qs Ks As"


def test_all_in_player_wins_only_what_he_put_in_with_side_pots():
    """rules/003 'A player that is all-in can only win as much chips from every other player
    that he has put into the pot. ... More then one side pot can be created'."""
    h = make("NT", NL, {1: 50, 2: 100, 3: 200}, button=3,
             holes={1: "Ah Ad", 2: "Kh Kd", 3: "7c 2d"}, board="2s 5h 9c Jd 3s")
    h.act(A.RAISE, 200)
    h.call(); h.call()
    assert h.is_over
    pots = [(e.pot_index, e.amount, e.members, e.winners) for e in of_type(h, PotAwarded)]
    assert pots == [(0, 150, (1, 2, 3), ((1, 150),)), (1, 100, (2, 3), ((2, 100),))]
    assert h.results() == {1: 100, 2: 0, 3: -100}


def test_when_no_more_betting_is_possible_the_remaining_cards_are_dealt_out():
    """rules/000 'When this occurs, any remaining community cards will be dealt face up and a
    showdown will take place.'"""
    h = make("NT", NL, {1: 100, 2: 100}, button=2, holes={1: "Ah Ad", 2: "Kh Kd"}, board="2s 5h 9c Jd 3s")
    h.act(A.RAISE, 100)
    h.call()
    assert h.is_over
    assert [e.name for e in of_type(h, StreetStarted)] == ["preflop", "flop", "turn", "river"]
    assert len(h.board) == 5 and h.flop_dealt
    assert h.results() == {1: 100, 2: -100}


def test_odd_chip_goes_to_the_winner_left_of_the_button():
    """rules/000 'If there is an odd (25 cent) chip it goes to the winning player to the left of
    the dealer.'"""
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3, board=ROYAL_BOARD)
    h.call(); h.fold(); h.check()              # pot 5: 2 + 2 + the small blind's dead 1
    for _ in range(6):
        h.check()
    assert h.is_over
    assert h.results() == {1: -1, 2: 1, 3: 0}  # seat 2 (left of the button) gets 3 of 5


def _three_way_tie(options: Options):
    h = make("NT", NL, {1: 100, 2: 100, 3: 100, 4: 100}, button=4, board=ROYAL_BOARD, options=options)
    h.call(); h.call(); h.call(); h.check()    # pot 8
    h.fold()                                    # seat 1 folds on the flop
    while not h.is_over:
        h.check()
    return h


def test_three_way_split_gives_one_odd_chip_each_from_the_button_left():
    """rules/000 odd chips: 8 chips for three winners = 2 each + 2 odd chips, one each to the
    first two winners left of the button (pokerkit gives both to the first; see
    test_three_way_split_odd_chips_differ_from_pokerkit)."""
    h = _three_way_tie(Options())
    assert h.results() == {1: -2, 2: 1, 3: 1, 4: 0}


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_three_way_split_odd_chips_differ_from_pokerkit():
    """The documented odd-chip difference: pokerkit gives every odd chip of a split to the first
    winner. ``Options(odd_chip_one_each=False)`` reproduces it, and pokerkit itself agrees."""
    import pokerkit as pk

    from cardroom.core import phh
    h = _three_way_tie(Options(odd_chip_one_each=False, open_fold=True))
    assert h.results() == {1: -2, 2: 2, 3: 0, 4: 0}
    text = phh.dumps(h)
    state = last(pk.HandHistory.loads(text))
    assert list(state.stacks) == list(h.stacks)
    assert phh.loads(text).finishing_stacks == [98, 102, 100, 100]
    house = phh.loads(text, Options()).finishing_stacks
    assert house == [98, 101, 101, 100]


def test_merged_pots_odd_chip_differs_from_pokerkit():
    """pokerkit merges pots whose contenders coincide once losing hands are killed, then splits
    the merged pot; we split each pot on its own (rules/000: odd chip to the high hand in each
    pot). Hand found by the differential sweep (F7S/8): main 143 and side 241 split hi/lo."""
    text = "\n".join([
        "variant = 'F7S/8'", "antes = [1, 1, 1, 1, 1, 1, 1]", "bring_in = 2", "small_bet = 10",
        "big_bet = 20", "starting_stacks = [1890, 350, 130, 30, 1530, 460, 640]",
        "actions = ['d dh p1 TdAs6h', 'd dh p2 7c3d4h', 'd dh p3 KsJh6d', 'd dh p4 4c9dTs', "
        "'d dh p5 6sAd2s', 'd dh p6 8d7h8h', 'd dh p7 7dTh4s', 'p5 pb', 'p6 cbr 10', 'p7 cc', "
        "'p1 cbr 20', 'p2 f', 'p3 cbr 30', 'p4 cc', 'p5 cc', 'p6 f', 'p7 f', 'p1 cc', "
        "'d dh p1 Kc', 'd dh p3 2d', 'd dh p4 Ah', 'd dh p5 9h', 'p5 cc', 'p1 cc', 'p3 cc', "
        "'d dh p1 5s', 'd dh p3 2c', 'd dh p4 Kh', 'd dh p5 8s', 'p3 cbr 20', 'p5 cc', "
        "'p1 cbr 40', 'p3 cbr 60', 'p5 cbr 80', 'p1 f', 'p3 cc', 'd dh p3 9s', 'd dh p4 8c', "
        "'d dh p5 5c', 'p3 cbr 19', 'p5 cc', 'd dh p3 3h', 'd dh p4 Qs', 'd dh p5 Tc']",
    ])
    from cardroom.core import phh
    pokerkit_way = phh.loads(text)               # foreign file: pokerkit's conventions
    house = phh.loads(text, Options(open_fold=False, stud_double_on_open_pair=False))
    assert pokerkit_way.finishing_stacks[2:5] == [192, 0, 1592]
    assert house.finishing_stacks[2:5] == [193, 0, 1591]
    awards = [(e.pot_index, e.share, e.amount, e.winners) for e in of_type(house.hand, PotAwarded)]
    assert awards == [(0, "high", 72, ((3, 72),)), (0, "low", 71, ((5, 71),)),
                      (1, "high", 121, ((3, 121),)), (1, "low", 120, ((5, 120),))]


def test_hi_lo_odd_chip_goes_to_the_high_hand():
    """rules/000 'In High/Low games the odd chip goes to the player winning the high hand.'"""
    h = make("FO/8", Stakes.limit(2), {1: 100, 2: 100, 3: 100}, button=3,
             holes={1: "9c 9d Tc Jc", 2: "Kc Ks 9h 9s", 3: "3c 4h Qs Qc"}, board="As 2d 7c Kh Kd")
    h.call(); h.fold(); h.check()               # pot 5
    while not h.is_over:
        h.check()
    shares = [(e.share, e.amount, e.winners) for e in of_type(h, PotAwarded)]
    assert shares == [("high", 3, ((2, 3),)), ("low", 2, ((3, 2),))]
    assert h.results() == {1: -1, 2: 1, 3: 0}


def test_omaha_hi_lo_without_a_qualifying_low_the_high_hand_wins_the_whole_pot():
    """rules/001 'If there is no valid low hand, the high hand wins the entire pot.'"""
    h = make("FO/8", Stakes.limit(2), {1: 100, 2: 100}, button=2,
             holes={1: "Kc Ks 9h 9s", 2: "3c 4h Qs Qc"}, board="Kh Qd 9c 8h 2s")
    h.call(); h.check()
    while not h.is_over:
        h.check()
    assert [(e.share, e.winners) for e in of_type(h, PotAwarded)] == [("all", ((1, 4),))]


def test_omaha_uses_exactly_two_hole_cards():
    """rules/003 'The players must use exactly 2 of their 4 hole cards and 3 community cards':
    four spades in hand + one on board is not a flush."""
    h = make("PO", NL, {1: 100, 2: 100}, button=2,
             holes={1: "As Ks Qs Js", 2: "2c 2d 7h 8h"}, board="3s 2h 9d Tc 4c")
    h.call(); h.check()
    while not h.is_over:
        h.check()
    assert h.results() == {1: -2, 2: 2}       # trip deuces beat ace high


def test_showdown_last_bettor_on_the_river_shows_first():
    """rules/003 'If there was betting on fifth street the player who made the last bet or raise
    must show his hand first. If there was no betting the first remaining player to the left of
    the dealer shows his hand first.'"""
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3)
    h.call(); h.call(); h.check()
    for _ in range(6):
        h.check()
    h.check(); h.act(A.BET, 4)                 # river: seat 2 bets
    h.call(); h.call()
    assert [e.seat for e in h.events if isinstance(e, (HandShown, HandMucked))] == [2, 3, 1]
    h2 = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3)
    h2.call(); h2.call(); h2.check()
    while not h2.is_over:
        h2.check()
    assert [e.seat for e in h2.events if isinstance(e, (HandShown, HandMucked))] == [1, 2, 3]


def test_uncontested_pot_shows_no_cards():
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3)
    h.fold(); h.fold()
    assert of_type(h, HandShown) == [] and not of_type(h, BoardDealt)
    # the big blind's unmatched chip comes back as an uncalled bet; the pot is 1 + 1
    assert [(e.amount, e.winners) for e in of_type(h, PotAwarded)] == [(2, ((2, 2),))]
    assert h.results() == {1: -1, 2: 1, 3: 0}


def test_rake_hook_takes_chips_before_the_pot_is_awarded():
    """rules/003 'a small charge - called rake - is taken from the pot'; no flop, no drop is
    decided by the table layer from ``rake_eligible()``."""
    def rake(hand, total):
        return 1 if hand.rake_eligible() else 0

    h = make("NT", NL, {1: 100, 2: 100}, button=2, rake=rake, board=ROYAL_BOARD)
    h.call(); h.check()
    while not h.is_over:
        h.check()
    awards = of_type(h, PotAwarded)
    assert sum(e.rake for e in awards) == 1 and h.rake_taken == 1
    assert sum(h.results().values()) == -1
    h2 = make("NT", NL, {1: 100, 2: 100}, button=2, rake=rake)
    h2.fold()                                   # no flop: no rake
    assert not h2.rake_eligible() and h2.rake_taken == 0
    assert sum(h2.results().values()) == 0


def test_side_pot_without_a_qualifying_low_goes_to_the_high_hand_unlike_pokerkit():
    """rules/001 'If there is no valid low hand, the high hand wins the entire pot' — per pot:
    the side pot between seats 3 and 6 (no low for either) goes to seat 3's high hand.
    pokerkit 0.7.7 splits that side pot's low half between them because seat 2 has a low in
    the main pot (found by the differential sweep, hand F7S/8 #815)."""
    import pokerkit as pk

    from cardroom.core import phh
    text = "\n".join([
        "variant = 'F7S/8'", "antes = [1, 1, 1, 1, 1, 1]", "bring_in = 2", "small_bet = 10",
        "big_bet = 20", "starting_stacks = [74, 14, 30, 88, 338, 242]",
        "actions = ['d dh p1 2s5d6h', 'd dh p2 7cQd4h', 'd dh p3 Tc3hJc', 'd dh p4 AhJs3c', "
        "'d dh p5 4dKc9c', 'd dh p6 4s2h2c', 'p6 pb', 'p1 cbr 10', 'p2 cbr 13', 'p3 cbr 23', "
        "'p4 cc', 'p5 f', 'p6 cc', 'p1 cc', 'd dh p1 Kd', 'd dh p2 3d', 'd dh p3 Qh', "
        "'d dh p4 Ts', 'd dh p6 8c', 'p1 cbr 10', 'p3 cc', 'p4 cc', 'p6 cc', 'd dh p1 7s', "
        "'d dh p2 8h', 'd dh p3 6s', 'd dh p4 Qc', 'd dh p6 Ks', 'p6 cbr 20', 'p1 f', 'p4 f', "
        "'d dh p2 4c', 'd dh p3 6d', 'd dh p6 6c', 'd dh p2 Ad', 'd dh p3 9s', 'd dh p6 Th', "
        "'p2 sm 7cQd4h3d8h4cAd', 'p3 sm Tc3hJcQh6s6d9s', 'p6 sm 4s2h2c8cKs6cTh']",
    ])
    ours = phh.loads(text)
    awards = [(e.pot_index, e.share, e.amount, e.winners) for e in of_type(ours.hand, PotAwarded)]
    assert awards == [(0, "high", 36, ((3, 36),)), (0, "low", 35, ((2, 35),)),
                      (1, "all", 64, ((3, 64),)), (2, "all", 12, ((6, 12),))]
    assert ours.finishing_stacks == [40, 35, 100, 54, 337, 220]
    state = last(pk.HandHistory.loads(text))
    assert list(state.stacks) == [40, 35, 84, 54, 337, 236]


def test_losing_hands_after_the_first_may_muck_and_their_cards_stay_in_the_history():
    """rules/000 'Players who elect to fold do not have to show their cards ... However the hole
    cards of all players who stay in to the showdown are included in the hand history'."""
    from cardroom.core import phh
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3,
             holes={1: "7c 2d", 2: "Ah Ad", 3: "8s 3h"}, board="Ks Qd 9c 5h 4s")
    h.call(); h.call(); h.check()
    while not h.is_over:
        h.check()
    shown = [(type(e).__name__, e.seat) for e in h.events if isinstance(e, (HandShown, HandMucked))]
    assert shown == [("HandShown", 1), ("HandShown", 2), ("HandMucked", 3)]
    mucked = of_type(h, HandMucked)[0]
    assert [str(c) for c in mucked.cards] == ["8s", "3h"]
    assert "p3 sm" in tomllib_actions(phh.dumps(h))
    h2 = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3, options=Options(muck_losers=False),
              holes={1: "7c 2d", 2: "Ah Ad", 3: "8s 3h"}, board="Ks Qd 9c 5h 4s")
    h2.call(); h2.call(); h2.check()
    while not h2.is_over:
        h2.check()
    assert [e.seat for e in of_type(h2, HandShown)] == [1, 2, 3]
    assert h.results() == h2.results() == {1: -2, 2: 4, 3: -2}


def tomllib_actions(text: str) -> list[str]:
    import tomllib
    return tomllib.loads(text)["actions"]


def test_side_pot_abandoned_by_open_folds_goes_to_its_last_player_not_the_all_in_player():
    """rules/003 'A player that is all-in can only win as much chips from every other player
    that he has put into the pot': if both side-pot players fold (no bet to face), the all-in
    player still wins only the main pot; the side pot goes to the last player who was in it."""
    h = make("NT", NL, {1: 100, 2: 100, 3: 10}, button=3)
    h.act(A.RAISE, 10)                # seat 3 all-in for 10
    h.act(A.RAISE, 50)                # seat 1
    h.call()                          # seat 2: side pot 80 between seats 1 and 2
    assert h.street_name == "flop"
    h.fold(); h.fold()                # both fold with no bet to face (open fold)
    assert h.is_over
    assert h.results() == {1: -50, 2: 30, 3: 20}
    awards = [(e.amount, e.winners) for e in of_type(h, PotAwarded)]
    assert awards == [(30, ((3, 30),)), (80, ((2, 80),))]


def test_hi_lo_half_is_divided_among_tied_low_hands():
    """issue 4 'each half divided among ties': seats 1 and 3 tie for low with the wheel, seat 2
    wins high with four kings; the 6-chip pot gives 3 to high and the low 3 as 2 + 1 (the odd
    chip of the low half to seat 1, first left of the button)."""
    h = make("FO/8", Stakes.limit(2), {1: 100, 2: 100, 3: 100}, button=3,
             holes={1: "2c 3d Qs Qh", 2: "Kc Ks 9h 9s", 3: "2d 3c Jh Jd"},
             board="Ah 4s 5d Kd Kh")
    h.call(); h.call(); h.check()               # pot 6
    while not h.is_over:
        h.check()
    shares = [(e.share, e.amount, e.winners) for e in of_type(h, PotAwarded)]
    assert shares == [("high", 3, ((2, 3),)), ("low", 3, ((1, 2), (3, 1)))]
    assert h.results() == {1: 0, 2: 1, 3: -1}


def test_rake_may_be_a_fixed_amount():
    h = make("NT", NL, {1: 100, 2: 100}, button=2, rake=1, board=ROYAL_BOARD)
    h.call(); h.check()
    while not h.is_over:
        h.check()
    assert h.rake_taken == 1 and sum(h.results().values()) == -1


def test_last_player_standing_with_chips_takes_the_dead_money():
    """Everyone folds to a player who put nothing in: he still wins the dead money."""
    from cardroom.core.engine import ForcedBet, ForcedKind
    forced = [ForcedBet(1, ForcedKind.DEAD_BLIND, 1)]
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3, forced=forced)
    while not h.is_over:
        if h.actor_seat == 3:
            h.check()
        else:
            h.fold()
    assert h.results()[3] == 1 and h.results()[1] == -1
