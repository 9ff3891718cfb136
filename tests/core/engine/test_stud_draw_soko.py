"""7-Card Stud, Soko and draw games: antes, bring-in, order of play, draws (rules/000, 001, 003)."""

from __future__ import annotations

import pytest

from cardroom.core.cards import DECK, parse_cards
from cardroom.core.engine import (
    ActionKind as A,
    ActionTaken,
    BoardDealt,
    DrawMade,
    ForcedBetPosted,
    ForcedKind,
    Hand,
    IllegalAction,
    Options,
    Reason,
    SeatIn,
    Stakes,
    StreetStarted,
    StubReshuffled,
    Variant,
)

from .helpers import kinds, last, make, of_type

STUD = Stakes.for_stud(10, ante=1, bring_in=2)


def _passive(h: Hand) -> None:
    """Bring in, then check or call every action to the end."""
    while not h.is_over:
        k = kinds(h)
        if A.BRING_IN in k:
            h.act(A.BRING_IN)
        elif A.CHECK in k:
            h.check()
        elif A.CALL in k:
            h.call()
        else:
            h.draw(())


def test_stud_ante_is_10_percent_of_the_small_bet_and_bring_in_half_the_small_bet():
    """rules/001 'The ante is normally 10% of the minimum bet ... $1 in a $10-$20 Limit game';
    rules/000 'bring-in ... half the small blind ... in a $4-$8 game, the bring-in is $2'."""
    assert Stakes.for_stud(10).ante == 1
    assert Stakes.for_stud(4).bring_in == 2
    h = make("F7S", Stakes.for_stud(10), {1: 100, 2: 100}, button=None)
    assert [(e.seat, e.kind, e.amount) for e in of_type(h, ForcedBetPosted)] == [
        (1, ForcedKind.ANTE, 1), (2, ForcedKind.ANTE, 1)]


def test_lowest_up_card_brings_in_and_suit_breaks_ties():
    """rules/003 'The player showing the lowest card in fixed limit ... must make a forced bet
    (bring-in) ... ties in card rank are broken by suit, with the order being spades, hearts,
    diamonds and clubs': of 2s and 2c the 2c is the lowest."""
    h = make("F7S", STUD, {1: 100, 2: 100, 3: 100}, button=None,
             holes={1: "Ah Kd 2s", 2: "Qh Jd 2c", 3: "Th 8d 9h"})
    assert h.actor_seat == 2
    la = h.legal_actions()
    assert la.kinds == {A.BRING_IN, A.COMPLETE}


def test_bring_in_may_complete_to_the_full_bet():
    """rules/001 'That player can choose between a half or a full bet.'"""
    h = make("F7S", STUD, {1: 100, 2: 100, 3: 100}, button=None,
             holes={1: "Ah Kd 2s", 2: "Qh Jd 2c", 3: "Th 8d 9h"})
    la = h.legal_actions()
    assert la.min_to == la.max_to == 10
    h.act(A.COMPLETE, 10)
    assert h.actor_seat == 3 and h.legal_actions().min_to == 20
    h2 = make("F7S", STUD, {1: 100, 2: 100, 3: 100}, button=None,
              holes={1: "Ah Kd 2s", 2: "Qh Jd 2c", 3: "Th 8d 9h"})
    h2.act(A.BRING_IN)
    la = h2.legal_actions()
    assert la.kinds == {A.FOLD, A.CALL, A.COMPLETE} and la.call_amount == 2 and la.min_to == 10


def test_pot_limit_stud_and_soko_bring_in_on_the_highest_card():
    """rules/003 'The player showing the lowest card in fixed limit and the highest card in pot
    limit ... must make a forced bet'; Soko 'The player showing the highest card'."""
    holes = {1: "Ah Kd 2s", 2: "Qh Jd Ac", 3: "Th 8d 9h"}
    assert make("P7S", STUD, {1: 100, 2: 100, 3: 100}, button=None, holes=holes).actor_seat == 2
    soko = {1: "Ah 2s", 2: "Qh Kc", 3: "Th Ks"}    # Soko: one down, one up; Ks > Kc
    assert make("FSK", STUD, {1: 100, 2: 100, 3: 100}, button=None, holes=soko).actor_seat == 3


