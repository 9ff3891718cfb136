"""The artificial all-in of a disconnected player (rules/002 'All-Ins', rules/003 'Artificial
All-In'): "If a player cannot act he will be treated as all-in if he has put money into the
pot"; "your hand would play and lay claim to the portion of the pot that you have
contributed to, up to and until the disconnect"; "Any further action will create a side pot
of which the 'All In' player will have no claim to"; "only possible ... in Fixed Limit and
Spread Limit games"."""

from __future__ import annotations

import tomllib

import pytest

from cardroom.core import phh
from cardroom.core.engine import (
    ActionKind as A,
    ArtificialAllIn,
    BetReturned,
    HandEnded,
    IllegalAction,
    PotAwarded,
    Reason,
    Stakes,
)

from .helpers import make, of_type

LIMIT = Stakes.limit(4)  # $4-$8, blinds 2/4
# seats 1 (button), 2 (small blind), 3 (big blind); pre-flop seat 1 acts first
HOLES_SB_BEST = {2: "As Ah", 1: "Ks Kh", 3: "Qs Qh"}
HOLES_SB_WORST = {2: "4s 5h", 1: "Ks Kh", 3: "Qs Qh"}
BOARD = "2c 7d 9h Jc 3s"


def _small_blind_disconnects(holes: dict[int, str]):
    """Seat 1 raises to 8; seat 2 (2 in: his small blind) is made all-in; seats 1 and 3 bet on
    to the river: every later chip goes to the side pot."""
    h = make("FT", LIMIT, {1: 100, 2: 100, 3: 100}, button=1, holes=holes, board=BOARD)
    h.act(A.RAISE, 8, seat=1)
    assert h.actor_seat == 2
    event = h.artificial_all_in(2)
    assert event == ArtificialAllIn(seat=2, bet=2, committed=2, kept=98)
    assert h.stack(2) == 0 and h.set_aside(2) == 98 and h.is_all_in(2) and not h.is_folded(2)
    assert h.artificial_all_in_seats == [2]
    acted = []
    for kind, amount in [
        (A.CALL, None),  # pre-flop: seat 3 calls 8
        (A.BET, 4),
        (A.CALL, None),  # flop: seat 3 bets, seat 1 calls
        (A.CHECK, None),
        (A.BET, 8),
        (A.CALL, None),  # turn
        (A.CHECK, None),
        (A.CHECK, None),
    ]:  # river
        acted.append(h.actor_seat)
        h.act(kind, amount)
    assert h.is_over and 2 not in acted  # never asked to act again
    return h


def test_a_disconnected_player_with_money_in_is_all_in_for_what_he_put_in_and_wins_only_the_main_pot():
    h = _small_blind_disconnects(HOLES_SB_BEST)
    awards = of_type(h, PotAwarded)
    # main pot: his 2 matched by both others; side pot: everything bet after, without him
    assert [(a.pot_index, a.amount, set(a.members)) for a in awards] == [(0, 6, {1, 2, 3}), (1, 36, {1, 3})]
    assert awards[0].winners == ((2, 6),) and awards[1].winners == ((1, 36),)
    # he keeps the 98 he did not put in, plus the main pot
    assert h.stack(2) == 98 + 6 and h.set_aside(2) == 0
    assert h.results() == {1: 16, 2: 4, 3: -20}
    assert of_type(h, HandEnded)[0].results == ((2, 4), (3, -20), (1, 16))
    assert sum(h.stacks) == 300


def test_a_disconnected_player_who_loses_keeps_the_chips_he_did_not_put_in():
    h = _small_blind_disconnects(HOLES_SB_WORST)
    assert h.stack(2) == 98 and h.results()[2] == -2
    assert sum(h.stacks) == 300


def test_an_uncalled_bet_above_his_contribution_goes_back():
    """Heads-up: the button raises to 8, the big blind (4 in) is made all-in: nobody is left to
    bet, the 4 nobody matched is returned and the board is dealt out."""
    h = make("FT", LIMIT, {1: 100, 2: 100}, button=1, holes={1: "Ks Kh", 2: "As Ah"}, board=BOARD)
    h.act(A.RAISE, 8, seat=1)
    h.artificial_all_in(2)
    assert h.is_over
    assert [(e.seat, e.amount) for e in of_type(h, BetReturned)] == [(1, 4)]
    assert [(a.amount, a.winners) for a in of_type(h, PotAwarded)] == [(8, ((2, 8),))]
    assert h.stacks == [104, 96]  # dealing order: big blind (seat 2), button (seat 1)


def test_a_player_who_could_check_may_be_made_all_in_too():
    """The big blind's option: later bets are a side pot he has no claim to."""
    h = make("FT", LIMIT, {1: 100, 2: 100, 3: 100}, button=1, holes=HOLES_SB_BEST, board=BOARD)
    h.act(A.CALL, seat=1)
    h.act(A.CALL, seat=2)
    assert h.actor_seat == 3
    h.artificial_all_in(3)
    h.act(A.BET, 4, seat=2)
    h.act(A.CALL, seat=1)
    while not h.is_over:
        h.check_or_call()
    assert [(a.amount, set(a.members)) for a in of_type(h, PotAwarded)] == [(12, {1, 2, 3}), (8, {1, 2})]
    assert h.stack(3) == 96


