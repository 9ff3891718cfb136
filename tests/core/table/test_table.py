"""The table driving hands through the engine (rules/000, 001, 002, 003)."""

import tomllib

import pytest

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind, Game, PotAwarded, Stakes, Structure
from cardroom.core.table.buyin import buy_in_limits
from cardroom.core.table.clock import TimeoutDecision
from cardroom.core.table.settings import GameKind, TableSettings
from cardroom.core.table.table import Table, TableError

A = ActionKind
DECK_ORDER = list(DECK)


def holdem(
    structure: Structure = Structure.NO_LIMIT,
    kind: GameKind = GameKind.CASH,
    seats: tuple[int, ...] = (1, 2, 3),
    stack: int = 10000,
    **kw: object,
) -> Table:
    stakes = Stakes.limit(200) if structure is Structure.FIXED_LIMIT else Stakes.blinds(100, 200)
    settings = TableSettings(Game.HOLDEM, structure, kind, seat_count=6, **kw)  # type: ignore[arg-type]
    t = Table(settings, stakes)
    for s in seats:
        t.sit_down(s, f"p{s}", stack)
    return t


def test_only_the_chips_in_front_of_you_can_be_used_and_added_never_during_a_hand() -> None:
    """rules/002 'All-Ins': 'You can increase your "table stake" at any time in between hands.
    NEVER DURING A HAND.'"""
    t = holdem()
    t.start_hand(DECK_ORDER)
    with pytest.raises(TableError, match="between hands"):
        t.add_chips(1, 500)
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.FOLD if A.FOLD in la.kinds else A.CHECK)
    t.finish()
    before = t.stack(1)
    t.add_chips(1, 500)
    assert t.stack(1) == before + 500


def test_there_is_a_minimum_buy_in_at_each_table() -> None:
    """rules/003 'Buy-in': the table refuses a buy-in below the minimum or above the maximum."""
    settings = TableSettings(Game.HOLDEM, Structure.NO_LIMIT, seat_count=6)
    t = Table(settings, Stakes.blinds(100, 200), buy_in=buy_in_limits(Structure.NO_LIMIT, 100, 200))
    with pytest.raises(TableError, match="below"):
        t.sit_down(1, "ann", 1999)
    with pytest.raises(TableError, match="above"):
        t.sit_down(1, "ann", 20001)
    t.sit_down(1, "ann", 2000)
    with pytest.raises(TableError, match="above"):
        t.add_chips(1, 18001)


def test_a_timed_out_player_checks_if_he_can_otherwise_folds() -> None:
    """rules/000 'Disconnects': 'his hand will be folded unless the check option is available'."""
    t = holdem()
    plan = t.start_hand(DECK_ORDER, now=0.0)
    assert plan is not None and (plan.button, plan.small_blind, plan.big_blind) == (1, 2, 3)
    la = t.legal_actions()
    assert la is not None and la.seat == 1  # first to act pre-flop: left of the big blind
    assert t.tick(29.0) == []
    assert t.tick(30.0) == [(1, TimeoutDecision.FOLD)]
    t.act(2, A.CALL, now=31.0)
    assert t.tick(61.0) == [(3, TimeoutDecision.CHECK)]  # big blind's option: checks


def test_a_disconnected_player_with_money_in_the_pot_is_treated_as_all_in() -> None:
    """rules/003 'Artificial All-In' (Fixed Limit cash game): he keeps his claim on the pot."""
    t = holdem(Structure.FIXED_LIMIT)
    t.start_hand(DECK_ORDER, now=0.0)  # button 1, SB 2 (100), BB 3 (200)
    t.act(1, A.RAISE, 400, now=1.0)
    t.set_connected(2, False)
    assert t.tick(31.0) == [(2, TimeoutDecision.ARTIFICIAL_ALL_IN)]
    assert t.allowance.left("p2", 31.0) == 1
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None and la.seat != 2  # never asked again
        t.act(la.seat, A.CALL if A.CALL in la.kinds else A.CHECK)
    record = t.finish()
    assert record.artificial_all_in == (2,)
    awards = [e for e in record.hand.events if isinstance(e, PotAwarded)]
    # seat 2 contests only the main pot (3 x his 100 small blind, less the rake) ...
    assert [a.pot_index for a in awards if 2 in a.members] == [0]
    assert awards[0].amount + awards[0].rake == 300 and awards[0].rake == record.rake == 25
    won = sum(chips for a in awards for seat, chips in a.winners if seat == 2)
    # ... and keeps the chips he had not put in
    assert record.finishing_stacks[2] == 9900 + won
    assert sum(record.finishing_stacks.values()) + record.rake == 30000