def test_highest_showing_hand_acts_first_on_fourth_street():
    """rules/001 'The player with the highest visible hand bets first in the second round'."""
    h = make("F7S", STUD, {1: 100, 2: 100, 3: 100}, button=None,
             holes={1: "Ah Kd 2s 3d", 2: "Qh Jd 2c 9c", 3: "Th 8d 9h 9s"})
    h.act(A.BRING_IN); h.call(); h.call()
    assert h.street_name == "fourth" and h.actor_seat == 3   # open pair of nines


def test_open_pair_on_fourth_street_allows_the_double_bet():
    """rules/001 'if a player has an open pair, he has the option of betting the full amount,
    for example $10 in a $5-$10 game'; rules/003 'A maximum of 3 raises is allowed'."""
    holes = {1: "Ah Kd 2s 3d", 2: "Qh Jd 2c 9c", 3: "Th 8d 9h 9s"}
    h = make("F7S", Stakes.for_stud(5, ante=1, bring_in=2), {1: 100, 2: 100, 3: 100}, button=None, holes=holes)
    h.act(A.BRING_IN); h.call(); h.call()
    la = h.legal_actions()
    assert (la.min_to, la.max_to) == (5, 10)
    h.act(A.BET, 10)
    assert h.legal_actions().min_to == 20      # once doubled, raises are by the big bet
    h2 = make("F7S", Stakes.for_stud(5, ante=1, bring_in=2), {1: 100, 2: 100, 3: 100}, button=None,
              holes=holes, options=Options(stud_double_on_open_pair=False))
    h2.act(A.BRING_IN); h2.call(); h2.call()
    la = h2.legal_actions()
    assert (la.min_to, la.max_to) == (5, 5)


def test_stud_fifth_street_and_later_use_the_big_bet():
    """rules/001 'From this round onwards, all bets are made with the higher number'."""
    h = make("F7S", STUD, {1: 100, 2: 100}, button=None)
    h.act(A.BRING_IN); h.call()
    h.check(); h.check()                       # fourth street
    assert h.street_name == "fifth" and h.legal_actions().min_to == 20


def test_eight_players_seventh_street_community_card_and_no_betting():
    """rules/003 'If there are not enough cards left in the deck to deal every player his 7th
    card a community card is dealt face up ... and no betting is allowed on this round.'"""
    seats = [SeatIn(s, f"p{s}", 500) for s in range(1, 9)]
    h = Hand(Variant.parse("F7S"), STUD, seats, None, list(DECK))
    _passive(h)
    names = [e.name for e in of_type(h, StreetStarted)]
    assert names == ["third", "fourth", "fifth", "sixth", "seventh"]
    i7 = next(k for k, e in enumerate(h.events) if isinstance(e, StreetStarted) and e.name == "seventh")
    after = h.events[i7:]
    assert len(of_type(h, BoardDealt)) == 1 and isinstance(after[1], BoardDealt)
    assert not any(isinstance(e, ActionTaken) for e in after)
    assert all(len(h.hole_cards(s)) == 6 for s in range(1, 9)) and len(h.board) == 1
    assert sum(h.results().values()) == 0


def test_stud_odd_chip_goes_to_the_winner_nearest_the_dealers_left():
    """rules/003 Stud 'If there is an odd chip it goes to the player nearest the dealer box':
    seats 2 and 5 tie with the same straight; the 7-chip pot gives seat 2 the odd chip."""
    holes = {1: "Kc Kd Ks", 2: "5c 6c 7d 8d 9h 2s 3h", 5: "5d 6d 7h 8h 9s 2c 3c"}
    h = make("F7S", STUD, {1: 100, 2: 100, 5: 100}, button=None, holes=holes)
    assert h.actor_seat == 2                   # 7d lower than 7h
    h.act(A.BRING_IN); h.call(); h.fold()
    _passive(h)
    assert h.results() == {1: -1, 2: 1, 5: 0}


def test_soko_four_flush_beats_one_pair_and_odd_chip_to_the_player_dealt_first():
    """rules/003 Soko ranking '4-Flush ... beats One Pair'; 'In Soko the player that was dealt
    cards first wins the odd chip.'"""
    holes = {1: "2h 9h 5h Jh Kc", 2: "Ad As 3c 7d 8s"}
    h = make("FSK", STUD, {1: 100, 2: 100}, button=None, holes=holes)
    _passive(h)
    assert h.results() == {1: 3, 2: -3}       # 4-flush beats the pair of aces
    tie = {1: "2h 9h 5h Jh Kc", 2: "2d 9d 5d Jd Ks", 3: "3c 4s 7c 8d Qs"}
    h2 = make("FSK", STUD, {1: 100, 2: 100, 3: 100}, button=None, holes=tie)
    assert h2.actor_seat == 1                  # 9h is the highest up-card (hearts > diamonds)
    h2.act(A.BRING_IN); h2.call(); h2.fold()   # seat 3 folds its ante: pot 3 + 2 + 2 = 7
    _passive(h2)
    assert h2.results() == {1: 1, 2: 0, 3: -1}  # tied 4-flushes: seat 1 was dealt first


