"""Playing tournaments: places and ties, hand-for-hand, final table, shoot-out rounds, satellites,
crash, disconnects, freerolls (rules/000 'Tournament Rules', 'Tournaments Types and Features')."""

import itertools
import random

import pytest

from cardroom.core.engine import ActionKind, Variant
from cardroom.core.engine.simulation import shuffled_deck
from cardroom.core.tournament import SatelliteRules, ShootoutRules, Status, Tournament, TournamentError
from cardroom.core.tournament.elimination import Bust, place_batch
from cardroom.core.tournament.events import (
    Eliminated,
    FinalTable,
    Finished,
    HandForHand,
    PrizePoolFinal,
    RoundStarted,
    SeatWon,
    TableOpened,
)
from cardroom.core.tournament.formats import Format, tournament_config
from tests.core.tournament.helpers import of_type, play_hand, started

START = 3600.0


def test_several_out_in_one_hand_more_chips_at_the_start_places_higher_equal_chips_tie() -> None:
    """rules/000: 'If more than one player is eliminated in a hand, the player with more chips at
    the beginning of the hand is placed higher. In an instance where 2 players started the hands
    with an identical chip count, both players tie for that rank'."""
    out = place_batch([Bust("a", 500, 1), Bust("b", 900, 2), Bust("c", 500, 3)], remaining=10)
    assert [(p.players, p.first, p.last) for p in out] == [(("a", "c"), 9, 10), (("b",), 8, 8)]


def test_tied_players_share_the_prizes_of_their_places() -> None:
    """rules/000: '... both players tie for that rank, and any prizes due to those players will
    be equally distributed between them.' Three equal stacks all-in: the two losers tie for 2nd."""
    for seed in range(200):
        t = started(3, seed=seed, start_at=None, max_entrants=3, min_entrants=3, late_registration_seconds=0.0)
        tid = next(iter(t.tables))
        play_hand(t, tid, 0.0, random.Random(seed), all_in=True)
        if t.status is Status.FINISHED:
            break
    else:
        pytest.fail("no hand knocked out two players")
    out = of_type(t, Eliminated)
    assert len(out) == 2 and {(e.place, e.last_place) for e in out} == {(2, 3)}
    # pool 3000: 2nd 900 + 3rd 600 = 1500, split 750 / 750
    assert [e.prize for e in out] == [750, 750]
    (fin,) = of_type(t, Finished)
    assert sum(r.prize for r in fin.results) == 3000


def bubble(seed: int) -> tuple[Tournament, random.Random] | None:
    t = started(9, seed=seed, seat_count=2, late_registration_seconds=0.0)  # heads-up tables, 3 paid
    rng = random.Random(seed)
    while t.status is Status.RUNNING and not t.hand_for_hand:
        for tid in sorted(t.tables):
            if t.can_deal(tid):
                play_hand(t, tid, START, rng, all_in=True)
    while t.hand_for_hand and t.h4h_dealt:  # finish the synchronized hand under way
        for tid in sorted(t.tables):
            if t.can_deal(tid) and tid not in t.h4h_dealt:
                t.deal(tid, shuffled_deck(rng), START)
                play_to_end(t, tid, all_in=False)
        if not any(t.can_deal(x) and x not in t.h4h_dealt for x in t.tables):
            break
    ok = t.hand_for_hand and len(t.tables) == 2 and not t.h4h_dealt
    return (t, rng) if ok else None


def play_to_end(t: Tournament, tid: int, all_in: bool) -> None:
    while tid in t.playing:
        la = t.tables[tid].legal_actions()
        assert la is not None
        if all_in and ActionKind.RAISE in la.kinds:
            t.act(tid, la.seat, ActionKind.RAISE, la.max_to, now=START)
        else:
            kind = ActionKind.CHECK if ActionKind.CHECK in la.kinds else ActionKind.CALL
            t.act(tid, la.seat, kind if all_in or kind is ActionKind.CHECK else ActionKind.FOLD, now=START)