def test_an_artificial_all_in_hand_replays_from_its_phh_to_the_table_finishing_stacks() -> None:
    """rules/003 'Artificial All-In' through the engine call: the PHH records it
    (``_artificial_all_in``) and replays to the same stacks, the kept chips included."""
    from cardroom.core import phh

    t = holdem(Structure.FIXED_LIMIT)
    t.start_hand(DECK_ORDER, now=0.0)  # button 1, SB 2 (100), BB 3 (200)
    t.act(1, A.RAISE, 400, now=1.0)
    t.set_connected(2, False)
    assert t.tick(31.0) == [(2, TimeoutDecision.ARTIFICIAL_ALL_IN)]
    assert t.stack(2) == 9900 and t.hand is not None and t.hand.set_aside(2) == 9900
    assert t.chips_on_table() == 30000
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.CALL if A.CALL in la.kinds else A.CHECK)
    record = t.finish()
    text = record.phh()
    assert "_artificial_all_in = [[" in text
    replay = phh.loads(text)
    assert dict(zip(replay.hand.seats, replay.finishing_stacks, strict=True)) == record.finishing_stacks
    assert replay.hand.artificial_all_in_seats == [2]


def test_when_both_all_ins_have_been_used_the_hand_is_folded() -> None:
    """rules/002: 'Until your account of "all ins" has been reset, your hand may be folded'."""
    t = holdem(Structure.FIXED_LIMIT)
    t.allowance.use("p2", 0.0)
    t.allowance.use("p2", 0.0)
    t.start_hand(DECK_ORDER, now=10.0)
    t.act(1, A.RAISE, 400, now=11.0)
    t.set_connected(2, False)
    assert t.tick(41.0) == [(2, TimeoutDecision.FOLD)]
    t.allowance.reset("p2")
    assert t.allowance.left("p2", 42.0) == 2


def test_no_artificial_all_in_in_no_limit() -> None:
    """rules/003: 'not in PL, 1/2PL and NL games'."""
    t = holdem(Structure.NO_LIMIT)
    t.start_hand(DECK_ORDER, now=0.0)
    t.act(1, A.RAISE, 600, now=1.0)
    t.set_connected(2, False)
    assert t.tick(31.0) == [(2, TimeoutDecision.FOLD)]


def test_a_draw_timeout_stands_pat_and_may_not_bet_or_raise_in_the_next_round() -> None:
    """rules/003 2-7 Triple Draw: 'he will stand pat (draw 0 cards) and not be able to bet or
    raise the pot in the next betting round'."""
    settings = TableSettings(Game.TRIPLE_DRAW_27, Structure.FIXED_LIMIT, seat_count=6)
    t = Table(settings, Stakes.limit(200))
    for s in (1, 2):
        t.sit_down(s, f"p{s}", 10000)
    t.start_hand(DECK_ORDER, now=0.0)  # heads-up: button 1 = SB acts first
    t.act(1, A.CALL, now=1.0)
    t.act(2, A.CHECK, now=2.0)
    la = t.legal_actions()
    assert la is not None and la.seat == 2 and A.DRAW in la.kinds  # first left of the button draws
    assert t.tick(2.0 + 30.0) == [(2, TimeoutDecision.STAND_PAT)]
    t.act(1, A.DRAW, discards=(), now=33.0)
    la = t.legal_actions()
    assert la is not None and la.seat == 2
    assert A.BET not in la.kinds and A.CHECK in la.kinds
    with pytest.raises(TableError, match="may not bet"):
        t.act(2, A.BET, 200, now=34.0)
    t.act(2, A.CHECK, now=34.0)
    t.act(1, A.BET, 200, now=35.0)
    la = t.legal_actions()
    assert la is not None and la.seat == 2 and A.RAISE not in la.kinds and A.CALL in la.kinds
    t.act(2, A.CALL, now=36.0)
    t.act(2, A.DRAW, discards=(), now=37.0)  # acts in time on the next draw ...
    t.act(1, A.DRAW, discards=(), now=38.0)
    la = t.legal_actions()
    assert la is not None and la.seat == 2 and A.BET in la.kinds  # ... so he may bet again


