"""Betting structures, blinds and order of play (rules/000, 001, 002, 003)."""

from __future__ import annotations

import pytest

from cardroom.core.engine import (
    ActionKind as A,
    ActionTaken,
    BetReturned,
    ForcedBet,
    ForcedBetPosted,
    ForcedKind,
    IllegalAction,
    Reason,
    Stakes,
)

from .helpers import kinds, make, of_type

NL = Stakes.blinds(1, 2)


def test_limit_4_8_blinds_are_2_and_4():
    """rules/003 'Example $4-$8 Hold'em, blinds are $2-$4' (big blind = lower limit)."""
    st = Stakes.limit(4)
    assert (st.small_blind, st.big_blind, st.small_bet, st.big_bet) == (2, 4, 4, 8)
    h = make("FT", st, {1: 100, 2: 100, 3: 100}, button=3)
    posted = {(e.seat, e.kind): e.amount for e in of_type(h, ForcedBetPosted)}
    assert posted == {(1, ForcedKind.SMALL_BLIND): 2, (2, ForcedKind.BIG_BLIND): 4}


def test_small_blind_is_half_the_lower_limit_rounded_down():
    """rules/003 'The small blind is half the lower limit bet, rounded down to the nearest dollar.'"""
    assert Stakes.limit(5).small_blind == 2
    assert Stakes.limit(5).big_blind == 5


def _raise_to_cap(h, size):
    """Raise by ``size`` while RAISE/BET is legal; return the amounts reached."""
    reached = []
    while A.RAISE in kinds(h) or A.BET in kinds(h):
        la = h.legal_actions()
        assert la.min_to == la.max_to, "fixed limit offers one amount"
        h.bet_or_raise_to(la.min_to)
        reached.append(la.min_to)
    return reached


def test_limit_5_10_caps_at_20_on_first_two_rounds_and_40_on_last_two():
    """rules/000 '$5/$10 Limit ... raise by $5 up to a maximum of $20 for the pre-flop and flop
    rounds, ... bet $10 and raise by $10 up to a maximum of $40 for the turn and river'."""
    h = make("FT", Stakes.limit(5), {1: 1000, 2: 1000, 3: 1000, 4: 1000}, button=4)
    # pre-flop the big blind (5) is the first bet: raises to 10, 15, 20 (cap)
    assert _raise_to_cap(h, 5) == [10, 15, 20]
    assert kinds(h) == {A.FOLD, A.CALL}
    while h.street_index == 0:
        h.call()
    assert h.street_name == "flop"
    assert _raise_to_cap(h, 5) == [5, 10, 15, 20]
    while h.street_index == 1:
        h.call()
    assert _raise_to_cap(h, 10) == [10, 20, 30, 40]
    with pytest.raises(IllegalAction) as err:
        h.act(A.RAISE, 50)
    assert err.value.reason is Reason.CAPPED


def test_fixed_limit_only_the_limit_amount_is_legal():
    """rules/002 'The only valid bet/raise is equal to the limit'."""
    h = make("FT", Stakes.limit(5), {1: 100, 2: 100, 3: 100}, button=3)
    with pytest.raises(IllegalAction) as err:
        h.act(A.RAISE, 12)
    assert err.value.reason is Reason.WRONG_LIMIT_AMOUNT
    h.act(A.RAISE, 10)


def test_pot_limit_call_5_into_20_raises_to_at_most_50():
    """rules/000 'a player's call is $5 and the pot is $20, he may raise to a maximum of $50':
    the call makes the pot 25 and the raise adds 25, so he puts in 30 and the pot is 50."""
    h = make("PT", Stakes.blinds(2, 5), {1: 500, 2: 500, 3: 500}, button=3)
    # seat 3 (button, first pre-flop with 3 players) calls, SB completes, BB checks: pot 15
    h.call(); h.call(); h.check()
    assert h.pot_total == 15
    h.act(A.BET, 5)          # seat 1 bets 5: the pot is 20
    assert h.pot_total == 20
    la = h.legal_actions()
    assert la.call_amount == 5 and la.max_to == 30
    with pytest.raises(IllegalAction) as err:
        h.act(A.RAISE, 31)
    assert err.value.reason is Reason.AMOUNT_ABOVE_MAXIMUM
    h.act(A.RAISE, 30)
    assert h.pot_total == 50


