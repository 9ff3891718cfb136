"""Fast tier: a tournament's tables on the dealer (tournament_tables.proto), the TournamentTables
servicer over an in-process gRPC server, the actors on in-memory fakes and a manual clock.

rules/000 'Tournament Rules': "the hands in progress at every table will be restored by rolling
back these hands. Each player's chip count will be reset to the amount at the beginning of the
hand."; 'Disconnects': a player absent "will still be dealt in", posts, and his hand is folded /
checked when his time runs out.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
import pytest
from prometheus_client import REGISTRY

from cardroom.core import ids
from cardroom.core.cards import Card
from cardroom.core.engine import ActionKind, Game, Stakes, Structure
from cardroom.core.engine.simulation import shuffled_deck
from cardroom.core.table import Table, TableSettings
from cardroom.core.table.settings import GameKind
from cardroom.runtime.clock import ManualClock
from cardroom.runtime.transactions import Outgoing, TransactionFenced
from cardroom.v1 import (
    common_pb2,
    dealer_pb2,
    dealer_pb2_grpc,
    tournament_tables_pb2 as tt,
    tournament_tables_pb2_grpc as tt_grpc,
)
from dealer.actor import TableActor
from dealer.deps import Deps
from dealer.errors import DealerError
from dealer.service import DealerService, Tables
from dealer.tablespec import build
from dealer.tournament_service import TournamentTablesService
from dealer.tournament_table import TournamentTableActor
from tests.fast.dealer.fakes import FakeChecker, FakePublisher, FakeWallet, FakeWriters, Harness, nl_config
from tests.fast.inproc import serving

TID = "sng-7"
BLINDS = tt.TournamentStakes(level=1, small_blind=10, big_blind=20)


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


@dataclass
class Room:
    stub: tt_grpc.TournamentTablesStub
    tables: Tables
    clock: ManualClock
    publisher: FakePublisher
    wallet: FakeWallet

    def actor(self, table: int) -> TournamentTableActor:
        actor = self.tables.actors[ids.tournament_table_id(TID, table)]
        assert isinstance(actor, TournamentTableActor)
        return actor

    def events(self) -> list[tt.TournamentTableEvent]:
        return self.publisher.on(self.tables.deps.topics.tournament_tables)

    def hands_ended(self, table: int | None = None) -> list[tt.TournamentHandEnded]:
        return [
            e.hand_ended
            for e in self.events()
            if e.WhichOneof("event") == "hand_ended" and (table is None or e.table == table)
        ]

    async def settle(self, rounds: int = 60) -> None:
        for _ in range(rounds):
            await asyncio.sleep(0)

    async def tick(self, seconds: float, steps: int = 1) -> None:
        for _ in range(steps):
            await self.settle()
            self.clock.advance(seconds)
            await self.settle()

    async def until(self, done: Callable[[], bool], step: float = 1.0, limit: int = 400) -> None:
        for _ in range(limit):
            if done():
                return
            await self.tick(step)
        raise AssertionError("the tables never got there")


@dataclass
class FencedWriters(FakeWriters):
    """Transactions of a replica whose partition another replica may take (``fenced``): from then on
    every commit is refused, as the transactional id's next holder fences the previous one."""

    fenced: bool = False

    async def commit(self, key: str, batch_id: str, records: Sequence[Outgoing], timeout: float = 15.0) -> None:
        if self.fenced:
            await asyncio.sleep(0)
            raise TransactionFenced(f"dealer.snapshots.0: {batch_id} refused, the id taken over")
        await super().commit(key, batch_id, records, timeout)


@asynccontextmanager
async def room(transactions: bool = False) -> AsyncIterator[Room]:
    clock = ManualClock()
    publisher, wallet = FakePublisher(), FakeWallet()
    writers = FencedWriters(publisher) if transactions else None
    tables = Tables(Deps(wallet, publisher, FakeChecker(), clock=clock, writers=writers))
    async with serving(tt_grpc.add_TournamentTablesServicer_to_server, TournamentTablesService(tables)) as addr:
        async with grpc.aio.insecure_channel(addr) as channel:
            yield Room(tt_grpc.TournamentTablesStub(channel), tables, clock, publisher, wallet)
    await tables.stop()


def seats(*players: tuple[int, str, int]) -> list[tt.TournamentSeat]:
    return [tt.TournamentSeat(seat=s, player_id=p, chips=c) for s, p, c in players]


async def open_table(r: Room, table: int, players: list[tt.TournamentSeat], **kw: object) -> tt.TournamentTableState:
    return await r.stub.OpenTournamentTable(
        tt.OpenTournamentTableRequest(
            command_id=f"open-{table}",
            tournament_id=TID,
            table=table,
            variant="NT",
            seat_count=6,
            stakes=BLINDS,
            seats=players,
            action_seconds=2,
            **kw,  # type: ignore[arg-type]
        )
    )