def test_a_disconnected_players_draw_is_handled_automatically() -> None:
    """rules/001 'Lost connection': the draw keeps cards by the priority list."""
    settings = TableSettings(Game.FIVE_CARD_DRAW, Structure.FIXED_LIMIT, seat_count=6)
    t = Table(settings, Stakes.limit(200))
    for s in (1, 2):
        t.sit_down(s, f"p{s}", 10000)
    t.start_hand(DECK_ORDER, now=0.0)
    t.act(1, A.CALL, now=1.0)
    t.act(2, A.CHECK, now=2.0)
    t.set_connected(2, False)
    held = t.hand.hole_cards(2)  # type: ignore[union-attr]
    assert t.tick(40.0) == [(2, TimeoutDecision.AUTO_DRAW)]
    from cardroom.core.table.autodraw import auto_draw

    kept = set(auto_draw(held).keep)
    assert kept <= set(t.hand.hole_cards(2))  # type: ignore[union-attr]


def test_extra_time_is_used_automatically_in_tournaments() -> None:
    """rules/000 'Extra time': connected, money in the pot, does not act in time."""
    t = holdem(kind=GameKind.TOURNAMENT, time_bank_seconds=20.0)
    t.start_hand(DECK_ORDER, now=0.0)
    t.act(1, A.CALL, now=1.0)  # seat 2 (small blind) has money in the pot
    assert t.tick(31.0) == [(2, TimeoutDecision.USE_TIME_BANK)]
    assert t.tick(50.0) == []
    t.act(2, A.CALL, now=45.0)
    assert t.time_bank[2] == pytest.approx(6.0)  # 14 s of the 20 used


def test_in_tournaments_a_player_who_sits_out_is_still_dealt_and_posts_blinds() -> None:
    """rules/000: 'he or she will be dealt cards, and a blind and/or antes will be posted automatically'."""
    t = holdem(kind=GameKind.TOURNAMENT)
    t.sit_out(3)
    plan = t.start_hand(DECK_ORDER, now=0.0)
    assert plan is not None and 3 in plan.dealt and plan.big_blind == 3
    t.act(1, A.CALL, now=1.0)
    t.act(2, A.CALL, now=2.0)  # seat 3 checks at once (away)
    la = t.legal_actions()
    assert la is not None and la.seat != 3


def test_a_player_who_stands_up_during_the_hand_is_folded_and_leaves_after_it() -> None:
    t = holdem()
    t.start_hand(DECK_ORDER, now=0.0)
    assert t.stand_up(3) is None  # in the hand: leaves when it ends
    t.act(1, A.RAISE, 400, now=1.0)
    t.act(2, A.CALL, now=2.0)  # seat 3 faces a raise: folded at his turn
    assert t.hand is not None and t.hand.folded[t.hand.position(3)]
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.CHECK)
    record = t.finish()
    assert record.departed == ((3, "p3", 9800),)
    assert 3 not in t.seating.seats


def test_no_flop_no_drop_and_rake_from_the_pot() -> None:
    """rules/003 'RAKE': 'Only pots where there is a flop in Texas ... are raked'."""
    t = holdem()
    t.start_hand(DECK_ORDER)
    t.act(1, A.FOLD)
    t.act(2, A.FOLD)
    assert t.finish().rake == 0
    t.start_hand(DECK_ORDER)  # button 2, SB 3, BB 1
    t.act(2, A.CALL)
    t.act(3, A.CALL)
    t.act(1, A.CHECK)
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.CHECK)
    record = t.finish()
    assert record.rake == 25  # pot 6.00, 3 players: EUR 0.25
    assert t.total_rake == 25