def test_half_pot_limit_bets_up_to_half_the_pot():
    """rules/003 '½Pot Limit ... bet any amount ... up to 50% of the size of the pot. The minimum
    bet equals to the size of the big blind'."""
    h = make("HT", Stakes.blinds(2, 4), {1: 500, 2: 500, 3: 500}, button=3)
    h.call(); h.call(); h.check()           # pot 12
    la = h.legal_actions()
    assert (la.min_to, la.max_to) == (4, 6)
    h.act(A.BET, 6)                          # pot 18; call 6 makes 24; half of it is 12
    assert h.legal_actions().max_to == 6 + 12


def test_no_limit_minimum_bet_is_the_big_blind_and_raise_at_least_last_raise():
    """rules/000 'the minimum amount a player can bet must be equal or greater than the big blind
    and a raise must equal or be greater then the last bet or raise within the same round'."""
    h = make("NT", NL, {1: 500, 2: 500, 3: 500}, button=3)
    la = h.legal_actions()
    assert la.min_to == 4 and la.max_to == 500
    h.act(A.RAISE, 10)                       # a raise of 8
    assert h.legal_actions().min_to == 18
    with pytest.raises(IllegalAction) as err:
        h.act(A.RAISE, 17)
    assert err.value.reason is Reason.AMOUNT_BELOW_MINIMUM
    h.call(); h.call()
    assert h.legal_actions().min_to == 2     # flop: minimum bet = big blind
    h.act(A.BET, 7)
    assert h.legal_actions().min_to == 14


def test_short_all_in_raise_does_not_reopen_the_betting():
    """rules/003 'a raise must be at least as high as the previous Bet/Raise. Unless a player
    are going All-in'. The short all-in does not reopen the betting for players who already
    acted (casino rule, documented in engine.hand)."""
    h = make("NT", NL, {1: 500, 2: 500, 3: 30}, button=3)
    h.call(); h.call(); h.check()            # pot 6, flop
    h.act(A.BET, 20, seat=1)
    h.call()                                  # seat 2 calls 20
    h.act(A.RAISE, 28, seat=3)               # all-in, 8 more: short of a full raise (20)
    assert h.actor_seat == 1
    assert kinds(h) == {A.FOLD, A.CALL}
    with pytest.raises(IllegalAction) as err:
        h.act(A.RAISE, 60)
    assert err.value.reason is Reason.RAISE_NOT_REOPENED


def test_player_who_checked_may_raise_a_short_all_in_bet():
    """A check is not an action on a bet: after an all-in bet smaller than the minimum bet,
    the players who checked may still raise (pokerkit agrees)."""
    h = make("NT", Stakes.blinds(5, 10), {1: 500, 2: 500, 3: 15}, button=3)
    h.call(); h.call(); h.check()              # seat 3 is left with 5
    h.check(); h.check()
    h.act(A.BET, 5)                            # all-in bet short of the 10 minimum
    assert h.actor_seat == 1
    la = h.legal_actions()
    assert A.RAISE in la.kinds and la.min_to == 15


def test_heads_up_button_posts_small_blind_acts_first_preflop_and_last_after():
    """rules/000 'When two players remain ... the button will post the small blind, and act
    first on the opening round'."""
    h = make("NT", NL, {3: 100, 7: 100}, button=7)
    posted = {e.kind: e.seat for e in of_type(h, ForcedBetPosted)}
    assert posted == {ForcedKind.SMALL_BLIND: 7, ForcedKind.BIG_BLIND: 3}
    assert h.actor_seat == 7
    h.call()
    assert h.actor_seat == 3
    h.check()
    assert h.street_name == "flop" and h.actor_seat == 3


def test_first_to_act_preflop_is_left_of_big_blind_and_after_the_flop_left_of_button():
    """rules/001 'The player directly to the left of the big blind starts the first round' and
    'The player to the left of the dealer starts the second round' (first *active* player)."""
    h = make("NT", NL, {2: 100, 4: 100, 6: 100, 8: 100}, button=8)
    assert h.actor_seat == 6                      # SB 2, BB 4, first 6
    h.call(); h.call()
    h.fold()                                      # small blind (seat 2) folds
    h.check()
    assert h.street_name == "flop" and h.actor_seat == 4


def test_big_blind_has_the_option_when_nobody_raised():
    """rules/003 'For the Big Blind those options are to check if no one has raised ... or to
    raise if there are still raises remaining'."""
    h = make("FT", Stakes.limit(4), {1: 100, 2: 100, 3: 100}, button=3)
    h.call(); h.call()
    assert h.actor_seat == 2
    assert kinds(h) == {A.CHECK, A.RAISE, A.FOLD}
    h.act(A.RAISE, 8)
    assert h.actor_seat == 3


def test_blinds_are_live_bets():
    """rules/003 'If you have posted a blind you are only required to make up the difference'."""
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3)
    h.act(A.RAISE, 6)
    assert h.legal_actions().call_amount == 5      # small blind: 6 - 1