def chips(r: Room, *tables: int) -> int:
    return sum(r.actor(t).table.chips_on_table() for t in tables)


def test_the_table_id_is_one_function_of_tournament_and_number() -> None:
    assert ids.tournament_table_id("sng-7", 2) == "tt.sng-7.2"
    long = "x" * ids.TOURNAMENT_ID_MAX
    a, b = ids.tournament_table_id(long, 1), ids.tournament_table_id(long[:-1] + "y", 1)
    assert a != b and len(a) <= ids.TABLE_ID_MAX and ids.is_table_id(a) and ids.is_tournament_table_id(a)
    with pytest.raises(ids.InvalidId):
        ids.tournament_table_id("sng-7", 0)


def test_nobody_connected_hands_are_played_by_timeouts_and_every_chip_stays() -> None:
    """rules/000 'Disconnects': nobody acts, every hand ends by the timeout rule (check, else fold)."""

    async def body() -> None:
        async with room() as r:
            state = await open_table(
                r, 1, seats((1, "ann", 1000), (2, "bob", 1000), (3, "cat", 1000)), start_paused=True
            )
            assert state.paused and state.version == 0 and len(state.seats) == 3
            await r.tick(5, 3)
            assert r.actor(1).table.hand_number == 0  # paused from the start: no deal
            await r.stub.ResumeTournamentTable(
                tt.PauseTournamentTableRequest(command_id="go", tournament_id=TID, table=1)
            )
            await r.until(lambda: len(r.hands_ended(1)) >= 3)
            for ended in r.hands_ended(1):
                assert sum(s.chips for s in ended.starting) == sum(s.chips for s in ended.ending) == 3000
                assert not ended.rolled_back
            assert chips(r, 1) == 3000
            keys = {p.key for p in r.publisher.sent if p.topic == r.tables.deps.topics.tournament_tables}
            assert keys == {TID}
            assert not r.wallet.calls  # tournament chips never touch the wallet
            assert not r.publisher.on(r.tables.deps.topics.settled)  # no hand-settled: no money, no rake

    run(body)


async def open_paused_three(r: Room) -> None:
    """Table 1 with ann, bob and cat (1,000 chips each, 20 s of Extra Time), paused from the start."""
    await open_table(
        r, 1, seats((1, "ann", 1000), (2, "bob", 1000), (3, "cat", 1000)), start_paused=True, time_bank_seconds=20
    )


def test_each_hands_end_tells_the_tournament_every_seats_extra_time_left() -> None:
    """rules/000 'Extra time': "Each player is given Extra Time ... during a tournament. That Extra Time
    is limited ... It decreases as it is being used": the tournament keeps what a player has left for
    his next table (a shoot-out's next round is drawn afresh)."""

    async def body() -> None:
        async with room() as r:
            await open_paused_three(r)
            r.actor(1).table.time_bank[2] = 7.5  # bob used 12.5 s of his 20
            await r.stub.ResumeTournamentTable(
                tt.PauseTournamentTableRequest(command_id="go", tournament_id=TID, table=1)
            )
            await r.until(lambda: len(r.hands_ended(1)) >= 1)
            (ended, *_) = r.hands_ended(1)
            left = {s.seat: s.time_bank_left for s in ended.ending if s.HasField("time_bank_left")}
            assert left == {1: 20.0, 2: 7.5, 3: 20.0}

    run(body)


def test_a_seated_player_is_connected_once_he_joins_his_tables_feed_or_watches_it() -> None:
    """rules/000 'Extra time': "Extra Time will automatically be activated if a player has an active
    connection to the game, has money in the pot and does not act in time". The tournament seats its
    players, so a seat is not connected until its player's client opens the table: his gateway joins
    him on the table's feed (or he watches it as himself). An observer's join changes no seat."""

    async def body() -> None:
        async with room() as r:
            await open_paused_three(r)
            actor = r.actor(1)
            assert actor.table.connected == {1: False, 2: False, 3: False}
            async with serving(dealer_pb2_grpc.add_DealerServicer_to_server, DealerService(r.tables)) as address:
                async with grpc.aio.insecure_channel(address) as channel:
                    stub = dealer_pb2_grpc.DealerStub(channel)
                    feed = stub.WatchTableFeed()
                    for player in ("ann", "zed"):  # zed is not seated: an observer
                        await feed.write(dealer_pb2.TableFeedRequest(table_id=actor.table_id, join_player_id=player))
                    joined: list[str] = []
                    while len(joined) < 2:
                        message = await asyncio.wait_for(feed.read(), 5)
                        joined += [s.player_id for s in message.snapshots]
                    seat_views = [s.snapshot.snapshot.seats for s in message.snapshots if s.player_id == "zed"]
                    assert {v.seat: v.connected for v in seat_views[0]} == {1: True, 2: False, 3: False}
                    watch = stub.WatchBursts(dealer_pb2.WatchRequest(table_id=actor.table_id, viewer_player_id="bob"))
                    await asyncio.wait_for(watch.read(), 5)
                    assert actor.table.connected == {1: True, 2: True, 3: False}
                    feed.cancel()
                    watch.cancel()
            assert actor.table.connected == {1: True, 2: True, 3: False}  # a stream's end is the monitor's to judge

    run(body)


