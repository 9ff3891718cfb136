"""Levels, breaks, re-buys and the add-on (rules/000 'Level Structure', 'Re-buy & Add-on')."""

import random

import pytest

from cardroom.core.cards import DECK
from cardroom.core.engine import Game, Structure, Variant
from cardroom.core.table.settings import GameKind, TableSettings
from cardroom.core.table.table import Table
from cardroom.core.tournament import AddOnRules, AnteKind, Level, LevelStructure, RebuyRules, TournamentError
from cardroom.core.tournament.events import AddOn, BreakEnded, BreakStarted, Eliminated, LevelUp, PrizePoolFinal, Rebuy
from cardroom.core.tournament.structure import BreakSchedule, standard_structure
from tests.core.tournament.helpers import NT, of_type, play_hand, started

START = 3600.0


def test_blinds_and_antes_rise_per_level_by_time_and_apply_between_hands() -> None:
    """rules/000 'Level Structure': 'the blinds/antes increase during a tournament. When such
    increase takes place it is called a level.'"""
    levels = LevelStructure((Level(10, 20, seconds=600), Level(15, 30, ante=3, seconds=600)))
    t = started(4, structure=levels)
    tid = next(iter(t.tables))
    play_hand(t, tid, START, random.Random(1))
    t.tick(START + 599)
    assert t.level_index == 0
    t.tick(START + 600)
    assert t.level_index == 1
    assert [e.big_blind for e in of_type(t, LevelUp)] == [20, 30]
    play_hand(t, tid, START + 601, random.Random(2))
    _, record = t.hands[-1]
    forced = sorted((f.kind.name, f.amount) for f in record.plan.forced)
    assert forced == [("ANTE", 3)] * 4 + [("BIG_BLIND", 30), ("SMALL_BLIND", 15)]


@pytest.mark.parametrize(
    ("code", "level", "playable"),
    [
        ("NT", Level(small_blind=10, big_blind=20), True),
        ("NT", Level(small_blind=30, big_blind=20), False),
        ("NT", Level(), False),
        ("FO/8", Level(small_blind=10, big_blind=20), False),  # no bets: every bet after the flop 0
        ("FO/8", Level(small_blind=10, big_blind=20, small_bet=20, big_bet=40), True),
        ("FT", Level(small_blind=10, big_blind=20, small_bet=40, big_bet=20), False),
        ("F7S", Level(small_bet=20, big_bet=40, ante=2, bring_in=5), True),
        ("F7S", Level(ante=2, bring_in=5), False),
    ],
)
def test_a_level_is_refused_for_a_game_that_cannot_be_played_at_it(code: str, level: Level, playable: bool) -> None:
    """rules/000 'Blinds/antes are raised at regular intervals' — a level names what its game needs:
    blinds (small up to big) for the button games, the small and big bet for limit games and Stud."""
    variant = Variant.parse(code)
    assert level.can_play(variant) is playable
    if playable:
        stakes = level.stakes(variant)  # its stakes, with no refusal
        assert (stakes.small_blind, stakes.ante) == (level.small_blind, level.ante)
    else:
        with pytest.raises(ValueError):
            level.stakes(variant)


def test_levels_can_also_end_after_a_number_of_hands() -> None:
    levels = LevelStructure((Level(10, 20, seconds=10**6, hands=2), Level(20, 40)))
    t = started(4, structure=levels)
    tid = next(iter(t.tables))
    rng = random.Random(1)
    play_hand(t, tid, START, rng)
    assert t.level_index == 0
    play_hand(t, tid, START + 1, rng)
    assert t.level_index == 1