def test_hand_for_hand_on_the_bubble_a_table_waits_for_the_others() -> None:
    """rules/000: 'if one table finishes its hand before the other table(s), that table waits for
    the other table(s) to finish before the next hand is dealt.'"""
    found = next(b for b in (bubble(s) for s in range(100)) if b is not None)
    t, rng = found
    assert of_type(t, HandForHand)[-1].remaining == t.places_paid() + 1
    a, b = sorted(t.tables)
    t.deal(a, shuffled_deck(rng), START)
    t.deal(b, shuffled_deck(rng), START)
    play_to_end(t, a, all_in=False)  # folds around: nobody is out
    assert a in t.tables and not t.can_deal(a)
    with pytest.raises(TournamentError, match="hand-for-hand"):
        t.deal(a, shuffled_deck(rng), START)
    play_to_end(t, b, all_in=False)
    assert t.can_deal(a) and t.can_deal(b)


def test_hand_for_hand_bust_outs_at_different_tables_are_one_hand_ranked_by_starting_chips() -> None:
    """rules/000: 'During this hand-for-hand period, all bustouts during a "synchronized" hand
    (even at different tables) are treated as having happened on the same hand and chip stacks
    will be compared as in rule 7 above to determine the finishing order.'"""
    for seed in range(60):
        found = bubble(seed)
        if found is None:
            continue
        t, rng = found
        a, b = sorted(t.tables)
        t.deal(a, shuffled_deck(rng), START)
        t.deal(b, shuffled_deck(rng), START)
        before = len(of_type(t, Eliminated))
        play_to_end(t, a, all_in=True)
        busted_a = [e.player for e in t.entrants.values() if e.status.value == "busted"]
        assert len(of_type(t, Eliminated)) == before  # they wait for table b
        play_to_end(t, b, all_in=True)
        out = of_type(t, Eliminated)[before:]
        tables = {e.table for e in out}
        if busted_a and len(tables) == 2:
            break
    else:
        pytest.fail("no synchronized hand with bust-outs at both tables")
    chips = {e.player: t.entrants[e.player].bust_chips for e in out}
    by_place = sorted(out, key=lambda e: e.place)
    for better, worse in itertools.pairwise(by_place):
        assert chips[better.player] >= chips[worse.player]
        if better.place == worse.place:
            assert chips[better.player] == chips[worse.player]
    assert len({e.at for e in out}) == 1


def test_the_final_table_when_ten_remain_in_holdem_eight_in_stud() -> None:
    """rules/000: 'When 10 players remain in a Hold'em or Omaha tournament or eight players remain
    in a Seven Card Stud tournament, all players are brought together at the "final table".'"""
    for variant, entrants, final in ((Variant.parse("NT"), 12, 10), (Variant.parse("F7S"), 10, 8)):
        t = started(entrants, variant=variant, late_registration_seconds=0.0)
        assert t.config.final_table == final and len(t.tables) == 2
        rng = random.Random(2)
        while len(t.tables) > 1:
            for tid in sorted(t.tables):
                if t.can_deal(tid):
                    play_hand(t, tid, START, rng, all_in=True)
        (ft,) = of_type(t, FinalTable)
        assert ft.players <= final


def test_a_six_max_shoot_out_seats_six_a_table() -> None:
    """rules/000 'Shoot-out': "In round 1, players compete until there is one player left at each
    table" — the table's size is the event's seats when it sets them (a 6-max shoot-out of Hold'em,
    whose tables seat up to 10). Before the fix the size was the game's largest table whatever the
    seats, and CreateTournament refused a 6-max shoot-out ("a shoot-out has 2 to 10 players per
    table")."""
    cfg = tournament_config(Format.SHOOTOUT, Variant.parse("NT"), 12, seat_count=6, start_at=0.0)
    assert cfg.shootout is not None and cfg.shootout.table_size == 6 == cfg.seat_count
    t = Tournament(cfg, random.Random(1))
    for i in range(12):
        t.register(f"p{i}", 0.0)
    t.tick(0.0)
    assert sorted(t.occupied(tid) for tid in t.tables) == [6, 6]


