"""Issue 12 'Rules fidelity': one scenario per deviation, each citing the rule it checks."""

from __future__ import annotations

import pokerkit as pk
import pytest

from cardroom.core import phh
from cardroom.core.engine import (
    ActionKind as A,
    ForcedBet,
    ForcedKind,
    IllegalAction,
    Options,
    PotAwarded,
    Reason,
    SmallBlindRule,
    Stakes,
    Structure,
    Variant,
    default_stakes,
    halve,
    split,
)

from .helpers import kinds, last, make, of_type

NL = Stakes.blinds(1, 2)
ROYAL_BOARD = "Ts Js Qs Ks As"
SB, BB, DEAD, ANTE, DEAD_ANTE = (ForcedKind.SMALL_BLIND, ForcedKind.BIG_BLIND, ForcedKind.DEAD_BLIND,
                                 ForcedKind.ANTE, ForcedKind.DEAD_ANTE)


def _check_down(h) -> None:
    while not h.is_over:
        la = h.legal_actions()
        if A.BRING_IN in la.kinds:
            h.act(A.BRING_IN)
        else:
            h.check_or_call()


# ---------------------------------------------------------------- 1 dead money
def _returning_player(fold: bool):
    """NL 1/2; seat 4 comes back posting the live big blind and the dead small blind."""
    forced = [ForcedBet(2, SB, 1), ForcedBet(3, BB, 2), ForcedBet(4, BB, 2), ForcedBet(4, DEAD, 1)]
    h = make("NT", NL, {1: 100, 2: 100, 3: 100, 4: 100}, button=1, forced=forced,
             holes={1: "9s 8s", 2: "2c 3d", 3: "2d 3c", 4: "2h 3h"}, board="Ts Js Qs 4d 5c")
    assert h.actor_seat == 4
    h.fold() if fold else h.check()
    _check_down(h)
    return h


def test_dead_small_blind_goes_to_the_pot_and_is_not_paid_back_to_its_poster():
    """rules/003 'Missed blinds': "Players that have missed both the small and the big blind must
    also post the equivalent of the small blind ... This money is considered as "dead" and goes
    directly to the pot." Everyone checks down and seat 1 wins: seat 4 is out his 2 + 1."""
    h = _returning_player(fold=False)
    assert h.results() == {1: 7, 2: -2, 3: -2, 4: -3}
    assert [(p.amount, len(p.members)) for p in h.pots_awarded] == [(9, 4)]


def test_dead_small_blind_of_a_player_who_folds_stays_in_the_pot():
    """rules/003: dead money "goes directly to the pot" — folding does not bring it back."""
    h = _returning_player(fold=True)
    assert h.results() == {1: 7, 2: -2, 3: -2, 4: -3}


def test_dead_money_is_in_the_main_pot_that_every_live_player_contests():
    """rules/003: the dead blind "goes directly to the pot"; a player all-in for the big blind
    contests it (the main pot), later bets make a side pot without him."""
    forced = [ForcedBet(2, SB, 1), ForcedBet(3, BB, 2), ForcedBet(4, BB, 2), ForcedBet(4, DEAD, 1)]
    h = make("NT", NL, {1: 100, 2: 100, 3: 2, 4: 100}, button=1, forced=forced,
             holes={3: "As Ks", 1: "2c 3d", 2: "2d 3c", 4: "2h 4h"}, board="Ah Ad 7c 8d 9h")
    h.check(); h.call(); h.call()          # seat 4 checks, seat 1 calls, seat 2 calls; seat 3 all in
    _check_down(h)
    main = h.pots_awarded[0]
    assert main.amount == 9 and set(main.members) == {0, 1, 2, 3}
    assert h.results()[3] == 7