def test_a_five_minute_break_every_hour_in_multi_table_events_none_in_single_table() -> None:
    """rules/000: 'There will be a 5 minute break every hour in a standard multi-table
    tournament. There are no breaks during single-table tournaments.'"""
    t = started(25)
    tid = next(iter(t.tables))
    t.tick(START + 3299)
    assert not t.on_break
    t.tick(START + 3300)
    assert t.on_break and of_type(t, BreakStarted)[0].until == START + 3600
    with pytest.raises(TournamentError, match="break"):
        t.deal(tid, [], START + 3301)
    t.tick(START + 3600)
    assert not t.on_break and len(of_type(t, BreakEnded)) == 1
    single = started(9)
    single.tick(START + 3300)
    assert not single.on_break


def test_a_break_due_since_the_last_tick_refuses_the_deal_when_asked_with_the_time() -> None:
    """The tournament service asks before it deals; the break that starts between two ticks must
    not turn its deal into an error (rules/000: a 5 minute break every hour)."""
    t = started(25)
    tid = next(iter(t.tables))
    t.tick(START + 3299)
    assert t.can_deal(tid, START + 3299)
    assert not t.can_deal(tid, START + 3300) and not t.on_break
    with pytest.raises(TournamentError, match="break"):
        t.verify_deal(tid, START + 3300)
    assert t.can_deal(tid, START + 3600)


def test_the_level_clock_stops_during_breaks() -> None:
    sched = BreakSchedule()
    assert sched.break_time_before(3300) == 0 and sched.break_time_before(3450) == 150
    assert sched.break_time_before(7200) == 600


def test_no_raise_cap_in_pot_and_no_limit_bet_and_three_raises_in_limit() -> None:
    """rules/000: 'Each betting round consists of a bet and up to three raises. There is no raise
    cap in pot-limit and no-limit tournaments.'"""
    fixed = standard_structure(Variant.parse("FT"), 1500).levels[0].stakes(Variant.parse("FT"))
    assert fixed.max_bets == 4
    nl = standard_structure(NT, 1500).levels[0].stakes(NT)
    assert nl.small_blind * 2 == nl.big_blind
    assert Variant.parse("NT").structure is Structure.NO_LIMIT  # the engine caps FIXED_LIMIT only


def test_stud_levels_have_antes_and_a_bring_in() -> None:
    stud = Variant.parse("F7S")
    stakes = standard_structure(stud, 1500).levels[0].stakes(stud)
    assert stakes.ante > 0 and stakes.bring_in == stakes.small_bet // 2 and stakes.big_bet == 2 * stakes.small_bet


def test_big_blind_and_button_ante_levels_post_one_dead_ante_for_the_table() -> None:
    """Issue 12 item 2: the big-blind ante and the button ante are forced-bet settings of a
    tournament level; the engine posts them once for the table as dead money in the main pot."""
    bb = Level(50, 100, ante=100, ante_kind=AnteKind.BIG_BLIND).stakes(NT)
    assert (bb.ante, bb.big_blind_ante, bb.button_ante) == (0, 100, 0)
    button = Level(50, 100, ante=100, ante_kind=AnteKind.BUTTON).stakes(NT)
    assert (button.ante, button.big_blind_ante, button.button_ante) == (0, 0, 100)
    standard = Level(50, 100, ante=10).stakes(NT)
    assert (standard.ante, standard.big_blind_ante) == (10, 0)

    table = Table(TableSettings(Game.HOLDEM, Structure.NO_LIMIT, GameKind.TOURNAMENT, seat_count=6), standard)
    for seat in (1, 2, 3, 4):
        table.seat_tournament_player(seat, f"p{seat}", 5000)
    table.set_stakes(bb)
    table.start_hand(list(DECK))
    assert table.hand is not None
    # blinds 50 + 100 and one ante of 100 from the big blind: 250 in the pot, 100 of it dead money
    assert sum(table.hand.committed) == 250
    assert sorted(table.hand.dead) == [0, 0, 0, 100]


def rebuy_tournament(**kw: object) -> object:
    return started(25, rebuys=RebuyRules(**kw), add_on=AddOnRules())