@pytest.mark.parametrize("counted_by", ["the dealer", "the core"])
def test_shoot_out_rounds_one_winner_per_table_goes_on(counted_by: str) -> None:
    """rules/000 'Shoot-out': 'In round 1, players compete until there is one player left at each
    table with all the chips. In round 2 the winners from round 1 are then combined at other
    tables'. 'Extra time': "Each player is given Extra Time ... during a tournament. That Extra Time
    is limited": a round is no new tournament, the winners keep what they had left."""
    on_the_dealer = counted_by == "the dealer"  # (the house then plays the core with no Extra Time)
    t = started(
        12,
        shootout=ShootoutRules(table_size=4),
        late_registration_seconds=0.0,
        extra_time_seconds=0.0 if on_the_dealer else 30.0,
    )
    assert len(t.tables) == 3
    round1 = {tid: {s.player for s in tb.seating.seats.values()} for tid, tb in t.tables.items()}
    for tid, tb in t.tables.items():
        if on_the_dealer:  # the tables that played the round say what each seat has left
            t.set_time_banks(tid, {seat: 10.0 + seat for seat in tb.seating.seats} | {99: 1.0})  # 99: nobody
        else:
            tb.time_bank.update({seat: 10.0 + seat for seat in tb.seating.seats})
    left = {s.player: 10.0 + seat for tb in t.tables.values() for seat, s in tb.seating.seats.items()}
    rng = random.Random(5)
    while t.status is Status.RUNNING and t.shootout_round == 1:
        for tid in sorted(t.tables):
            if t.can_deal(tid) and len(t.tables[tid].seating.seats) > 1:
                play_hand(t, tid, START, rng, all_in=True)
    rounds = of_type(t, RoundStarted)
    assert [(r.round, r.tables, r.players) for r in rounds] == [(1, 3, 12), (2, 1, 3)]
    (table2,) = t.tables.values()
    winners = {s.player for s in table2.seating.seats.values()}
    assert all(len(winners & players) == 1 for players in round1.values())
    assert {s.player: table2.time_bank[seat] for seat, s in table2.seating.seats.items()} == {
        p: left[p] for p in winners
    }
    (opened,) = [e for e in of_type(t, TableOpened) if e.table == next(iter(t.tables))]
    assert dict(opened.time_banks) == {seat: left[s.player] for seat, s in table2.seating.seats.items()}
    assert t.chips_in_play() == 12 * 1500
    assert t.level_index == 0  # the round has its own level structure, from its first level
    with pytest.raises(ValueError, match="2 to 10"):
        started(4, shootout=ShootoutRules(table_size=1))


def test_a_satellite_ends_when_every_seat_is_won_whatever_the_chip_counts() -> None:
    """rules/000: 'If the tournament is a satellite event, the tournament will end when all
    players have qualified for the target event regardless of the chip count.'"""
    t = started(12, satellite=SatelliteRules(seat_value=5000), late_registration_seconds=0.0)
    (final,) = of_type(t, PrizePoolFinal)
    assert (final.seats, final.prizes) == (2, (5000, 5000, 2000))
    rng = random.Random(1)
    while t.status is Status.RUNNING:
        for tid in sorted(t.tables):
            if t.can_deal(tid):
                play_hand(t, tid, START, rng, all_in=True)
    won = of_type(t, SeatWon)
    assert len(won) == 2
    (fin,) = of_type(t, Finished)
    seats = [r for r in fin.results if r.seat]
    assert {(r.place, r.last_place, r.prize) for r in seats} == {(1, 2, 5000)}
    third = [r for r in fin.results if r.place == 3]
    assert sum(r.prize for r in third) == 2000  # the remainder in cash to the next place (maybe tied)
    assert sum(r.prize for r in fin.results) == 12_000