# ---------------------------------------------------------------- 2 big-blind and button antes
def test_big_blind_ante_is_dead_money_a_losing_all_in_big_blind_ends_with_nothing():
    """Issue 12 / real tournament records (PHH ante_trimming_status = false): a big-blind ante
    is dead money in the main pot; the big blind all in with the ante posted who loses ends
    with 0 (nothing of his ante comes back as a pot of his own)."""
    stakes = Stakes.blinds(1, 2, big_blind_ante=2)
    h = make("NT", stakes, {1: 100, 2: 100, 3: 4}, button=1,
             holes={1: "As Ad", 2: "2c 3d", 3: "Kc Kd"}, board="Ah 7c 8d 9h 2s")
    posted = [(e.seat, e.kind, e.amount) for e in h.events if type(e).__name__ == "ForcedBetPosted"]
    assert (3, DEAD_ANTE, 2) in posted and (3, BB, 2) in posted
    assert h.stack(3) == 0 and h.is_all_in(3)
    h.call(); h.call()                     # seat 1 (button) and seat 2 (small blind) call 2
    _check_down(h)
    assert h.stack(3) == 0
    assert h.results() == {1: 6, 2: -2, 3: -4}


def test_button_ante_is_posted_by_the_button_and_is_dead():
    """Issue 12: the button ante is a forced-bet setting of a table or tournament level."""
    h = make("NT", Stakes.blinds(1, 2, button_ante=3), {1: 100, 2: 100, 3: 100}, button=3)
    assert h.dead == [0, 0, 3] and h.pot_total == 6
    h.fold(); h.fold()                     # the button and the small blind fold: seat 2 wins
    assert h.results() == {1: -1, 2: 4, 3: -3}


@pytest.mark.parametrize("trimming", [False, True])
def test_phh_replay_honours_ante_trimming_status_like_pokerkit(trimming):
    """PHH 'ante_trimming_status': false = antes are dead money in the main pot, true = an ante
    above the second-largest one is given back. Our replay of a foreign big-blind-ante record
    ends with pokerkit's own finishing stacks either way."""
    # trimming: the big blind's ante is given back at once, so he has chips left and acts
    rounds = "'p1 cc', 'p2 cc', 'p3 cc'" if trimming else "'p1 cc', 'p3 cc'"
    preflop = "'p3 cc', 'p1 cc', 'p2 cc'" if trimming else "'p3 cc', 'p1 cc'"
    text = (f"variant = 'NT'\nante_trimming_status = {'true' if trimming else 'false'}\n"
            "antes = [0, 3, 0]\nblinds_or_straddles = [1, 2, 0]\nmin_bet = 2\n"
            "starting_stacks = [100, 5, 100]\n"
            f"actions = ['d dh p1 2c3d', 'd dh p2 KcKd', 'd dh p3 AsAd', {preflop}, "
            f"'d db Ah7c8d', {rounds}, 'd db 9h', {rounds}, 'd db 2s', {rounds}, "
            "'p1 sm 2c3d', 'p2 sm KcKd', 'p3 sm AsAd']\n")
    state = last(pk.HandHistory.loads(text))
    ours = phh.loads(text).finishing_stacks
    assert ours == list(state.stacks)
    if not trimming:
        assert ours[1] == 0                 # the big blind's ante is not handed back


def test_our_phh_of_a_big_blind_ante_hand_is_read_the_same_by_pokerkit():
    h = make("NT", Stakes.blinds(1, 2, big_blind_ante=2), {1: 50, 2: 60, 3: 3}, button=2,
             holes={1: "2c 3d", 2: "As Ad", 3: "Kc Kd"}, board="Ah 7c 8d 9h 2s")
    _check_down(h)
    text = phh.dumps(h)
    assert "ante_trimming_status = false" in text
    state = last(pk.HandHistory.loads(text))
    assert list(state.stacks) == h.stacks and phh.loads(text).finishing_stacks == h.stacks