def test_uncalled_bet_is_returned():
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3)
    h.act(A.RAISE, 50)
    h.fold(); h.fold()
    assert of_type(h, BetReturned) == [BetReturned(3, 48)]
    assert h.results() == {1: -1, 2: -2, 3: 3}


def test_dead_blind_is_dead_money_not_counted_toward_the_bet():
    """rules/003 'Players that have missed both the small and the big blind must also post the
    equivalent of the small blind ... This money is considered as "dead"'."""
    forced = [ForcedBet(1, ForcedKind.SMALL_BLIND, 1), ForcedBet(2, ForcedKind.BIG_BLIND, 2),
              ForcedBet(3, ForcedKind.BIG_BLIND, 2), ForcedBet(3, ForcedKind.DEAD_BLIND, 1)]
    h = make("NT", NL, {1: 100, 2: 100, 3: 100, 4: 100}, button=4, forced=forced)
    assert h.pot_total == 6
    assert h.actor_seat == 3                    # left of the regular big blind (seat 2)
    assert kinds(h) == {A.CHECK, A.RAISE, A.FOLD}  # his live 2 matches the big blind
    h.check(); h.call(); h.call(); h.check()
    assert h.pot_total == 9


def test_dead_button_seat_need_not_be_dealt_in():
    """rules/000 'Dead Button rule': the button may sit on an empty seat."""
    h = make("NT", NL, {1: 100, 3: 100, 5: 100}, button=4)
    posted = {e.kind: e.seat for e in of_type(h, ForcedBetPosted)}
    assert posted == {ForcedKind.SMALL_BLIND: 5, ForcedKind.BIG_BLIND: 1}
    assert h.actor_seat == 3


def test_check_facing_a_bet_is_rejected_and_state_unchanged():
    """rules/002 'a player can never check if someone else has bet'."""
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3)
    before = (list(h.stacks), list(h.bets), h.actor_seat, len(h.events))
    for kind, amount, reason in [
        (A.CHECK, None, Reason.NOT_LEGAL_NOW),
        (A.BET, 10, Reason.NOT_LEGAL_NOW),
        (A.RAISE, 3, Reason.AMOUNT_BELOW_MINIMUM),
        (A.RAISE, 101, Reason.AMOUNT_ABOVE_MAXIMUM),
        (A.RAISE, None, Reason.AMOUNT_REQUIRED),
        (A.DRAW, None, Reason.NOT_LEGAL_NOW),
    ]:
        with pytest.raises(IllegalAction) as err:
            h.act(kind, amount)
        assert err.value.reason is reason
    with pytest.raises(IllegalAction) as err:
        h.act(A.CALL, seat=1)
    assert err.value.reason is Reason.OUT_OF_TURN
    assert (list(h.stacks), list(h.bets), h.actor_seat, len(h.events)) == before


def test_act_after_the_hand_is_over_is_rejected():
    h = make("NT", NL, {1: 100, 2: 100}, button=2)
    h.fold()
    assert h.is_over
    with pytest.raises(IllegalAction) as err:
        h.check()
    assert err.value.reason is Reason.HAND_OVER


def test_fold_when_check_is_free_follows_the_open_fold_setting():
    """rules/002 'A player always has the option to fold' (setting ``open_fold``)."""
    from cardroom.core.engine import Options
    h = make("NT", NL, {1: 100, 2: 100}, button=2)
    h.call()
    assert A.FOLD in kinds(h)
    h2 = make("NT", NL, {1: 100, 2: 100}, button=2, options=Options(open_fold=False))
    h2.call()
    assert A.FOLD not in kinds(h2)
    with pytest.raises(IllegalAction):
        h2.fold()


def test_spread_limit_1_2_3():
    """rules/003 'In the limit that is called € 1-2-3 the maximum bet on the first two betting
    rounds is € 1, on fourth street € 2 and on fifth street €3. All raises must match the
    previous raise except when the pot is being capped. The cap at each round is 3 x the limit.'"""
    st = Stakes(small_blind=1, big_blind=1, small_bet=1, big_bet=3, spread_maxima=(1, 1, 2, 3))
    h = make("ST", st, {1: 100, 2: 100, 3: 100}, button=3)
    la = h.legal_actions()
    assert (la.min_to, la.max_to) == (2, 2)
    h.call(); h.check(); h.check()             # the small blind is a full 1 here
    h.check(); h.check(); h.check()            # flop
    la = h.legal_actions()                      # turn: bet 1..2
    assert (la.min_to, la.max_to) == (1, 2)
    h.act(A.BET, 2)
    la = h.legal_actions()
    assert (la.min_to, la.max_to) == (4, 4)    # the raise must match the previous raise (2)
    h.act(A.RAISE, 4)
    h.act(A.RAISE, 6)                           # cap: 3 x 2
    assert A.RAISE not in kinds(h)
    h.call(); h.call()
    la = h.legal_actions()                      # river: bet 1..3, cap 9
    assert (la.min_to, la.max_to) == (1, 3)
    h.act(A.BET, 3); h.act(A.RAISE, 6)
    la = h.legal_actions()
    assert (la.min_to, la.max_to) == (9, 9)
    h.act(A.RAISE, 9)
    assert A.RAISE not in kinds(h)