def deal_everywhere_and_act_once(t: Tournament, rng: random.Random) -> dict[int, object]:
    """Every table deals and its first player to act calls (else checks): hands in progress with
    chips in their pots. The deal plans, by table."""
    plans = {tid: t.deal(tid, shuffled_deck(rng), START) for tid in sorted(t.tables)}
    for tid in sorted(t.playing):
        la = t.tables[tid].legal_actions()
        assert la is not None
        t.act(tid, la.seat, ActionKind.CALL if ActionKind.CALL in la.kinds else ActionKind.CHECK, now=START)
    return plans


def test_a_crash_rolls_back_the_hands_in_progress() -> None:
    """rules/000: 'the hands in progress at every table will be restored by rolling back these
    hands. Each player's chip count will be reset to the amount at the beginning of the hand.'"""
    t = started(20)
    rng = random.Random(1)
    before = {p: t.chips(p) for p in t.entrants}
    plans = deal_everywhere_and_act_once(t, rng)
    t.crash()
    assert not t.playing and {p: t.chips(p) for p in t.entrants} == before
    for tid in sorted(t.tables):
        again = t.deal(tid, shuffled_deck(rng), START + 1)
        assert again == plans[tid]  # the same hand is dealt again


def test_a_roll_back_at_one_table_leaves_the_other_tables_hands_going() -> None:
    """rules/000: "Each player's chip count will be reset to the amount at the beginning of the
    hand" — at the table whose dealer crashed: with dealer shards one replica's tables roll back
    while the others' hands play on."""
    t = started(20)
    rng = random.Random(2)
    first, *others = sorted(t.tables)
    before = {p: t.chips(p) for p in t.entrants}
    plans = deal_everywhere_and_act_once(t, rng)
    going = {tid: t.tables[tid].hand.pot_total for tid in others}  # type: ignore[union-attr]
    assert t.can_roll_back(first)
    t.roll_back(first)
    assert t.playing == set(others) and not t.can_roll_back(first)
    assert {tid: t.tables[tid].hand.pot_total for tid in others} == going  # type: ignore[union-attr]
    at_first = [p for p, e in t.entrants.items() if e.table == first]
    assert {p: t.chips(p) for p in at_first} == {p: before[p] for p in at_first}
    with pytest.raises(TournamentError):
        t.roll_back(first)  # nothing in progress there any more
    assert t.deal(first, shuffled_deck(rng), START + 1) == plans[first]  # the same hand again


def test_a_hand_rolled_back_across_a_new_level_is_dealt_again_at_its_own_stakes() -> None:
    """rules/000: "the hands in progress at every table will be restored by rolling back these
    hands. Each player's chip count will be reset to the amount at the beginning of the hand" — the
    same hand dealt again: its button, its blinds and the stakes it was dealt at, even when a level
    began while it was in progress (a level begins with the next hand dealt). Before the fix the deal
    again raised the table to the new level while the blinds stayed the old plan's: the dealer, which
    deals it at one level, and the core disagreed (a sit & go on the dealer that stalled on CI)."""
    t = started(6)
    rng = random.Random(3)
    (tid,) = t.tables
    first = t.deal(tid, shuffled_deck(rng), START)
    old = t.tables[tid].stakes
    la = t.tables[tid].legal_actions()
    assert la is not None
    t.act(tid, la.seat, ActionKind.CALL, now=START)
    later = START + 2 * t.level.seconds  # a new level by now
    t.tick(later)
    assert t.level.stakes(t.variant) != old
    t.roll_back(tid)
    again = t.deal(tid, shuffled_deck(rng), later)
    table = t.tables[tid]
    assert again == first and table.stakes == old  # the same blinds, at the stakes they belong to
    assert table.hand is not None and table.hand.stakes == old
    while tid in t.playing:  # played to its end, then the next hand is at the level of now
        la = table.legal_actions()
        assert la is not None
        t.act(tid, la.seat, ActionKind.FOLD if ActionKind.FOLD in la.kinds else ActionKind.CHECK, now=later)
    t.deal(tid, shuffled_deck(rng), later)
    assert table.stakes == t.level.stakes(t.variant) != old