# ---------------------------------------------------------------- 3 short all-in big blind
def test_short_all_in_big_blind_still_costs_the_full_blind_and_raises_count_from_it():
    """rules/000 Hold'em 'Betting Rounds': "Thus in a $5/$10 No Limit Texas Hold'em game, it
    would cost a minimum of $5 [the big blind of the blinds named] for the player who acts first
    to call" — a big blind all in for less does not lower the price or the minimum raise."""
    h = make("NT", Stakes.blinds(1, 2), {1: 100, 2: 1, 3: 100}, button=3)
    assert h.is_all_in(2)
    la = h.legal_actions()
    assert la.seat == 3 and la.call_amount == 2 and la.min_to == 4
    h.call()
    assert h.legal_actions().call_amount == 1     # the small blind completes to the full 2
    h.call()
    _check_down(h)
    assert sum(h.results().values()) == 0


def test_short_big_blind_pokerkit_way_is_a_setting():
    h = make("NT", Stakes.blinds(1, 2), {1: 100, 2: 1, 3: 100}, button=3,
             options=Options(full_big_blind_when_short=False))
    la = h.legal_actions()
    assert la.call_amount == 1 and la.min_to == 3
    assert phh.POKERKIT_OPTIONS.full_big_blind_when_short is False


def test_short_big_blind_in_fixed_limit_raise_is_a_full_bet_above_the_blind():
    """rules/003 'Fixed Limit': "The big blind equals to the lower limit" — the price stays 2."""
    h = make("FT", Stakes.limit(2), {1: 100, 2: 1, 3: 100}, button=3)
    la = h.legal_actions()
    assert la.call_amount == 2 and la.min_to == la.max_to == 4


# ---------------------------------------------------------------- 4 money units
def test_small_blind_rounds_down_to_the_dollar_or_is_exactly_half():
    """rules/000, 002 'Button and Blinds': "The small blind is half the lower limit bet, rounded
    down to the nearest dollar ... in a $3-$6 game, the small blind is $1"; rules/002 [1]:
    "blinds equal to exactly half the limit they are playing" — a setting."""
    assert Stakes.limit(300, dollar=100).small_blind == 100
    assert Stakes.limit(400, dollar=100).small_blind == 200
    assert Stakes.limit(300, dollar=100, small_blind_rule=SmallBlindRule.EXACTLY_HALF).small_blind == 150
    assert Stakes.limit(3).small_blind == 1
    assert Stakes.limit(50, dollar=100, chip=25).small_blind == 25   # a 0.25/0.50 game: not 0


def test_odd_chip_is_a_whole_25_cent_chip():
    """rules/003: "If there is an odd (25 cent) chip it goes to the winning player to the left
    of the dealer." A 2.25 pot split two ways is 1.25 / 1.00."""
    assert split(225, [0, 1], chip=25) == [(0, 125), (1, 100)]
    assert split(225, [0, 1], one_each=False, chip=25) == [(0, 125), (1, 100)]
    assert halve(225, chip=25) == (125, 100)
    assert split(226, [0, 1], chip=25) == [(0, 126), (1, 100)]    # a sub-chip part with the odd chip


def test_a_tied_pot_is_split_in_whole_chips_at_the_table():
    h = make("NT", Stakes.blinds(25, 50, chip=25), {1: 1000, 2: 1000, 3: 1000}, button=3,
             board=ROYAL_BOARD)
    h.call(); h.fold()                     # the button calls 50, the small blind folds: pot 125
    _check_down(h)
    awards = of_type(h, PotAwarded)
    assert awards[0].winners == ((2, 75), (3, 50))


def test_a_bet_that_is_not_whole_chips_is_refused():
    """rules/003's 25-cent chip: in NL 0.25/0.50 a bet of 1.37 is refused, 1.50 is fine."""
    h = make("NT", Stakes.blinds(25, 50, chip=25), {1: 1000, 2: 1000, 3: 1000}, button=3)
    with pytest.raises(IllegalAction) as err:
        h.act(A.RAISE, 137)
    assert err.value.reason is Reason.NOT_WHOLE_CHIPS
    assert h.legal_actions().min_to % 25 == 0 and h.legal_actions().max_to == 1000
    h.act(A.RAISE, 150)
    assert h.bet(3) == 150


