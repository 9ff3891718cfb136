"""The tournament service in-process (fast tier): whole tournaments through the house with the
in-process tables, every cent checked in the fake bank, a restart rebuilt from the store."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from cardroom.core.tournament import Status
from cardroom.runtime.errors import ServiceError
from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import Room, rebuy_event, run_async, satellite_played, sng
from tournament import bots

POOL = "tournament_prize_pool:{}:cash"
FEES = "tournament_fees:house:cash"


def results(room: Room, tid: str) -> list[tuple[str, int, int]]:
    return [(r.player, r.place, r.prize) for r in room.house.runners[tid].results]


def cash(room: Room, player: str) -> int:
    return room.bank.balances.get(f"player_cash:{player}:cash", 0)


@run_async
async def test_a_sit_and_go_is_played_to_the_end_and_every_cent_is_accounted_for(room: Room) -> None:
    """rules/000: 'The tournament is played until one player accumulates all the chips in play'
    and 'the payoffs will be exactly according to the prize payout structure'."""
    players = [f"p{i}" for i in range(6)]
    room.fund(*players)
    await room.house.create(sng())
    for i, p in enumerate(players):
        await room.house.register("sng1", p, f"r{i}")
    assert room.house.runners["sng1"].t.status is Status.RUNNING  # a Sit & Go starts when full
    await room.play("sng1")
    t = room.house.runners["sng1"].t
    assert t.status is Status.FINISHED
    places = results(room, "sng1")
    assert sorted(p for p, _, _ in places) == players and places[0][1] == 1
    assert sum(prize for _, _, prize in places) == 6000 == t.prize_pool
    assert room.bank.balances[POOL.format("sng1")] == 0
    assert room.bank.balances[FEES] == 600
    for p, _, prize in places:
        assert cash(room, p) == 10_000 - 1100 + prize
    assert room.bank.total() == 0
    # the in-process tables' hand reports (read only on the dealer's tables) are taken at every step, not kept
    # (630 B a hand, for good): after one more step none is left
    await room.house.step()
    assert room.house.tables.hands_ended() == []


@run_async
async def test_the_same_request_id_registers_and_charges_once(room: Room) -> None:
    room.fund("ann")
    await room.house.create(sng(players=3))
    first = await room.house.register("sng1", "ann", "req-1")
    again = await room.house.register("sng1", "ann", "req-1")
    assert (first["replayed"], again["replayed"]) == (False, True)
    assert cash(room, "ann") == 10_000 - 1100
    with pytest.raises(ServiceError) as caught:
        await room.house.unregister("sng1", "ann", "req-1")  # another request under the same id
    assert caught.value.code == grpc.StatusCode.ALREADY_EXISTS and caught.value.reason == "REQUEST_ID_REUSED"


@run_async
async def test_an_in_process_bot_decision_the_engine_refuses_is_decided_again(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service's own players (in-process tables) decide again when a decision is refused: the
    engine's refusal (IllegalAction, no ValueError) too. Before the fix it escaped the step, which
    then failed at every tick and the event stalled."""
    decide, refused = bots.decide, []

    def first_one_illegal(table, structure, rng):  # type: ignore[no-untyped-def]
        decision = decide(table, structure, rng)
        if not refused:
            refused.append(decision)
            return {**decision, "kind": "BET", "amount": None}  # no to-amount: the engine refuses it
        return decision

    monkeypatch.setattr(bots, "decide", first_one_illegal)
    players = [f"p{i}" for i in range(6)]
    room.fund(*players)
    await room.house.create(sng())
    for i, p in enumerate(players):
        await room.house.register("sng1", p, f"r{i}")
    await room.play("sng1")
    assert refused and room.house.runners["sng1"].t.status is Status.FINISHED