def test_all_funmoney_games_are_free_of_charge() -> None:
    """rules/003 'RAKE'."""
    t = holdem(play_money=True)
    t.start_hand(DECK_ORDER)
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.CALL if A.CALL in la.kinds else A.CHECK)
    assert t.finish().rake == 0


def test_server_crash_in_a_cash_game_returns_all_chips_and_closes_the_table() -> None:
    """rules/003 'Server Crash': money returned to the player accounts, the game cancelled."""
    t = holdem(seats=(1, 2, 3, 5))
    t.start_hand(DECK_ORDER)
    t.act(1 if t.legal_actions().seat == 1 else t.legal_actions().seat, A.CALL)  # type: ignore[union-attr]
    recovery = t.crash()
    assert recovery.to_accounts == {"p1": 10000, "p2": 10000, "p3": 10000, "p5": 10000}
    assert t.closed and not t.seating.seats
    with pytest.raises(TableError):
        t.start_hand(DECK_ORDER)


def test_server_crash_in_a_tournament_rolls_the_hand_back() -> None:
    """rules/000: 'the hands in progress at every table will be restored by rolling back'."""
    t = holdem(kind=GameKind.TOURNAMENT)
    plan = t.start_hand(DECK_ORDER)
    t.act(1, A.RAISE, 600)
    recovery = t.crash()
    assert recovery.replay_hand and recovery.stacks == {1: 10000, 2: 10000, 3: 10000}
    again = t.start_hand(DECK_ORDER[::-1])
    assert again == plan and t.hand_number == 1


def test_phh_records_seats_seat_count_button_dead_blinds_and_rake() -> None:
    """Issue 5: PHH with seats, seat_count, players and the button/dead blind/rake extensions."""
    t = holdem(seats=(1, 2, 3, 4, 5))
    t.start_hand(DECK_ORDER)  # button 1, SB 2, BB 3
    t.act(4, A.FOLD)
    t.act(5, A.FOLD)
    t.act(1, A.FOLD)
    t.act(2, A.FOLD)
    t.finish()
    t.sit_out(4)
    for _ in range(2):  # seat 4 misses both blinds
        t.start_hand(DECK_ORDER)
        while t.in_hand:
            la = t.legal_actions()
            assert la is not None
            t.act(la.seat, A.FOLD if A.FOLD in la.kinds else A.CHECK)
        t.finish()
    t.come_back(4, post_now=True)
    plan = t.start_hand(DECK_ORDER)
    assert plan is not None and plan.posted_to_enter == (4,)
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        t.act(la.seat, A.CALL if A.CALL in la.kinds else A.CHECK)
    fields = tomllib.loads(t.finish().phh())
    assert fields["seat_count"] == 6 and fields["hand"] == 4
    assert fields["_button_seat"] == plan.button
    assert sorted(fields["seats"]) == list(plan.dealt)
    assert fields["players"] == [f"p{s}" for s in fields["seats"]]
    assert fields["_dead_blinds"][fields["seats"].index(4)] == 100
    assert fields["_rake"] > 0
    assert fields["_posted_to_enter"] == [4]


def test_in_tournaments_a_disconnected_player_is_dealt_in_and_his_blinds_posted() -> None:
    """rules/000 'Disconnects': 'If a player is not connected before a hand starts, he or she
    will be dealt cards, and a blind and/or antes will be posted automatically'."""
    t = holdem(kind=GameKind.TOURNAMENT)
    t.set_connected(2, False)
    plan = t.start_hand(DECK_ORDER, now=0.0)
    assert plan is not None and 2 in plan.dealt and plan.small_blind == 2
    assert t.stack(2) == 10000 - 100
    t.act(1, A.RAISE, 600, now=1.0)
    assert t.tick(31.0) == [(2, TimeoutDecision.FOLD)]  # no artificial all-in in tournaments