def test_an_all_in_for_an_odd_amount_is_allowed():
    h = make("NT", Stakes.blinds(25, 50, chip=25), {1: 1000, 2: 1000, 3: 137}, button=3)
    h.act(A.RAISE, 137)
    assert h.is_all_in(3)


# ---------------------------------------------------------------- 6 Soko showdown order
def test_soko_with_no_betting_on_the_last_round_shows_left_of_the_dealer_first():
    """rules/003 Soko 'Showdown': "If there was no betting the first remaining player to the left
    of the dealer shows his hand first" (not the Stud rule of the highest hand showing)."""
    holes = {1: "2c 3d 4h 7s 9c", 2: "5c 6d 8h Ts Qc", 3: "Kd Ah As Ad Ac"}
    h = make("FSK", Stakes.for_stud(10, ante=1, bring_in=2), {1: 100, 2: 100, 3: 100}, None, holes=holes)
    _check_down(h)
    assert h.showdown_order[0] == 1
    stud = make("F7S", Stakes.for_stud(10, ante=1, bring_in=2), {1: 100, 2: 100, 3: 100}, None,
                holes={1: "2c 3d 4h 7s 9c 8c 6c", 2: "5c 6d 8h Ts Qc Jc Jd", 3: "Kd Qd Ah As Ad Ac Kh"})
    _check_down(stud)
    assert stud.showdown_order[0] == 3     # Stud: the highest hand showing


# ---------------------------------------------------------------- 7 spread-limit Stud/Soko
@pytest.mark.parametrize("code", ["S7S", "SSK", "S7S/8"])
def test_default_spread_limit_stud_and_soko_stakes_allow_bets_after_the_bring_in(code):
    """rules/003 'Spread Limit': "the minimum bet on all betting rounds equals to the big blind
    [the bring-in]. The maximum bet varies on the different rounds" — there must be a spread."""
    variant = Variant.parse(code)
    stakes = default_stakes(variant)
    assert stakes.spread_maxima and min(stakes.spread_maxima) > stakes.bring_in
    h = make(code, stakes, {1: 500, 2: 500, 3: 500}, None)
    h.act(A.BRING_IN)
    h.act(A.COMPLETE, stakes.small_bet)
    assert A.RAISE in kinds(h)
    la = h.legal_actions()
    assert la.max_to > la.min_to or la.max_to == stakes.spread_cap_multiple * stakes.spread_maxima[0]
    h.call(); h.call()
    assert A.BET in kinds(h)               # 4th street: a bet is possible


def test_default_stakes_variants_are_playable():
    for structure in Structure:
        variant = Variant(Variant.parse("F7S").game, structure)
        assert default_stakes(variant).min_bet > 0


# ---------------------------------------------------------------- 9 settings where the documents disagree
def test_open_pair_on_fourth_street_big_bet_optional_by_default_mandatory_as_a_setting():
    """rules/001: "if a player has an open pair, he has the option of betting the full amount";
    rules/000: "if there is a face up pair then the amount is the big bet" (a setting)."""
    holes = {1: "Ah Kd 2s 3d", 2: "Qh Jd 2c 9c", 3: "Th 8d 9h 9s"}
    stakes = Stakes.for_stud(5, ante=1, bring_in=2)
    for options, bounds in ((Options(), (5, 10)), (Options(stud_open_pair_big_bet_mandatory=True), (10, 10))):
        h = make("F7S", stakes, {1: 100, 2: 100, 3: 100}, None, holes=holes, options=options)
        h.act(A.BRING_IN); h.call(); h.call()
        la = h.legal_actions()
        assert (la.min_to, la.max_to) == bounds