def shove_to_the_end(t: Tournament, tid: int) -> None:
    while tid in t.playing:
        la = t.tables[tid].legal_actions()
        assert la is not None
        if ActionKind.RAISE in la.kinds or ActionKind.BET in la.kinds:
            kind = ActionKind.RAISE if ActionKind.RAISE in la.kinds else ActionKind.BET
            t.act(tid, la.seat, kind, la.max_to, now=START)
        else:
            t.act(tid, la.seat, ActionKind.CALL if ActionKind.CALL in la.kinds else ActionKind.CHECK, now=START)


def test_a_table_whose_rolled_back_hand_waits_keeps_its_players_until_it_is_dealt_again() -> None:
    """rules/000: "the hands in progress at every table will be restored by rolling back these
    hands" — dealt again to the same players: a table is not broken into it, nor balanced from or to
    it, while its rolled-back hand waits. Seven players on two tables; table 1's dealer crashes; at
    table 2 all go all in and players bust, so the six left fit one table and table 2 is due to
    break. Before the fix its players were seated at table 1 before its hand was dealt again (found by
    a stress run of multi-table events on the dealer: the core's replay then dealt a seat that had
    gone, KeyError)."""
    t = started(7, seat_count=6, late_registration_seconds=0.0)
    rng = random.Random(0)
    first = t.deal(1, shuffled_deck(rng), START)
    t.deal(2, shuffled_deck(rng), START)
    t.roll_back(1)
    seated = {s: st.player for s, st in t.tables[1].seating.seats.items()}
    shove_to_the_end(t, 2)
    assert t.occupied(2) <= 2 and sorted(t.tables) == [1, 2]  # due to break, and waiting
    assert {s: st.player for s, st in t.tables[1].seating.seats.items()} == seated
    assert t.deal(1, shuffled_deck(rng), START) == first  # the same hand, the same players
    shove_to_the_end(t, 1)
    assert len(t.tables) == 1 or t.status is Status.FINISHED  # broken once that hand is over


def test_a_player_who_sits_out_is_dealt_in_and_posts_automatically() -> None:
    """rules/000: 'If a player is not connected before a hand starts, he or she will be dealt
    cards, and a blind and/or antes will be posted automatically. Players can choose to sit out on
    there own, there is no penalty.'"""
    t = started(3)
    away = next(iter(t.entrants))
    t.sit_out(away)
    tid = next(iter(t.tables))
    seat = t.entrants[away].seat
    for _ in range(3):
        play_hand(t, tid, START, random.Random(1))
        _, record = t.hands[-1]
        assert seat in record.plan.dealt


def test_heads_up_the_button_posts_the_small_blind() -> None:
    """rules/000: 'When two players remain or in a Heads-up tournament, the button will post the
    small blind, and act first on the opening round.'"""
    t = started(2)
    tid = next(iter(t.tables))
    plan = t.deal(tid, shuffled_deck(random.Random(1)), START)
    assert plan is not None and plan.heads_up and plan.small_blind == plan.button


def test_a_freeroll_has_no_buy_in_or_fee_and_the_house_pays_the_prize_pool() -> None:
    """rules/000 'Freeroll': 'tournaments that require no Buy-in or registration fees'."""
    t = started(30, buy_in=0, fee=0, guarantee=5000, late_registration_seconds=0.0)
    (final,) = of_type(t, PrizePoolFinal)
    assert (final.collected, final.overlay, final.prize_pool) == (0, 5000, 5000)
    assert t.fees == 0 and sum(final.prizes) == 5000