def test_a_re_buy_is_allowed_at_exactly_the_starting_stack_not_above() -> None:
    """rules/000: 'they may purchase a Re-buy ONLY if their chip count is less than or equal to
    1500 chips.'"""
    t = started(25, rebuys=RebuyRules(), add_on=AddOnRules())
    p = next(iter(t.entrants))
    assert t.chips(p) == 1500 and t.can_rebuy(p, START)
    t.rebuy(p, START)
    assert t.chips(p) == 3000
    with pytest.raises(TournamentError, match="1500 chips or fewer"):
        t.rebuy(p, START)
    (event,) = of_type(t, Rebuy)
    assert (event.cost, event.chips, event.count) == (1000, 1500, 1)
    assert t.fees == 25 * 100 and t.collected == 26 * 1000  # no fee on a re-buy


def test_a_double_re_buy_only_at_zero_chips_and_the_fixed_number_of_re_buys() -> None:
    """rules/000: 'The option to purchase a Double Re-buy will only be offered to a player when
    their chip count is zero'; 'a fixed number or unlimited number of Re-buys'."""
    t = started(3, rebuys=RebuyRules(max_rebuys=2), add_on=None)
    p = next(iter(t.entrants))
    assert not t.can_rebuy(p, START, double=True)  # 1500 chips
    rng = random.Random(4)
    tid = next(iter(t.tables))
    while not any(e.status.value == "pending_rebuy" for e in t.entrants.values()):
        play_hand(t, tid, START, rng, all_in=True)
    busted = next(q for q, e in t.entrants.items() if e.status.value == "pending_rebuy")
    assert t.chips(busted) == 0 and t.can_rebuy(busted, START, double=True)
    t.rebuy(busted, START, double=True)
    assert t.chips(busted) == 3000 and t.entrants[busted].rebuys == 2
    assert not t.can_rebuy(busted, START)  # the fixed number is used up


def test_a_busted_player_who_does_not_re_buy_is_out_before_his_tables_next_hand() -> None:
    t = started(3, rebuys=RebuyRules(), add_on=None)
    rng = random.Random(4)
    tid = next(iter(t.tables))
    while not any(e.status.value == "pending_rebuy" for e in t.entrants.values()):
        play_hand(t, tid, START, rng, all_in=True)
    busted = next(q for q, e in t.entrants.items() if e.status.value == "pending_rebuy")
    play_hand(t, tid, START + 1, rng)
    assert t.entrants[busted].status.value == "eliminated"
    (out,) = [e for e in of_type(t, Eliminated) if e.player == busted]
    assert out.prize is None  # the pool is not final yet


def test_the_re_buy_period_ends_with_the_first_break_and_the_add_on_is_at_the_first_break() -> None:
    """rules/000: 'generally it is during the first hour of play up until the end of the first
    break'; 'An Add-on will be available during the first five minute break ... All players that
    are still active ... regardless of how many chips they have'; 'The total prize pool and the
    payout structure will not be finalized until both the Re-buy and Add-on periods have closed.'"""
    t = started(25, rebuys=RebuyRules(), add_on=AddOnRules())
    p = next(iter(t.entrants))
    t.rebuy(p, START)  # 3000 chips: above the starting stack
    assert not t.can_add_on(p, START + 3299)
    t.tick(START + 3300)  # the first break
    assert t.on_break and t.can_add_on(p, START + 3300)
    t.add_on(p, START + 3300)
    assert t.chips(p) == 4500 and of_type(t, AddOn)
    assert not t.can_add_on(p, START + 3301)  # once
    assert not of_type(t, PrizePoolFinal)
    other = list(t.entrants)[1]
    assert t.can_rebuy(other, START + 3599)
    t.tick(START + 3600)
    assert not t.can_rebuy(other, START + 3600)
    (final,) = of_type(t, PrizePoolFinal)
    assert final.prize_pool == 25 * 1000 + 1000 + 1000
    assert sum(final.prizes) == final.prize_pool