def test_the_table_chips_gauge_counts_the_cash_tables_by_currency_and_no_tournament_chips() -> None:
    """``dealer_table_chips{currency}``: stacks + the pot in play at the cash tables, set against the
    wallet's table escrows; a tournament table's chips are not money and stay out of it."""

    def gauge(currency: str) -> float | None:
        return REGISTRY.get_sample_value("dealer_table_chips", {"currency": currency})

    async def body() -> None:
        async with room() as r:
            r.wallet.balances.update({"ann": 5000, "bob": 5000, "cat": 5000})
            cash = Harness(TableActor("cash-1", build(nl_config()), r.tables.deps), r.wallet, r.publisher, r.clock)
            play_config = nl_config(currency=common_pb2.CURRENCY_PLAY)
            play = Harness(TableActor("play-1", build(play_config), r.tables.deps), r.wallet, r.publisher, r.clock)
            r.tables.add(cash.actor)
            r.tables.add(play.actor)
            await open_table(r, 1, seats((1, "dan", 1500), (2, "eve", 1500)))
            await cash.sit("ann", 1000)
            await play.sit("cat", 700)
            r.tables.refresh_gauges()
            assert (gauge("cash"), gauge("play")) == (1000, 700)
            await cash.sit("bob", 500)
            await r.settle()
            assert cash.actor.table.in_hand and cash.actor.table.hand.pot_total > 0  # type: ignore[union-attr]
            r.tables.refresh_gauges()
            assert (gauge("cash"), gauge("play")) == (1500, 700)  # the blinds in the pot count
            assert gauge("cash") == r.wallet.escrow["cash-1"] and gauge("play") == r.wallet.escrow["play-1"]
            assert chips(r, 1) == 3000  # the tournament's chips: at its table, not in the gauge

    run(body)


def test_players_act_with_their_own_identity_and_may_not_buy_in_or_leave() -> None:
    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 500), (2, "bob", 500)))
            await r.settle()
            actor = r.actor(1)
            assert actor.table.in_hand
            seat = actor.table.legal_actions().seat  # type: ignore[union-attr]
            player = actor.table.seating.seats[seat].player
            act = dealer_pb2.ActRequest(table_id=actor.table_id, player_id=player, action=dealer_pb2.ACTION_TYPE_FOLD)
            await actor.submit(lambda: actor.act(act))
            await r.tick(2)
            assert r.hands_ended(1) and chips(r, 1) == 1000
            for refused in (
                lambda: actor.sit_down(dealer_pb2.SitDownRequest(player_id="cat", buy_in=100), "k"),
                lambda: actor.stand_up(dealer_pb2.SeatCommandRequest(player_id="ann"), "k"),
            ):
                with pytest.raises(DealerError) as info:
                    await actor.submit(refused)
                assert (
                    info.value.code == grpc.StatusCode.FAILED_PRECONDITION and info.value.reason == "TOURNAMENT_TABLE"
                )

    run(body)


def test_seats_during_a_hand_wait_for_its_end_versions_and_command_ids() -> None:
    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 800), (2, "bob", 800)))
            await r.settle()
            assert r.actor(1).table.in_hand
            seat = tt.SeatTournamentPlayerRequest(
                command_id="late-dan",
                tournament_id=TID,
                table=1,
                version=0,
                seat=tt.TournamentSeat(seat=4, player_id="dan", chips=800),
            )
            reply = await r.stub.SeatTournamentPlayer(seat)
            assert reply.deferred and reply.version == 1 and 4 not in {s.seat for s in reply.seats}
            again = await r.stub.SeatTournamentPlayer(seat)  # the same command id: nothing more
            assert again.version == 1
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await r.stub.AddTournamentChips(
                    tt.AddTournamentChipsRequest(
                        command_id="c1", tournament_id=TID, table=1, version=7, seat=1, chips=5
                    )
                )
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "version" in (
                info.value.details() or ""
            )
            await r.until(lambda: bool(r.hands_ended(1)))
            assert r.actor(1).table.seating.seats[4].player == "dan" and chips(r, 1) == 2400
            assert r.hands_ended(1)[0].hand_number == 1 and {s.seat for s in r.hands_ended(1)[0].starting} == {1, 2}
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await r.stub.SeatTournamentPlayer(
                    tt.SeatTournamentPlayerRequest(
                        command_id="twice",
                        tournament_id=TID,
                        table=1,
                        seat=tt.TournamentSeat(seat=5, player_id="dan", chips=1),
                    )
                )
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    run(body)