def test_spread_limit_and_several_artificial_all_ins_make_one_side_pot_each():
    h = make("ST", Stakes.blinds(1, 2), {1: 100, 2: 100, 3: 100, 4: 100}, button=1)
    h.act(A.RAISE, 4, seat=4)  # seats: SB 2, BB 3; seat 4 first pre-flop
    h.act(A.CALL, seat=1)
    h.artificial_all_in(2)  # 1 in
    h.act(A.RAISE, 6, seat=3)
    h.act(A.CALL, seat=4)
    h.artificial_all_in(1)  # 4 in
    while not h.is_over:
        h.check_or_call()
    pots = [(a.amount, set(a.members)) for a in of_type(h, PotAwarded) if a.share == "all"]
    assert [p for p in pots] == [(4, {1, 2, 3, 4}), (9, {1, 3, 4}), (4, {3, 4})]
    assert h.stack(2) >= 99 and h.stack(1) >= 96 and sum(h.stacks) == 400


def _unchanged(h, call) -> IllegalAction:
    before = (len(h.events), list(h.stacks), list(h.committed), h.actor_seat, dict(h._set_aside))
    with pytest.raises(IllegalAction) as err:
        call()
    assert before == (len(h.events), list(h.stacks), list(h.committed), h.actor_seat, dict(h._set_aside))
    return err.value


def test_illegal_artificial_all_ins_are_rejected_with_a_reason_and_the_state_unchanged():
    h = make("FT", LIMIT, {1: 100, 2: 100, 3: 100}, button=1)
    # not his turn
    assert _unchanged(h, lambda: h.artificial_all_in(2)).reason is Reason.OUT_OF_TURN
    # the button has nothing in the pot yet: rules/003 '(if not his hand will be folded)'
    assert _unchanged(h, lambda: h.artificial_all_in(1)).reason is Reason.NO_MONEY_IN_POT
    # rules/003: 'not in PL, 1/2PL and NL games'
    for code in ("NT", "PO", "HT"):
        nl = make(code, Stakes.blinds(1, 2), {1: 100, 2: 100}, button=1)
        err = _unchanged(nl, lambda nl=nl: nl.artificial_all_in(nl.actor_seat))
        assert err.reason is Reason.NOT_LEGAL_NOW and "fixed and spread limit" in err.message
    # over
    h.act(A.FOLD, seat=1)
    h.act(A.FOLD, seat=2)
    assert _unchanged(h, lambda: h.artificial_all_in(3)).reason is Reason.HAND_OVER


def test_no_artificial_all_in_during_a_draw_or_when_the_bring_in_is_due():
    d = make("F5CD", LIMIT, {1: 100, 2: 100}, button=1)
    d.check_or_call()
    d.check_or_call()
    assert d.legal_actions().kinds == {A.DRAW}
    err = _unchanged(d, lambda: d.artificial_all_in(d.actor_seat))
    assert err.reason is Reason.NOT_LEGAL_NOW and "draw" in err.message
    s = make("F7S", Stakes.for_stud(10, ante=1, bring_in=2), {1: 100, 2: 100, 3: 100}, button=None)
    err = _unchanged(s, lambda: s.artificial_all_in(s.actor_seat))  # he has his ante in
    assert err.reason is Reason.NOT_LEGAL_NOW and "bring-in" in err.message
    s.act(A.BRING_IN)
    s.artificial_all_in(s.actor_seat)  # facing the bring-in, with his ante in: fine
    while not s.is_over:
        la = s.legal_actions()
        s.act(A.CALL if A.CALL in la.kinds else A.CHECK)
    assert sum(s.stacks) == 300


def test_the_phh_records_it_and_replays_to_the_same_finishing_stacks():
    h = _small_blind_disconnects(HOLES_SB_BEST)
    text = phh.dumps(h)
    fields = tomllib.loads(text)
    # p1 = seat 2 (dealing order); all-in before actions[4] (seat 3's call), no line of its own
    assert fields["_artificial_all_in"] == [[4, 1]]
    assert fields["actions"][3:5] == ["p3 cbr 8", "p2 cc"]
    assert fields["finishing_stacks"] == h.stacks == [104, 80, 116]
    replay = phh.loads(text)
    assert replay.finishing_stacks == h.stacks
    assert replay.hand.artificial_all_in_seats == [2]
    assert [e for e in replay.hand.events if isinstance(e, ArtificialAllIn)] == of_type(h, ArtificialAllIn)


def test_the_phh_of_an_all_in_that_ends_the_betting_replays():
    h = make("FT", LIMIT, {1: 100, 2: 100}, button=1, holes={1: "Ks Kh", 2: "As Ah"}, board=BOARD)
    h.act(A.RAISE, 8, seat=1)
    h.artificial_all_in(2)
    fields = phh.to_fields(h)
    assert fields["_artificial_all_in"] == [[3, 1]]  # after the hole cards and the raise
    assert phh.loads(phh.dumps(h)).finishing_stacks == h.stacks == [104, 96]


def test_bad_artificial_all_in_fields_are_phh_errors():
    h = _small_blind_disconnects(HOLES_SB_BEST)
    text = phh.dumps(h)
    old = text.replace("_artificial_all_in = [[4, 1]]", "_artificial_all_in = [2]")
    with pytest.raises(phh.PHHError, match="old table-layer marker"):
        phh.loads(old)
    with pytest.raises(phh.PHHError, match="expected"):
        phh.loads(text.replace("[[4, 1]]", "[[4, 9]]"))
    with pytest.raises(phh.PHHError) as err:  # not p3's turn at that point
        phh.loads(text.replace("[[4, 1]]", "[[4, 2]]"), source="x.phh")
    assert err.value.reason is Reason.OUT_OF_TURN and err.value.action_index == 4
    assert str(err.value).startswith("x.phh: action 4")


def test_pokerkit_still_loads_the_phh():
    """PHH user-defined fields start with an underscore; pokerkit 0.7.7 keeps them aside."""
    pokerkit = pytest.importorskip("pokerkit")
    text = phh.dumps(_small_blind_disconnects(HOLES_SB_BEST))
    history = pokerkit.HandHistory.loads(text)
    assert history.user_defined_fields["_artificial_all_in"] == [[4, 1]]