def test_the_payoffs_are_exactly_the_payout_structure() -> None:
    """rules/000: 'Tournaments will continue until there is one declared winner, unless it is a
    satellite event, and the payoffs will be exactly according to the prize payout structure.'"""
    from cardroom.core.tournament.payouts import prizes

    t = started(25, late_registration_seconds=0.0)
    rng = random.Random(8)
    while t.status is Status.RUNNING:
        for tid in sorted(t.tables):
            if t.can_deal(tid):
                play_hand(t, tid, START, rng, all_in=rng.random() < 0.3)
    table = prizes(25_000, 25)
    (fin,) = of_type(t, Finished)
    assert [r.place for r in fin.results if r.place == 1] == [1]  # one declared winner
    for r in fin.results:
        places = range(r.place, r.last_place + 1)
        share = sum(table[p - 1] for p in places if p <= len(table))
        assert abs(r.prize - share / len(places)) < 1  # ties: the places' prizes split


def test_balancing_moves_the_player_due_for_the_big_blind_to_the_worst_position() -> None:
    """rules/000: 'players will be moved ... in order to keep the number of players at each table
    as balanced as possible ... we try to be fair and move players in relation to their position
    with the dealer button'; issue 11 (TDA): the player who would be big blind next moves to the
    worst position at the short table, with the Extra Time he has left."""
    from cardroom.core.tournament.events import PlayerMoved
    from cardroom.core.tournament.seating import next_big_blind

    for seed in range(200):
        t = started(19, seed=seed, late_registration_seconds=0.0)
        rng = random.Random(seed)
        long_id, short_id = sorted(t.tables, key=lambda x: -t.occupied(x))
        assert (t.occupied(long_id), t.occupied(short_id)) == (10, 9)
        t.deal(long_id, shuffled_deck(rng), START)
        play_to_end(t, long_id, all_in=False)  # the long table has a big blind now
        due = next_big_blind(t.tables[long_id].seating)
        t.tables[long_id].time_bank[due] = 4.0  # he used 26 s of his Extra Time
        t.deal(short_id, shuffled_deck(rng), START)  # one all-in, one call, the rest fold
        called = False
        while short_id in t.playing:
            la = t.tables[short_id].legal_actions()
            assert la is not None
            if ActionKind.RAISE in la.kinds and not called and la.max_to >= 1500:
                t.act(short_id, la.seat, ActionKind.RAISE, la.max_to, now=START)
            elif ActionKind.CALL in la.kinds and not called:
                called = True
                t.act(short_id, la.seat, ActionKind.CALL, now=START)
            elif ActionKind.CHECK in la.kinds:
                t.act(short_id, la.seat, ActionKind.CHECK, now=START)
            else:
                t.act(short_id, la.seat, ActionKind.FOLD, now=START)
        moves = [e for e in of_type(t, PlayerMoved) if e.reason == "balance"]
        if t.occupied(long_id) == 9 and t.occupied(short_id) == 9 and len(moves) == 1:
            break
    else:
        pytest.fail("no single bust-out at the short table")
    (move,) = moves
    assert (move.from_table, move.from_seat, move.to_table) == (long_id, due, short_id)
    short = t.tables[short_id].seating
    assert short.last_big_blind is not None
    free_before = [*t.free_seats(short_id), move.to_seat]
    nearest = min(free_before, key=lambda s: (s - short.last_big_blind) % short.seat_count or short.seat_count)
    assert move.to_seat == nearest
    # rules/000 'Extra time': "That Extra Time is limited ... It decreases as it is being used": what he
    # has left goes with him
    assert t.tables[short_id].time_bank[move.to_seat] == 4.0
    assert max(t.occupied(x) for x in t.tables) - min(t.occupied(x) for x in t.tables) <= 1