def test_draw_first_active_player_left_of_the_button_draws_first():
    """rules/000 5-card draw 'The player to the left of the dealer draws first.'"""
    h = make("F5CD", Stakes.limit(2), {1: 100, 2: 100, 3: 100}, button=3)
    h.call(); h.fold(); h.check()
    assert kinds(h) == {A.DRAW} and h.actor_seat == 2
    held = h.hole_cards(2)
    h.draw(held[:2])
    ev = of_type(h, DrawMade)[0]
    assert ev.seat == 2 and ev.discarded == tuple(held[:2]) and len(ev.received) == 2
    assert h.rake_eligible()


def test_draw_of_more_than_five_or_of_cards_not_held_is_rejected():
    """Validation: 'draw of more than 5 or of cards not held' (issue 4; rules/003 'discard 0-5')."""
    h = make("F5CD", Stakes.limit(2), {1: 100, 2: 100}, button=2)
    h.call(); h.check()
    seat = h.actor_seat
    held = h.hole_cards(seat)
    other = next(c for c in DECK if c not in held)
    before = (h.actor_seat, len(h.events), h.hole_cards(seat))
    for discards, reason in [(list(held) + [other], Reason.TOO_MANY_DISCARDS),
                             ([other], Reason.CARD_NOT_HELD),
                             ([held[0], held[0]], Reason.DUPLICATE_CARD)]:
        with pytest.raises(IllegalAction) as err:
            h.draw(discards)
        assert err.value.reason is reason
    with pytest.raises(IllegalAction):
        h.check()
    assert (h.actor_seat, len(h.events), h.hole_cards(seat)) == before


def test_draw_stub_runs_out_discards_are_reshuffled_but_never_the_players_own():
    """rules/003 'If insufficient cards remain to complete the draw the mucked and discarded
    cards are shuffled and used ... A player will never get back the cards he discarded in that
    draw but may receive another players discards.'"""
    seats = [SeatIn(s, f"p{s}", 500) for s in range(1, 7)]
    h = Hand(Variant.parse("F2L3D"), Stakes.limit(2), seats, 6, list(DECK), reshuffle_seed=7)
    while h.street_index == 0:
        h.act(A.CALL if A.CALL in kinds(h) else A.CHECK)
    while kinds(h) == {A.DRAW}:
        seat = h.actor_seat
        h.draw(h.hole_cards(seat))
    draws = of_type(h, DrawMade)
    assert len(draws) == 6 and of_type(h, StubReshuffled)
    for d in draws:
        assert not set(d.discarded) & set(d.received)
        assert len(set(d.received)) == 5
    held = [c for s in range(1, 7) for c in h.hole_cards(s)]
    assert len(set(held)) == 30


def test_triple_draw_uses_the_holdem_limit_structure():
    """rules/003 '2-7 Triple Draw there are 4 betting rounds and the same structure as in
    Texas Hold'em Limit is used.'"""
    h = make("F2L3D", Stakes.limit(2), {1: 100, 2: 100}, button=2)
    sizes: dict[int, int] = {}
    while not h.is_over:
        k = kinds(h)
        if k == {A.DRAW}:
            h.draw(())
            continue
        if A.BET in k or A.RAISE in k:
            sizes.setdefault(h.street_index, h.legal_actions().min_to)
        h.act(A.CALL if A.CALL in k else A.CHECK)
    # pre-draw: raise to 4 over the big blind of 2; then bets of 2, 4, 4
    assert sizes == {0: 4, 1: 2, 2: 4, 3: 4}