def test_a_level_set_during_a_hand_is_played_from_the_next_hand() -> None:
    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 5000), (2, "bob", 5000)))
            await r.settle()
            actor = r.actor(1)
            assert actor.table.in_hand and actor.table.hand is not None
            await r.stub.SetTournamentLevel(
                tt.SetTournamentLevelRequest(
                    command_id="lvl2",
                    tournament_id=TID,
                    table=1,
                    stakes=tt.TournamentStakes(level=2, small_blind=50, big_blind=100),
                )
            )
            assert actor.table.hand.stakes.big_blind == 20  # not mid-hand
            await r.until(lambda: actor.table.hand_number >= 2 and actor.table.in_hand)
            assert actor.table.hand is not None and actor.table.hand.stakes.big_blind == 100
            state = await r.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=TID, table=1))
            assert state.stakes.level == 2

    run(body)


def test_a_move_between_hands_carries_the_players_chips_to_the_other_table() -> None:
    """His Extra Time left goes with him, and stays used across a restart: rules/000 'Extra time',
    "That Extra Time is limited and displays as a clock when activated. It decreases as it is being
    used" — a move or a restart does not give it back."""

    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000), (3, "cat", 1000)), time_bank_seconds=20)
            await open_table(r, 2, seats((1, "dan", 1000), (2, "eve", 1000)), start_paused=True, time_bank_seconds=20)
            await r.settle()
            assert r.actor(1).table.in_hand
            r.actor(1).table.time_bank[3] = 6.5  # cat used 13.5 s of his 20
            reply = await r.stub.MoveTournamentPlayer(
                tt.MoveTournamentPlayerRequest(
                    command_id="mv-cat",
                    tournament_id=TID,
                    from_table=1,
                    from_seat=3,
                    to_table=2,
                    to_seat=5,
                    reason="balance",
                )
            )
            assert reply.deferred and r.actor(1).table.seat_of("cat") == 3  # not mid-hand
            await r.until(lambda: r.actor(2).table.seat_of("cat") is not None and not r.actor(1).moves_out)
            ended = [h for h in r.hands_ended(1) if h.hand_number == 1][0]
            cat_end = {s.player_id: s.chips for s in ended.ending}["cat"]
            assert r.actor(1).table.seat_of("cat") is None
            assert r.actor(2).table.seat_of("cat") == 5 and r.actor(2).table.stack(5) == cat_end
            assert chips(r, 1, 2) == 5000  # every chip on one of the two tables
            seated = [
                e.command_applied for e in r.events() if e.table == 2 and e.WhichOneof("event") == "command_applied"
            ]
            assert any(s.player_id == "cat" and s.chips == cat_end for s in seated[-1].seats)
            assert r.actor(2).table.time_bank == {1: 20.0, 2: 20.0, 5: 6.5}
            snap = [s for s in r.publisher.on(r.tables.deps.topics.snapshots) if s.table_id == r.actor(2).table_id][-1]
            again = TournamentTableActor.from_snapshot(snap.table_id, snap, r.tables.deps, r.tables.actors.get)
            assert again.table.time_bank == {1: 20.0, 2: 20.0, 5: 6.5}

    run(body)


def test_a_paused_table_finishes_its_hand_and_deals_no_new_one() -> None:
    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000)))
            await r.settle()
            actor = r.actor(1)
            assert actor.table.in_hand
            state = await r.stub.PauseTournamentTable(
                tt.PauseTournamentTableRequest(command_id="h4h", tournament_id=TID, table=1, reason="hand_for_hand")
            )
            assert state.paused and state.in_hand
            await r.until(lambda: actor.table.hand is None)
            await r.tick(5, 5)
            assert actor.table.hand_number == 1 and actor.table.hand is None
            await r.stub.ResumeTournamentTable(
                tt.PauseTournamentTableRequest(command_id="h4h-off", tournament_id=TID, table=1, reason="hand_for_hand")
            )
            await r.until(lambda: actor.table.hand_number == 2)

    run(body)


