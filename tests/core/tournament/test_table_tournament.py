"""What a tournament needs from the table (rules/000 'Tournament Rules'; issue 12 item 8)."""

import pytest

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind, Game, Stakes, Structure
from cardroom.core.table.clock import TimeoutDecision
from cardroom.core.table.settings import GameKind, TableSettings
from cardroom.core.table.table import Table, TableError

A = ActionKind


def tournament_table(seats: dict[int, int], time_bank: float = 0.0) -> Table:
    settings = TableSettings(
        Game.HOLDEM, Structure.NO_LIMIT, GameKind.TOURNAMENT, seat_count=6, time_bank_seconds=time_bank
    )
    t = Table(settings, Stakes.blinds(10, 20))
    for s, chips in seats.items():
        t.seat_tournament_player(s, f"p{s}", chips)
    return t


def play_out(t: Table, all_in: bool = False) -> None:
    while t.in_hand:
        la = t.legal_actions()
        assert la is not None
        if all_in and A.RAISE in la.kinds:
            t.act(la.seat, A.RAISE, la.max_to)
        elif A.CALL in la.kinds:
            t.act(la.seat, A.CALL)
        else:
            t.act(la.seat, A.CHECK)


def test_add_chips_is_refused_at_a_tournament_table() -> None:
    """rules/000: 'Players may not acquire additional chips beyond the original Buy-in unless
    there are Re-buys and Add-ons.'"""
    t = tournament_table({1: 1500, 2: 1500})
    with pytest.raises(TableError, match="tournament"):
        t.add_chips(1, 500)
    assert t.stack(1) == 1500
    t.add_tournament_chips(1, 1500)  # a re-buy / add-on sold by the tournament
    assert t.stack(1) == 3000


def test_re_buy_chips_are_added_only_between_the_players_hands() -> None:
    t = tournament_table({1: 1500, 2: 1500})
    t.start_hand(list(DECK))
    with pytest.raises(TableError, match="between hands"):
        t.add_tournament_chips(1, 1500)


def test_a_busted_tournament_player_leaves_his_seat() -> None:
    """rules/000: 'When a player loses all their chips they are declared out of the
    tournament' — he must not stay seated with 0 chips."""
    t = tournament_table({1: 100, 2: 5000, 3: 5000})
    t.start_hand(list(DECK))
    play_out(t, all_in=True)
    record = t.finish()
    for seat, player in record.busted:
        assert seat not in t.seating.seats and player == f"p{seat}"
    assert all(st.stack > 0 for st in t.seating.seats.values())
    assert record.busted  # someone lost everything with all-ins from every player
    assert sum(record.finishing_stacks.values()) == 10_100


def test_a_player_seated_between_the_small_blind_and_the_button_waits_for_the_button() -> None:
    """Issue 11: 'players moved are dealt in except between the small blind and the button'."""
    t = tournament_table({1: 1500, 3: 1500, 5: 1500})
    plan = t.start_hand(list(DECK))
    assert plan is not None and (plan.button, plan.small_blind, plan.big_blind) == (1, 3, 5)
    play_out(t)
    t.finish()
    # next hand: button 3, small blind 5, big blind 1
    t.seat_tournament_player(4, "moved", 1500)  # between the button (3) and the small blind (5)
    t.seat_tournament_player(2, "late", 1500)  # after the big blind (1)
    plan = t.start_hand(list(DECK))
    assert plan is not None and (plan.button, plan.small_blind, plan.big_blind) == (3, 5, 1)
    assert 2 in plan.dealt and 4 not in plan.dealt
    assert all(f.seat != 2 for f in plan.forced)  # dealt in without posting anything
    play_out(t)
    t.finish()
    # the button has passed seat 4: button 5, small blind 1, big blind 2 — seat 4 is dealt in
    plan = t.start_hand(list(DECK))
    assert plan is not None and (plan.button, plan.small_blind, plan.big_blind) == (5, 1, 2)
    assert 4 in plan.dealt and all(f.seat != 4 for f in plan.forced)


def test_the_level_changes_between_hands_only() -> None:
    """rules/000 'Level Structure': 'the blinds/antes increase during a tournament'."""
    t = tournament_table({1: 1500, 2: 1500})
    t.set_stakes(Stakes.blinds(25, 50, ante=5))
    plan = t.start_hand(list(DECK))
    assert plan is not None
    amounts = sorted((f.kind.name, f.amount) for f in plan.forced)
    assert amounts == [("ANTE", 5), ("ANTE", 5), ("BIG_BLIND", 50), ("SMALL_BLIND", 25)]
    with pytest.raises(TableError, match="between hands"):
        t.set_stakes(Stakes.blinds(50, 100))


def to_a_blind_on_turn(t: Table) -> int:
    """Deal, and call until the player on turn has money in the pot (a blind facing a bet): his seat."""
    t.start_hand(list(DECK), now=0.0)
    while True:
        la = t.legal_actions()
        assert la is not None and t.hand is not None
        if t.hand.committed[t.hand.position(la.seat)] > 0:
            return la.seat
        t.act(la.seat, A.CALL, now=1.0)


def test_a_seated_tournament_player_gets_extra_time_only_once_his_connection_is_reported() -> None:
    """rules/000 'Extra time': "Extra Time will automatically be activated if a player has an active
    connection to the game, has money in the pot and does not act in time"; 'Disconnects': "If a player
    is not connected before a hand starts, he or she will be dealt cards, and a blind and/or antes will
    be posted automatically." The tournament seats its players: none has a connection to the table until
    one is reported (the dealer: his client opened the table, or the connection monitor said so)."""
    away = tournament_table({1: 1500, 2: 1500, 3: 1500}, time_bank=20.0)
    assert not away.connected_when_seated and not any(away.connected.values())
    seat = to_a_blind_on_turn(away)
    assert away.time_bank_ahead(1.0) == 0.0
    assert away.tick(40.0) == [(seat, TimeoutDecision.FOLD)]  # dealt in, posted, and folded on time

    there = tournament_table({1: 1500, 2: 1500, 3: 1500}, time_bank=20.0)
    assert to_a_blind_on_turn(there) == seat
    there.set_connected(seat, True)
    assert there.time_bank_ahead(1.0) == 20.0
    assert there.tick(40.0) == [(seat, TimeoutDecision.USE_TIME_BANK)]


def test_the_extra_time_for_a_disconnected_player_is_a_setting() -> None:
    """rules/000 'Disconnects': "makes every effort to protect players who are disconnected during the
    final stages of a tournament, by allowing Extra Time to reconnect" — against its 'Extra time'
    paragraph (above); ``TableSettings.time_bank_when_disconnected`` takes this reading."""
    settings = TableSettings(
        Game.HOLDEM,
        Structure.NO_LIMIT,
        GameKind.TOURNAMENT,
        seat_count=6,
        time_bank_seconds=20.0,
        time_bank_when_disconnected=True,
    )
    t = Table(settings, Stakes.blinds(10, 20))
    for s in (1, 2, 3):
        t.seat_tournament_player(s, f"p{s}", 1500)
    seat = to_a_blind_on_turn(t)
    assert not t.connected[seat] and t.time_bank_ahead(1.0) == 20.0
    assert t.tick(40.0) == [(seat, TimeoutDecision.USE_TIME_BANK)]