def test_deuce_to_seven_lowest_hand_wins():
    """rules/003 'In 2-7 Triple Draw the lowest 5 card hand wins the pot. The best hand is
    2-3-4-5-7 ... 2-3-4-5-A is not considered a straight but an Ace high.'"""
    h = make("F2L3D", Stakes.limit(2), {1: 100, 2: 100}, button=2,
             holes={1: "2c 3d 4h 5s Ac", 2: "2d 3h 4s 6c 8d"})
    _passive(h)
    assert h.results() == {1: -2, 2: 2}


def test_parse_cards_helper_sanity():
    assert [str(c) for c in parse_cards("Ah Kd")] == ["Ah", "Kd"]


def test_stud_showdown_without_betting_on_seventh_street_highest_board_shows_first():
    """rules/003 Stud 'If there was no betting the player showing the highest hand on the board
    shows his hand first.' Seat 2 shows a pair of nines: it shows first, then clockwise."""
    from cardroom.core.engine import HandMucked, HandShown
    holes = {1: "2c 3d 4h 5s 6s 7s 8s", 2: "Kc Kd 9h 9s Qs Jd 2d", 3: "Ac Ad Ah Kd Qd Jh 3s"}
    h = make("F7S", STUD, {1: 100, 2: 100, 3: 100}, button=None, holes=holes)
    _passive(h)
    order = [(type(e).__name__, e.seat) for e in h.events if isinstance(e, (HandShown, HandMucked))]
    assert order == [("HandShown", 2), ("HandMucked", 3), ("HandShown", 1)]
    assert h.results()[1] > 0                  # the eight-high straight wins


def test_rake_eligibility_no_flop_no_drop_per_game():
    """rules/003 'Only pots where there is a flop in Texas or Omaha or a third card is dealt in
    Soko or a fourth card is dealt in 7-stud or a draw is made in 5-Draw are raked.'"""
    h = make("F7S", STUD, {1: 100, 2: 100}, button=None)
    h.act(A.BRING_IN)
    assert not h.rake_eligible()
    h.call()
    assert h.street_name == "fourth" and h.rake_eligible()
    s = make("FSK", STUD, {1: 100, 2: 100}, button=None)
    assert not s.rake_eligible()
    s.act(A.BRING_IN); s.call()
    assert s.rake_eligible()                   # the third card was dealt
    d = make("F5CD", Stakes.limit(2), {1: 100, 2: 100}, button=2)
    d.call(); d.check()
    assert not d.rake_eligible()
    d.draw(d.hole_cards(d.actor_seat)[:1])
    assert d.rake_eligible()


def test_stud_dealer_box_seat_sets_the_dealing_order():
    """rules/003 Soko 'Cards are dealt clockwise starting with the first active player after the
    dealer box': with the box at seat 3, seat 5 is dealt first."""
    from cardroom.core import phh
    seats = [SeatIn(s, f"p{s}", 100) for s in (1, 2, 5)]
    h = Hand(Variant.parse("FSK"), STUD, seats, 3, list(DECK))
    assert h.seats == [5, 1, 2]
    _passive(h)
    assert phh.loads(phh.dumps(h)).finishing_stacks == h.stacks


def test_short_all_in_over_a_completion_does_not_reopen_unlike_pokerkit():
    """After the bring-in (2) is completed to 10, a full raise is 10 more; an all-in raise to 19
    does not reopen the betting for players who already acted (engine.hand docstring).
    pokerkit 0.7.7 measures from the completion's increment (8) and lets them raise (found by
    the 10,000-hand differential sweep, F7S hand #1947)."""
    import pokerkit as pk

    from cardroom.core import phh
    head = ("variant = 'F7S'\nantes = [1, 1, 1, 1, 1]\nbring_in = 2\nsmall_bet = 10\nbig_bet = 20\n"
            "starting_stacks = [390, 62, 34, 398, 20]\n")
    actions = ["d dh p1 Ad4sJs", "d dh p2 Kd9c9h", "d dh p3 Ah7c6h", "d dh p4 8d5cTh", "d dh p5 7d2h3c",
               "p5 pb", "p1 cc", "p2 cc", "p3 cbr 10", "p4 cc", "p5 cbr 19", "p1 f", "p2 cc", "p3 cc",
               "p4 cbr 29"]
    text = head + "actions = [" + ", ".join(repr(a) for a in actions) + "]\n"
    with pytest.raises(phh.PHHError) as err:
        phh.loads(text)
    assert err.value.reason is Reason.RAISE_NOT_REOPENED
    state = last(pk.HandHistory.loads(text))
    assert state.bets[3] == 29          # pokerkit accepted the raise