def test_a_restart_mid_hand_rolls_the_hand_back_and_deals_it_again() -> None:
    """rules/000: 'Each player's chip count will be reset to the amount at the beginning of the hand.'"""

    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1500), (3, "cat", 500)))
            await r.until(lambda: r.actor(1).table.hand_number == 2 and r.actor(1).table.in_hand)
            actor = r.actor(1)
            start = {s: st.stack for s, st in actor.table.seating.seats.items()}
            button = actor.table.plan.button if actor.table.plan else None
            seat = actor.table.legal_actions().seat  # type: ignore[union-attr]
            player = actor.table.seating.seats[seat].player
            act = dealer_pb2.ActRequest(table_id=actor.table_id, player_id=player, action=dealer_pb2.ACTION_TYPE_CALL)
            await actor.submit(lambda: actor.act(act))  # chips in the pot when the dealer dies
            snap = r.publisher.on(r.tables.deps.topics.snapshots)[-1]
            assert snap.hand_in_progress and snap.HasField("tournament")

            # a new dealer process: the same snapshot, fresh tables
            clock = ManualClock(r.clock.now() + 30)
            publisher, wallet = FakePublisher(), FakeWallet()
            tables = Tables(Deps(wallet, publisher, FakeChecker(), clock=clock))
            again = TournamentTableActor.from_snapshot(actor.table_id, snap, tables.deps, tables.actors.get)
            assert {s: st.stack for s, st in again.table.seating.seats.items()} == start
            assert not any(again.table.connected.values())  # each is connected again once his client rejoins
            await again.recover(close=False)
            tables.add(again)
            for _ in range(60):
                await asyncio.sleep(0)
            rolled = [
                e.hand_ended for e in publisher.on(tables.deps.topics.tournament_tables) if e.hand_ended.rolled_back
            ]
            assert len(rolled) == 1 and rolled[0].hand_number == 2
            assert {s.seat: s.chips for s in rolled[0].ending} == start
            assert again.table.in_hand and again.table.hand_number == 2  # the same hand, dealt again
            assert (again.table.plan.button if again.table.plan else None) == button
            assert again.table.chips_on_table() == 3000
            assert not wallet.calls and not wallet.reconciles  # no escrow: nothing to reconcile after a restore
            await tables.stop()

    run(body)


async def restarted(r: Room, snaps: dict[str, dealer_pb2.TableSnapshot]) -> tuple[Tables, FakePublisher]:
    """A new dealer process restoring ``snaps`` (table id -> snapshot), as server.restore_tables does."""
    publisher = FakePublisher()
    tables = Tables(Deps(FakeWallet(), publisher, FakeChecker(), clock=ManualClock(r.clock.now() + 30)))
    for table_id, snap in sorted(snaps.items()):
        actor = TournamentTableActor.from_snapshot(table_id, snap, tables.deps, tables.actors.get)
        await actor.recover(close=False)
        tables.add(actor)
    for _ in range(100):
        await asyncio.sleep(0)
    return tables, publisher


def latest(
    r: Room, table_id: str, where: Callable[[dealer_pb2.TableSnapshot], bool] = lambda s: True
) -> dealer_pb2.TableSnapshot:
    return [s for s in r.publisher.on(r.tables.deps.topics.snapshots) if s.table_id == table_id and where(s)][-1]


@pytest.mark.parametrize("arrived", [False, True])
def test_a_crash_while_a_moved_player_is_between_tables_loses_no_chip_and_seats_him_once(arrived: bool) -> None:
    """The source wrote the move (the player and his chips in ``moves_out``); the dealer died before
    the target took him (``arrived`` False) or before the source forgot the move (True)."""

    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000), (3, "cat", 1000)), start_paused=True)
            await open_table(r, 2, seats((1, "dan", 1000), (2, "eve", 1000)), start_paused=True)
            await r.stub.MoveTournamentPlayer(
                tt.MoveTournamentPlayerRequest(
                    command_id="mv", tournament_id=TID, from_table=1, from_seat=3, to_table=2, to_seat=4, reason="break"
                )
            )
            await r.until(lambda: not r.actor(1).moves_out)
            one, two = r.actor(1).table_id, r.actor(2).table_id
            in_transit = latest(r, one, lambda s: bool(s.tournament.moves_out))
            target = (
                latest(r, two) if arrived else latest(r, two, lambda s: not any(x.player_id == "cat" for x in s.seats))
            )
            tables, _ = await restarted(r, {one: in_transit, two: target})
            for _ in range(50):
                await asyncio.sleep(0)
            a, b = tables.actors[one], tables.actors[two]
            assert isinstance(a, TournamentTableActor) and isinstance(b, TournamentTableActor)
            assert not a.moves_out and a.table.seat_of("cat") is None
            assert b.table.seat_of("cat") == 4 and b.table.stack(4) == 1000
            assert a.table.chips_on_table() + b.table.chips_on_table() == 5000
            await tables.stop()

    run(body)