def test_spread_limit_raise_to_the_cap_may_be_smaller_than_the_previous_raise():
    """rules/003 '... except when the pot is being capped'."""
    st = Stakes(small_blind=1, big_blind=1, small_bet=1, big_bet=3, spread_maxima=(2,), max_bets=None)
    h = make("ST", st, {1: 100, 2: 100, 3: 100}, button=3)
    h.act(A.RAISE, 3)                           # raise by 2
    h.act(A.RAISE, 5)                           # raise by 2
    la = h.legal_actions()
    assert (la.min_to, la.max_to) == (6, 6)    # capped at 3 x 2 = 6: a raise of 1
    h.act(A.RAISE, 6)


def test_actions_emit_events_with_to_amounts():
    h = make("NT", NL, {1: 100, 2: 100, 3: 100}, button=3)
    h.act(A.RAISE, 6)
    h.call()
    ev = of_type(h, ActionTaken)
    assert ev == [ActionTaken(3, A.RAISE, 6, 6), ActionTaken(1, A.CALL, 6, 5)]


def test_deck_order_is_dealt_round_robin_from_the_left_of_the_button_with_burns():
    """rules/003 'The player to the left of the button is first to receive a card'; a card is
    burned before the flop, the turn and the river. The deck order is an input."""
    from cardroom.core.cards import DECK
    from cardroom.core.engine import Hand, SeatIn, Variant
    deck = list(DECK)[::-1]
    h = Hand(Variant.parse("NT"), NL, [SeatIn(s, f"p{s}", 100) for s in (2, 5, 9)], 5, deck)
    assert h.hole_cards(9) == (deck[0], deck[3])
    assert h.hole_cards(2) == (deck[1], deck[4])
    assert h.hole_cards(5) == (deck[2], deck[5])
    while not h.is_over:
        h.check_or_call()
    assert h.board == [deck[7], deck[8], deck[9], deck[11], deck[13]]


def test_seat_queries_for_the_table_layer():
    h = make("NT", NL, {1: 100, 2: 100, 3: 30}, button=3)
    h.act(A.RAISE, 30)
    h.fold()
    assert h.is_all_in(3) and h.is_folded(1) and not h.is_folded(2)
    assert (h.bet(3), h.stack(3), h.bet(2), h.actor_seat) == (30, 0, 2, 2)


def test_fixed_limit_cap_is_configurable():
    """issue 4 'bet + 3 raises cap (configurable)': with ``max_bets=5`` a fifth bet is allowed."""
    from dataclasses import replace
    h = make("FT", replace(Stakes.limit(5), max_bets=5), {1: 1000, 2: 1000, 3: 1000}, button=3)
    assert _raise_to_cap(h, 5) == [10, 15, 20, 25]


def test_bad_set_ups_are_rejected():
    from cardroom.core.cards import DECK
    from cardroom.core.engine import Hand, SeatIn, Variant
    v = Variant.parse("NT")
    two = [SeatIn(1, "a", 100), SeatIn(2, "b", 100)]
    for seats, button, deck in [
        ([SeatIn(1, "a", 100)], 1, list(DECK)),              # one player
        ([SeatIn(1, "a", 100), SeatIn(1, "b", 100)], 1, list(DECK)),  # seat twice
        ([SeatIn(1, "a", 0), SeatIn(2, "b", 100)], 1, list(DECK)),    # no chips
        (two, None, list(DECK)),                             # blind game without a button
        (two, 1, list(DECK)[:40]),                           # short deck
        (two, 1, list(DECK)[:51] + [DECK[0]]),               # duplicate card
    ]:
        with pytest.raises(IllegalAction) as err:
            Hand(v, NL, seats, button, deck)
        assert err.value.reason in (Reason.BAD_SETUP, Reason.DUPLICATE_CARD)
    with pytest.raises(IllegalAction):
        Hand(v, NL, two, 2, list(DECK), [ForcedBet(7, ForcedKind.BIG_BLIND, 2)])