@run_async
async def test_bad_input_has_a_precise_status_and_changes_nothing(room: Room) -> None:
    room.fund("ann", "bob")
    room.fund("poor", amount=500)
    start = room.clock.now()
    await room.house.create(
        sng("mtt1", format=pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=60, unregister_before_seconds=30, max_entrants=0)
    )
    await room.house.register("mtt1", "ann", "a1")

    async def refused(call, code: grpc.StatusCode, reason: str) -> None:
        before = (dict(room.bank.balances), room.house.runners["mtt1"].t.entries)
        with pytest.raises(ServiceError) as caught:
            await call
        assert (caught.value.code, caught.value.reason) == (code, reason), caught.value.message
        assert (dict(room.bank.balances), room.house.runners["mtt1"].t.entries) == before

    await refused(room.house.register("mtt1", "ann", "a2"), grpc.StatusCode.ALREADY_EXISTS, "ALREADY_REGISTERED")
    await refused(room.house.register("nope", "ann", "a3"), grpc.StatusCode.NOT_FOUND, "TOURNAMENT_NOT_FOUND")
    await refused(room.house.register("mtt1", "poor", "p1"), grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    await refused(room.house.unregister("mtt1", "bob", "b1"), grpc.StatusCode.NOT_FOUND, "NOT_REGISTERED")
    await refused(room.house.rebuy("mtt1", "ann", "a4"), grpc.StatusCode.FAILED_PRECONDITION, "REBUY_NOT_ALLOWED")
    # rules/000: 'a player can unregister until ten minutes prior to the start' (here: 30 s, set in the lobby)
    room.clock.set(start + 31)
    await refused(
        room.house.unregister("mtt1", "ann", "a5"), grpc.StatusCode.FAILED_PRECONDITION, "UNREGISTER_DEADLINE_PASSED"
    )
    with pytest.raises(ServiceError) as caught:
        await room.house.create(sng("bad", variant="XX"))
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT and "bad" not in room.house.runners
    # levels the game cannot be played at (a stress run created a fixed-limit Omaha event whose levels
    # had blinds only: every bet after the flop was 0, and the core could not replay the dealer's hands)
    blinds_only = [pb.TournamentLevel(small_blind=10, big_blind=20, seconds=60)]
    for variant, levels, field in (
        ("FO/8", blinds_only, "levels[0]"),
        ("FT", [pb.TournamentLevel(small_blind=10, big_blind=20, small_bet=40, big_bet=20, seconds=60)], "levels[0]"),
        ("F7S", blinds_only, "levels[0]"),
        ("NT", [pb.TournamentLevel(small_blind=30, big_blind=20, seconds=60)], "levels[0]"),
        ("NT", [*blinds_only, pb.TournamentLevel(seconds=60)], "levels[1]"),
    ):
        with pytest.raises(ServiceError) as caught:
            await room.house.create(sng(f"bad-{variant.replace('/', '')}", variant=variant, levels=levels))
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT and caught.value.message.startswith(field), (
            variant,
            caught.value.message,
        )
    assert not [t for t in room.house.runners if t.startswith("bad")]


@run_async
async def test_unregister_before_the_deadline_gives_everything_back(room: Room) -> None:
    room.fund("ann")
    await room.house.create(
        sng("mtt1", format=pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=600, unregister_before_seconds=30, max_entrants=0)
    )
    await room.house.register("mtt1", "ann", "a1")
    await room.house.unregister("mtt1", "ann", "a2")
    await room.house.pay_owed()
    assert cash(room, "ann") == 10_000 and room.bank.balances[POOL.format("mtt1")] == 0


@run_async
async def test_a_restart_mid_tournament_rebuilds_it_and_it_finishes_with_the_same_places(room: Room) -> None:
    """rules/000: 'In the event of a server crash, the hands in progress at every table will be
    restored by rolling back these hands' — the rebuilt tournament goes on, no cent lost."""
    players = [f"p{i}" for i in range(6)]
    room.fund(*players)
    await room.house.create(sng(seed=7))
    for i, p in enumerate(players):
        await room.house.register("sng1", p, f"r{i}")
    await room.play("sng1", limit=6)
    before = room.house.runners["sng1"]
    assert before.t.status is Status.RUNNING and before.hands_played > 0
    chips = {p: before.t.chips(p) for p in players}
    rebuilt = room.reopen()
    await rebuilt.recover()
    runner = rebuilt.runners["sng1"]
    assert {p: runner.t.chips(p) for p in players} == chips
    assert runner.event_seq == before.event_seq and runner.command_seq == before.command_seq
    await room.play("sng1")
    assert runner.t.status is Status.FINISHED
    assert sum(prize for _, _, prize in results(room, "sng1")) == 6000
    assert room.bank.balances[POOL.format("sng1")] == 0 and room.bank.total() == 0


@run_async
async def test_rebuys_and_the_add_on_go_into_the_pool_and_all_of_it_is_paid_out(room: Room) -> None:
    """rules/000: 'all Re-buys and Add-ons are added to the tournament prize pool' and 'The total
    prize pool and the payout structure will not be finalized until both the Re-buy and Add-on
    periods have closed'."""
    players = [f"p{i}" for i in range(12)]
    room.fund(*players, amount=20_000)
    await room.house.create(rebuy_event(bot_rebuys=2, bot_add_on=True))
    for i, p in enumerate(players):
        await room.house.register("rb1", p, f"r{i}")
    # rules/000: a re-buy 'ONLY if their chip count is less than or equal to' the starting stack —
    # right at the start every stack is the starting stack: a re-buy by request is allowed
    await room.play("rb1", until=lambda: room.house.runners["rb1"].t.status is Status.RUNNING)
    runner = room.house.runners["rb1"]
    someone = next(p for p in players if runner.t.can_rebuy(p, room.clock.now()) and runner.t.chips(p) > 0)
    before = runner.t.chips(someone)
    done = await room.house.rebuy("rb1", someone, "manual-rebuy")
    assert done["paid"] == 1000 and done["chips"] == 1500
    assert runner.t.chips(someone) == before + 1500 > 1500  # now above the starting stack: no second re-buy
    paid = dict(room.bank.balances)
    with pytest.raises(ServiceError) as caught:
        await room.house.rebuy("rb1", someone, "too-rich")
    assert caught.value.reason == "REBUY_NOT_ALLOWED" and "1500 chips or fewer" in caught.value.message
    assert room.bank.balances == paid and runner.t.chips(someone) == before + 1500
    with pytest.raises(ServiceError) as caught:
        await room.house.add_on("rb1", someone, "too-early")  # 'available during the first five minute break'
    assert caught.value.reason == "ADD_ON_NOT_ALLOWED"
    await room.play("rb1")
    t = runner.t
    assert t.status is Status.FINISHED and t.rebuys_sold >= 1 and t.add_ons_sold >= 1
    paid_in = 12 * 1000 + t.rebuys_sold * 1000 + t.add_ons_sold * 1000
    assert t.prize_pool == paid_in == sum(prize for _, _, prize in results(room, "rb1"))
    assert room.bank.balances[POOL.format("rb1")] == 0 and room.bank.balances[FEES] == 1200
    assert room.bank.total() == 0


@run_async
async def test_cancelled_before_the_start_everybody_gets_the_full_entry_back(room: Room) -> None:
    """rules/000: 'If a tournament is cancelled prior to starting, all players will receive a
    refund of their full tournament registration fees'."""
    players = ["ann", "bob", "cat"]
    room.fund(*players)
    await room.house.create(sng("mtt1", format=pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=600, max_entrants=0))
    for i, p in enumerate(players):
        await room.house.register("mtt1", p, f"r{i}")
    out = await room.house.cancel("mtt1", "c1")
    assert out["policy"] == "before_start" and dict(map(tuple, out["payouts"])) == {p: 1100 for p in players}
    await room.house.pay_owed()
    assert all(cash(room, p) == 10_000 for p in players)
    assert room.bank.balances[POOL.format("mtt1")] == 0 and room.bank.balances.get(FEES, 0) == 0
    with pytest.raises(ServiceError) as caught:
        await room.house.cancel("mtt1", "c2")
    assert caught.value.reason == "TOURNAMENT_OVER"


@run_async
async def test_cancelled_in_progress_the_pool_is_shared_fifty_fifty_and_fees_go_back(room: Room) -> None:
    """rules/000: 'awarding 50% of the prize pool to all remaining players and the other 50% ...
    proportionately based on each players chip count. All remaining players will also receive
    their entry fee. Any player who was eliminated prior to the interruption will not be
    entitled to a refund.'"""
    players = [f"p{i}" for i in range(9)]
    room.fund(*players)
    await room.house.create(sng(players=9, seed=3))
    for i, p in enumerate(players):
        await room.house.register("sng1", p, f"r{i}")
    runner = room.house.runners["sng1"]
    await room.play("sng1", until=lambda: len(runner.t.remaining()) <= 7)
    assert runner.t.status is Status.RUNNING
    out = await room.house.cancel("sng1", "c1")
    assert out["policy"] == "fifty_fifty"
    left = [p for p, _ in out["payouts"]]
    await room.house.pay_owed()
    assert sum(a for _, a in out["payouts"]) == 9000 + 100 * len(left)
    for p in players:
        expected = 10_000 - 1100 + dict(map(tuple, out["payouts"])).get(p, 0)
        assert cash(room, p) == expected
    assert room.bank.balances[POOL.format("sng1")] == 0
    assert room.bank.balances[FEES] == 100 * (9 - len(left))


@run_async
async def test_a_guarantee_overlay_comes_from_the_house_and_the_escrow_ends_at_zero(room: Room) -> None:
    players = [f"p{i}" for i in range(4)]
    room.fund(*players)
    await room.house.create(sng("g1", players=4, guarantee=10_000))
    for i, p in enumerate(players):
        await room.house.register("g1", p, f"r{i}")
    await room.play("g1")
    assert sum(prize for _, _, prize in results(room, "g1")) == 10_000
    overlay = room.bank.transfers["g1:overlay"]
    assert overlay.amount == 6000 and overlay.source == "external:house:cash"
    assert room.bank.balances[POOL.format("g1")] == 0 and room.bank.total() == 0


@run_async
async def test_a_satellite_ends_when_the_seats_are_won_and_seats_the_winners_in_the_target(room: Room) -> None:
    """rules/000: 'the tournament will end when all players have qualified for the target event
    regardless of the chip count'."""
    await satellite_played(room, [f"p{i}" for i in range(6)])
    res = room.house.runners["sat"].results
    seats = [r.player for r in res if r.seat]
    assert len(seats) == 2  # 6000 in the pool, seats of 2750: two seats and 500 to the next place
    for _ in range(20):
        await room.house.pay_owed()
        room.clock.advance(0.1)
        await asyncio.sleep(0)
        if all(p in room.house.runners["main"].t.entrants for p in seats):
            break
    main = room.house.runners["main"].t
    assert sorted(main.entrants) == sorted(seats) and all(main.entrants[p].via_satellite for p in seats)
    assert room.bank.balances[POOL.format("sat")] == 0
    assert room.bank.balances[POOL.format("main")] == 2 * 2500
    for _ in range(5):
        await asyncio.sleep(0)
    assert "sat" not in room.house._seating and not room.house._tasks  # the seating's task is not kept for good


@run_async
async def test_late_registration_seats_the_player_at_once_and_charges_him(room: Room) -> None:
    """rules/000 'Tournament Rules': late registration — a late entrant is seated at a table with a
    free seat and gets the starting stack; his buy-in joins the pool."""
    players = [f"p{i}" for i in range(8)]
    room.fund(*players, "late")
    await room.house.create(
        sng(
            "mtt1",
            format=pb.TOURNAMENT_FORMAT_MTT,
            start_in_seconds=5,
            max_entrants=0,
            seats=6,
            late_registration_seconds=600,
        )
    )
    for i, p in enumerate(players):
        await room.house.register("mtt1", p, f"r{i}")
    runner = room.house.runners["mtt1"]
    await room.play("mtt1", until=lambda: runner.t.status is Status.RUNNING)
    await room.house.register("mtt1", "late", "late-1")
    e = runner.t.entrants["late"]
    assert e.late and e.table is not None and runner.t.chips("late") == 1500
    assert room.house.tables.seated("mtt1")["late"] == (e.table, e.seat)
    assert cash(room, "late") == 10_000 - 1100
    await room.play("mtt1")
    assert sum(prize for _, _, prize in results(room, "mtt1")) == 9000
    assert room.bank.balances[POOL.format("mtt1")] == 0 and room.bank.total() == 0


@run_async
async def test_a_heads_up_sit_and_go_pays_the_winner_everything(room: Room) -> None:
    room.fund("ann", "bob")
    await room.house.create(sng("hu1", players=2, format=pb.TOURNAMENT_FORMAT_HEADS_UP))
    await room.house.register("hu1", "ann", "a")
    await room.house.register("hu1", "bob", "b")
    await room.play("hu1")
    (winner, first, prize), (_, second, nothing) = results(room, "hu1")
    assert (first, prize, second, nothing) == (1, 2000, 2, 0)
    assert cash(room, winner) == 10_000 - 1100 + 2000 and room.bank.balances[POOL.format("hu1")] == 0