def test_removals_chips_and_closing_between_hands() -> None:
    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000), (3, "cat", 1000)), start_paused=True)
            added = await r.stub.AddTournamentChips(
                tt.AddTournamentChipsRequest(
                    command_id="rebuy", tournament_id=TID, table=1, version=0, seat=2, chips=1500
                )
            )
            assert {s.player_id: s.chips for s in added.seats}["bob"] == 2500
            removed = await r.stub.RemoveTournamentPlayer(
                tt.RemoveTournamentPlayerRequest(
                    command_id="out", tournament_id=TID, table=1, version=added.version, seat=3
                )
            )
            assert removed.removed_chips == 1000 and {s.seat for s in removed.seats} == {1, 2}
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await r.stub.RemoveTournamentPlayer(
                    tt.RemoveTournamentPlayerRequest(command_id="out-again", tournament_id=TID, table=1, seat=3)
                )
            assert info.value.code() == grpc.StatusCode.NOT_FOUND
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await r.stub.SeatTournamentPlayer(
                    tt.SeatTournamentPlayerRequest(
                        command_id="bad",
                        tournament_id=TID,
                        table=1,
                        seat=tt.TournamentSeat(seat=9, player_id="x", chips=5),
                    )
                )
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            for bank in (-1.0, float("nan"), 1e9):  # a moved player's Extra Time left, out of range
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    await r.stub.SeatTournamentPlayer(
                        tt.SeatTournamentPlayerRequest(
                            command_id=f"bad-bank-{bank}",
                            tournament_id=TID,
                            table=1,
                            seat=tt.TournamentSeat(seat=4, player_id="x", chips=5, time_bank_left=bank),
                        )
                    )
                assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "time_bank_left" in (
                    info.value.details() or ""
                )
            assert 4 not in r.actor(1).table.seating.seats  # nothing changed
            closed = await r.stub.CloseTournamentTable(
                tt.CloseTournamentTableRequest(command_id="done", tournament_id=TID, table=1)
            )
            assert closed.closed and not closed.seats
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await r.stub.PauseTournamentTable(
                    tt.PauseTournamentTableRequest(command_id="p", tournament_id=TID, table=1)
                )
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            applied = [e.command_applied for e in r.events() if e.WhichOneof("event") == "command_applied"]
            assert [a.version for a in applied] == [0, 1, 2, 3] and applied[-1].closed

    run(body)


def test_a_table_the_tournament_clocks_deals_its_deck_and_the_actions_replay_to_the_same_stacks() -> None:
    """deal_on_request: no hand until DealTournamentHand; the hand is dealt from the tournament's
    deck, and the core's own tournament table, dealt that deck and given the reported actions,
    ends with the dealer's stacks (the rules core decides both)."""

    async def body() -> None:
        async with room() as r:
            players = seats((1, "ann", 1000), (2, "bob", 700), (4, "cat", 1300))
            await open_table(r, 1, players, deal_on_request=True)
            await r.tick(5, 3)
            actor = r.actor(1)
            assert actor.table.hand_number == 0  # nobody asked
            deck = [str(c) for c in shuffled_deck(random.Random(7))]
            await r.stub.DealTournamentHand(
                tt.DealTournamentHandRequest(command_id="d1", tournament_id=TID, table=1, hand_number=1, deck=deck)
            )
            await r.settle()
            assert actor.table.in_hand and actor.table.hand_number == 1
            seat = actor.table.legal_actions().seat  # type: ignore[union-attr]
            player = actor.table.seating.seats[seat].player
            act = dealer_pb2.ActRequest(table_id=actor.table_id, player_id=player, action=dealer_pb2.ACTION_TYPE_CALL)
            await actor.submit(lambda: actor.act(act))
            await r.until(lambda: bool(r.hands_ended(1)))
            ended = r.hands_ended(1)[0]
            assert ended.actions and ended.actions[0].kind == "CALL"
            await r.tick(5, 3)
            assert actor.table.hand_number == 1 and actor.table.hand is None  # waits for hand 2
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await r.stub.DealTournamentHand(
                    tt.DealTournamentHandRequest(command_id="d1b", tournament_id=TID, table=1, hand_number=1, deck=deck)
                )
            assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION

            core = Table(
                TableSettings(Game.HOLDEM, Structure.NO_LIMIT, GameKind.TOURNAMENT, seat_count=6, action_seconds=2),
                Stakes.blinds(10, 20),
            )
            for s in players:
                core.seat_tournament_player(s.seat, s.player_id, s.chips)
            core.start_hand([Card.parse(c) for c in deck])
            for a in ended.actions:
                core.act(a.seat, ActionKind[a.kind], a.amount or None, discards=[Card.parse(c) for c in a.discards])
            record = core.finish()
            assert record.finishing_stacks == {s.seat: s.chips for s in ended.ending}

    run(body)


async def heads_up_dealt_on_request(r: Room) -> list[str]:
    """Table 1 (ann and bob, dealt on request) in its hand 1, dealt with the returned deck."""
    await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000)), deal_on_request=True)
    deck = [str(c) for c in shuffled_deck(random.Random(3))]
    await r.stub.DealTournamentHand(
        tt.DealTournamentHandRequest(command_id="d1", tournament_id=TID, table=1, hand_number=1, deck=deck)
    )
    await r.settle()
    return deck


def test_a_rolled_back_hand_of_a_clocked_table_waits_for_its_deal_again() -> None:
    async def body() -> None:
        async with room() as r:
            await heads_up_dealt_on_request(r)
            actor = r.actor(1)
            assert actor.table.in_hand
            snap = latest(r, actor.table_id)
            assert snap.hand_in_progress
            tables, publisher = await restarted(r, {actor.table_id: snap})
            again = tables.actors[actor.table_id]
            assert isinstance(again, TournamentTableActor)
            assert again.table.hand is None and again.table.hand_number == 0 and not again.deals
            rolled = [
                e.hand_ended for e in publisher.on(tables.deps.topics.tournament_tables) if e.hand_ended.rolled_back
            ]
            assert [h.hand_number for h in rolled] == [1]
            await tables.stop()

    run(body)


def test_seats_wait_while_a_rolled_back_hand_waits_to_be_dealt_again_and_a_close_does_not() -> None:
    """rules/000: "the hands in progress at every table will be restored by rolling back these
    hands" — dealt again to the same players, as the tournament's core deals it: a player moved here
    before the restart and arriving after it waits for the end of that hand, as during a hand (the
    core seated him during the hand, not dealt in), across a second restart too; chips (an add-on)
    and a close are no new player and apply at once, as in the core. Before the fix the dealer
    seated him before the deal and dealt him in (a stress run of Omaha Hi/Lo events: the core and
    the dealer dealt different seats)."""

    async def body() -> None:
        async with room() as r:
            deck = await heads_up_dealt_on_request(r)
            table_id = r.actor(1).table_id
            tables, _ = await restarted(r, {table_id: latest(r, table_id)})
            again = tables.actors[table_id]
            assert isinstance(again, TournamentTableActor)
            arrival = tt.TournamentTableCommand(
                command_id="cat:arrive",
                seat=tt.SeatTournamentPlayerRequest(seat=tt.TournamentSeat(seat=3, player_id="cat", chips=900)),
            )
            state = await again.submit(lambda: again.arrive(arrival))
            assert state.deferred and 3 not in again.table.seating.seats
            add_on = tt.TournamentTableCommand(
                command_id="ann:add-on", add_chips=tt.AddTournamentChipsRequest(seat=1, chips=500)
            )  # chips are the core's at once between hands: the hand dealt again starts with them
            state = await again.submit(lambda: again.tournament_command(add_on, 0))
            assert not state.deferred and again.table.seating.seats[1].stack == 1500
            snaps = [s for s in tables.deps.publisher.on(tables.deps.topics.snapshots) if s.table_id == table_id]  # type: ignore[attr-defined]
            await tables.stop()
            tables, _ = await restarted(r, {table_id: snaps[-1]})  # killed again before the deal
            third = tables.actors[table_id]
            assert isinstance(third, TournamentTableActor) and 3 not in third.table.seating.seats
            dan = tt.TournamentTableCommand(
                command_id="dan:arrive",
                seat=tt.SeatTournamentPlayerRequest(seat=tt.TournamentSeat(seat=4, player_id="dan", chips=800)),
            )
            assert (await third.submit(lambda: third.arrive(dan))).deferred  # still waiting for that deal
            await third.submit(
                lambda: third.deal_hand(
                    tt.DealTournamentHandRequest(
                        command_id="d1-again", tournament_id=TID, table=1, hand_number=1, deck=deck
                    )
                )
            )
            for _ in range(200):
                await asyncio.sleep(0)
            assert third.table.plan is not None and third.table.plan.dealt == (1, 2)  # the same players
            hand = third.table.hand
            assert hand is not None and dict(zip(hand.seats, hand.starting_stacks, strict=True)) == {1: 1500, 2: 1000}
            clock = tables.deps.clock
            for _ in range(400):  # nobody acts: the hand ends by the timeout rule, then he sits down
                if {3, 4} <= set(third.table.seating.seats):
                    break
                clock.advance(1.0)  # type: ignore[attr-defined]
                for _ in range(20):
                    await asyncio.sleep(0)
            assert third.table.seating.seats[3].player == "cat" and third.table.seating.seats[4].player == "dan"
            assert third.table.hand_number == 1
            await tables.stop()

            tables, _ = await restarted(r, {table_id: snaps[-1]})  # the same wait, and the tournament is over
            fourth = tables.actors[table_id]
            assert isinstance(fourth, TournamentTableActor)
            close = tt.TournamentTableCommand(command_id="close", close=tt.CloseTournamentTableRequest())
            closed = await fourth.submit(lambda: fourth.tournament_command(close, 0))
            assert closed.closed and not closed.deferred
            await tables.stop()

    run(body)


def test_a_move_between_hands_is_answered_once_the_player_is_at_the_other_table() -> None:
    """The tournament's next command at the other table (a deal) must find him seated there."""

    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000), (3, "cat", 1000)), deal_on_request=True)
            await open_table(r, 2, seats((1, "dan", 1000), (2, "eve", 1000)), deal_on_request=True)
            target = r.actor(2)
            arrive = target.arrive

            async def slow_arrival(arrival: tt.TournamentTableCommand) -> tt.TournamentTableState:
                await asyncio.sleep(0.3)  # the other table busy with something else for a moment
                return await arrive(arrival)

            target.arrive = slow_arrival  # type: ignore[method-assign]
            reply = await r.stub.MoveTournamentPlayer(
                tt.MoveTournamentPlayerRequest(
                    command_id="mv",
                    tournament_id=TID,
                    from_table=1,
                    from_seat=3,
                    to_table=2,
                    to_seat=3,
                    reason="balance",
                )
            )
            assert not reply.deferred
            assert r.actor(2).table.seat_of("cat") == 3 and r.actor(2).table.stack(3) == 1000
            assert r.actor(1).table.seat_of("cat") is None and not r.actor(1).moves_out

    run(body)


def test_a_deal_is_played_at_its_own_stakes_and_bad_stakes_are_refused() -> None:
    """A level that began with the tournament's deal is that hand's: the deal carries its stakes, the
    table plays the hand at them, and the SetTournamentLevel that follows changes nothing more.
    Stakes the variant cannot play are INVALID_ARGUMENT, and nothing is kept."""

    async def body() -> None:
        async with room() as r:
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000)), deal_on_request=True)
            actor = r.actor(1)
            deck = [str(c) for c in shuffled_deck(random.Random(5))]
            bad = tt.TournamentStakes(level=2, small_blind=-5, big_blind=40)
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await r.stub.DealTournamentHand(
                    tt.DealTournamentHandRequest(
                        command_id="d0", tournament_id=TID, table=1, hand_number=1, deck=deck, stakes=bad
                    )
                )
            assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert not actor.deals and not actor.table.in_hand
            level2 = tt.TournamentStakes(level=2, small_blind=20, big_blind=40)
            await r.stub.DealTournamentHand(
                tt.DealTournamentHandRequest(
                    command_id="d1", tournament_id=TID, table=1, hand_number=1, deck=deck, stakes=level2
                )
            )
            await r.settle()
            assert actor.table.in_hand and actor.table.stakes.big_blind == 40
            assert actor.tournament_state().stakes == level2
            await r.stub.SetTournamentLevel(
                tt.SetTournamentLevelRequest(command_id="l2", tournament_id=TID, table=1, stakes=level2)
            )
            assert actor.table.hand is not None and actor.table.hand.stakes.big_blind == 40
            assert actor.wire_stakes == level2  # and the next hand's too (the level it announced)

    run(body)


def test_a_replica_that_lost_the_table_publishes_none_of_its_tournament_events() -> None:
    """Issue 16: a dealer that lost a table "must not be able to deal it, move its money or publish
    its records any more". A tournament table's events (hands ended, commands applied) go out in the
    Kafka transaction of the table's partition with the snapshot that no longer holds them: when
    the replica's commits are refused (another replica took the partition), none of them is read.
    Before, the outbox was sent outside the transaction once the hand's commit had failed, so a
    paused replica waking up could tell the tournament of a hand its new owner had rolled back."""

    async def body() -> None:
        async with room(transactions=True) as r:
            writers = r.tables.deps.writers
            assert isinstance(writers, FencedWriters)
            topics = r.tables.deps.topics
            await open_table(r, 1, seats((1, "ann", 1000), (2, "bob", 1000), (3, "cat", 1000)))
            await r.until(lambda: len(r.hands_ended(1)) >= 1)
            hand_commits = [out for _, out in writers.commits if any(p.topic == topics.records for p in out)]
            assert hand_commits and [p.topic for p in hand_commits[0]] == [
                topics.records,
                topics.tournament_tables,
                topics.snapshots,
            ]
            assert not hand_commits[0][-1].payload.tournament.outbox  # in the transaction, not pending in it
            events = [p for p in r.publisher.sent if p.topic == topics.tournament_tables]
            assert events == [p for _, out in writers.commits for p in out if p.topic == topics.tournament_tables]

            writers.fenced = True  # another replica claimed the partition; this one runs on for a moment
            heard = len(r.events())
            actor = r.actor(1)
            played = actor.hands_played
            await r.until(lambda: actor.hands_played > played and actor.unpublished is not None)
            await r.stub.PauseTournamentTable(
                tt.PauseTournamentTableRequest(command_id="p", tournament_id=TID, table=1)
            )
            await r.tick(5, 3)
            assert len(r.events()) == heard  # the hand it ended and the pause it applied: neither read
            assert [e.WhichOneof("event") for e in actor.outbox] == ["hand_ended", "command_applied"]
            kept = [e.sequence for e in actor.outbox]

            # a commit that fails, then passes (the broker away a moment): each event sent once, in order
            writers.fenced = False
            await r.until(lambda: not actor.outbox and actor.unpublished is None)
            assert [e.sequence for e in r.events()[heard:]] == kept

    run(body)
