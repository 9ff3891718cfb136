"""A tournament's tables on a real dealer process (mutual TLS, the real Kafka broker): the
tournament service's commands (tournament_tables.proto) as the ``tournament`` identity, players
acting as the gateway passes them on, hands ended on ``cardroom.tournament.tables`` keyed by
tournament id, and a kill -9 of the dealer in the middle of a hand.

rules/000 'Tournament Rules': "In the event of a server crash, the hands in progress at every table
will be restored by rolling back these hands. Each player's chip count will be reset to the amount
at the beginning of the hand." 'Disconnects': a player who is not there is still dealt in and his
hand is checked or folded when his time runs out.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import grpc
import pytest

from cardroom.core import ids
from cardroom.core.engine import Stakes
from cardroom.v1 import dealer_pb2 as d, dealer_pb2_grpc, tournament_tables_pb2 as tt, tournament_tables_pb2_grpc
from tests.ports import free_port
from tests.services.dealer_fixtures import create_topics, play_until, read_topic, wait_for
from tests.services.procs import ServiceProcess, secure_channel, tls_files
from tournament.dealer_tables import DealerTables, TableShape
from tournament.tables import HandEnded

pytestmark = pytest.mark.slow

BLINDS = tt.TournamentStakes(level=1, small_blind=10, big_blind=20)


@dataclass
class Room:
    dealer: ServiceProcess
    env: dict[str, str]
    topic: str
    bootstrap: str
    tid: str
    channels: list[grpc.Channel]

    def tables(self) -> tournament_tables_pb2_grpc.TournamentTablesStub:
        channel = secure_channel(self.dealer.address, "tournament")
        self.channels.append(channel)
        return tournament_tables_pb2_grpc.TournamentTablesStub(channel)

    def players(self) -> dealer_pb2_grpc.DealerStub:
        """The dealer as the gateway calls it for players (their own ids, from their tokens)."""
        channel = secure_channel(self.dealer.address, "gateway")
        self.channels.append(channel)
        return dealer_pb2_grpc.DealerStub(channel)

    def events(self, linger_ms: int = 1000) -> list[tt.TournamentTableEvent]:
        return [
            e
            for envelope, e in read_topic(self.bootstrap, self.topic, tt.TournamentTableEvent, linger_ms)
            if envelope.key == self.tid
        ]

    def hands(self, table: int, linger_ms: int = 1000) -> list[tt.TournamentHandEnded]:
        return [e.hand_ended for e in self.events(linger_ms) if e.table == table and e.HasField("hand_ended")]

    def restart(self) -> None:
        self.dealer.kill()  # kill -9
        old = self.dealer
        self.dealer = ServiceProcess(
            "dealer", self.env, grpc_port=old.grpc_port, metrics_port=old.metrics_port, data_dir=old.data_dir, tls=True
        ).start()


@pytest.fixture(scope="module")
def room(kafka) -> Iterator[Room]:
    run = uuid.uuid4().hex[:8]
    topics = {
        kind: f"test.{kind}.{run}"
        for kind in ("events", "records", "settled", "snapshots", "connections", "tournament_tables")
    }
    create_topics(kafka.bootstrap, topics)
    env = {
        "KAFKA_BOOTSTRAP": kafka.bootstrap,
        "WALLET_ADDR": f"127.0.0.1:{free_port()}",  # nothing there: a tournament table never calls the wallet
        "EVALUATOR_ADDR": "off",
        "CONNECTION_MONITOR_ADDR": "off",
        "DEALER_CONNECTION_TOPIC": topics["connections"],
        "DEALER_EVENTS_TOPIC": topics["events"],
        "DEALER_RECORDS_TOPIC": topics["records"],
        "DEALER_SETTLED_TOPIC": topics["settled"],
        "DEALER_SNAPSHOTS_TOPIC": topics["snapshots"],
        "DEALER_TOURNAMENT_TABLES_TOPIC": topics["tournament_tables"],
    }
    dealer = ServiceProcess("dealer", env, tls=True).start()
    r = Room(dealer, env, topics["tournament_tables"], kafka.bootstrap, f"sng-{run}", [])
    try:
        yield r
    finally:
        for channel in r.channels:
            channel.close()
        r.dealer.stop()


def chips_of(state: tt.TournamentTableState) -> dict[str, int]:
    """Each player's stack (as at the start of a hand in progress: the pot is still theirs)."""
    return {s.player_id: s.chips for s in state.seats}


def get(stub: tournament_tables_pb2_grpc.TournamentTablesStub, tid: str, table: int) -> tt.TournamentTableState:
    return stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=table), timeout=10)


def test_tournament_tables_on_the_dealer(room: Room) -> None:
    tables, players, tid = room.tables(), room.players(), room.tid
    rng = random.Random(15)

    def open_table(number: int, seated: list[tuple[int, str]], clock: float) -> tt.TournamentTableState:
        return tables.OpenTournamentTable(
            tt.OpenTournamentTableRequest(
                command_id=f"open-{number}",
                tournament_id=tid,
                table=number,
                variant="NT",
                seat_count=6,
                stakes=BLINDS,
                seats=[tt.TournamentSeat(seat=s, player_id=p, chips=1000) for s, p in seated],
                action_seconds=clock,
            ),
            timeout=10,
        )

    # Only the tournament service runs its tables.
    with secure_channel(room.dealer.address, "operator") as channel, pytest.raises(grpc.RpcError) as refused:
        tournament_tables_pb2_grpc.TournamentTablesStub(channel).GetTournamentTable(
            tt.GetTournamentTableRequest(tournament_id=tid, table=1), timeout=10
        )
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED

    one = open_table(1, [(1, "ann"), (2, "bob"), (3, "cat")], 2.0)
    two = open_table(2, [(1, "dan"), (2, "eve")], 1.0)
    assert one.version == 0 and len(one.seats) == 3 and len(two.seats) == 2
    assert open_table(1, [(1, "ann"), (2, "bob"), (3, "cat")], 2.0).table == 1  # the same command again: the table
    total = 5000

    # Nobody connected at table 1: its hands are played by the timeout rule.
    wait_for(lambda: len(room.hands(1, 300)) >= 2, timeout=60, what="two hands by timeouts at table 1")
    for hand in room.hands(1):
        assert sum(s.chips for s in hand.starting) == sum(s.chips for s in hand.ending)
    # Players acting at table 2, through the dealer's Act as the gateway passes it on.
    table_two = ids.tournament_table_id(tid, 2)
    play_until(players, table_two, 2, rng, timeout=60)
    with pytest.raises(grpc.RpcError) as buy_in:
        players.SitDown(d.SitDownRequest(table_id=table_two, player_id="zed", buy_in=500, request_id="z"), timeout=10)
    assert buy_in.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    # A level, from the next hand.
    level = tables.SetTournamentLevel(
        tt.SetTournamentLevelRequest(
            command_id="level-2",
            tournament_id=tid,
            table=1,
            stakes=tt.TournamentStakes(level=2, small_blind=25, big_blind=50),
        ),
        timeout=10,
    )
    assert level.version >= 1
    after = len(room.hands(1, 300))
    wait_for(lambda: len(room.hands(1, 300)) >= after + 2, timeout=60, what="hands at the new level")
    records = read_topic(room.bootstrap, room.env["DEALER_RECORDS_TOPIC"], d.HandRecordPublished, 500)
    last = [r for _, r in records if r.table_id == ids.tournament_table_id(tid, 1)][-1]
    assert "blinds_or_straddles = [25, 50" in last.phh or "blinds_or_straddles = [50, 25" in last.phh, last.phh

    # A move between hands: cat goes to table 2 with his chips.
    reply = tables.MoveTournamentPlayer(
        tt.MoveTournamentPlayerRequest(
            command_id="move-cat", tournament_id=tid, from_table=1, from_seat=3, to_table=2, to_seat=4, reason="balance"
        ),
        timeout=10,
    )
    wait_for(lambda: "cat" in chips_of(get(tables, tid, 2)), timeout=30, what="cat at table 2")
    assert "cat" not in chips_of(get(tables, tid, 1))
    assert sum(chips_of(get(tables, tid, 1)).values()) + sum(chips_of(get(tables, tid, 2)).values()) == total
    assert reply.table == 1

    # Paused: the hand ends, no new one; resumed: it deals again.
    tables.PauseTournamentTable(
        tt.PauseTournamentTableRequest(command_id="break", tournament_id=tid, table=2, reason="break"), timeout=10
    )
    wait_for(lambda: not get(tables, tid, 2).in_hand, timeout=60, what="table 2 between hands")
    played = get(tables, tid, 2).hands_played
    time.sleep(3)
    assert get(tables, tid, 2).hands_played == played and not get(tables, tid, 2).in_hand
    tables.ResumeTournamentTable(
        tt.PauseTournamentTableRequest(command_id="break-end", tournament_id=tid, table=2, reason="break"), timeout=10
    )
    wait_for(lambda: get(tables, tid, 2).hands_played > played, timeout=60, what="table 2 dealing again")

    # kill -9 in the middle of a hand at table 1 (after a voluntary action: chips in the pot).
    table_one = ids.tournament_table_id(tid, 1)
    current = players.GetTable(d.GetTableRequest(table_id=table_one), timeout=5).hand_number
    mid = play_until(players, table_one, 0, rng, stop_mid_hand=current + 1, timeout=60)
    assert mid.in_hand and mid.pot > 0
    start = chips_of(get(tables, tid, 1))
    interrupted = mid.hand_number
    room.restart()
    tables, players = room.tables(), room.players()

    def rolled() -> list[tt.TournamentHandEnded]:
        return [h for h in room.hands(1, 300) if h.rolled_back]

    wait_for(rolled, timeout=30, what="the rolled-back hand's event")
    back = rolled()
    assert [h.hand_number for h in back] == [interrupted]
    assert {s.player_id: s.chips for s in back[0].ending} == start  # every stack as at the hand's start
    # ... and the same hand dealt again, from those stacks
    wait_for(
        lambda: [h for h in room.hands(1, 300) if h.hand_number == interrupted and not h.rolled_back],
        timeout=60,
        what="the hand dealt again and ended",
    )
    again = [h for h in room.hands(1) if h.hand_number == interrupted and not h.rolled_back]
    assert len(again) == 1 and {s.player_id: s.chips for s in again[0].starting} == start
    assert sum(chips_of(get(tables, tid, 1)).values()) + sum(chips_of(get(tables, tid, 2)).values()) == total
    assert get(tables, tid, 1).version >= level.version  # the tournament's view survives the restart


def test_the_tournament_services_dealer_port_drives_the_tables_and_hears_their_hands(room: Room) -> None:
    """services/tournament/dealer_tables.py against the real dealer: the port's commands in order
    with the tournament's identity, hands heard back from Kafka, and a replay of the same commands
    (a tournament service rebuilt after a restart) applied by the dealer once."""
    tid = f"{room.tid}-port"
    shape = TableShape("NT", 6, 1.0)

    def commands(port: DealerTables) -> None:
        port.configure(tid, shape)
        port.open_table(tid, 1, {1: ("p1", 1000), 2: ("p2", 1000), 3: ("p3", 1000)}, Stakes.blinds(10, 20))
        port.open_table(tid, 2, {1: ("p4", 1000), 2: ("p5", 1000)}, Stakes.blinds(10, 20))
        port.release(tid)  # (the runner's flush, once the step is stored)

    def more(port: DealerTables) -> None:
        port.set_level(tid, 1, Stakes.blinds(25, 50))
        port.set_level(tid, 2, Stakes.blinds(25, 50))
        port.move_player(tid, 1, 3, 2, 4, "balance")
        port.pause(tid, 2, "break")
        port.resume(tid, 2, "break")
        port.release(tid)

    async def body() -> None:
        port = DealerTables(
            room.dealer.address,
            bootstrap=room.bootstrap,
            topic=room.topic,
            group=f"g-{tid}",
            tls=tls_files("tournament"),
        )
        port.start()
        sender = asyncio.create_task(port.run())
        heard: list[HandEnded] = []
        try:
            commands(port)
            await asyncio.wait_for(port.flush(), 30)
            assert (port.sent, port.refused) == (2, 0)

            async def hear(count: int) -> None:
                for _ in range(600):
                    heard.extend(h for h in port.hands_ended() if h.tournament_id == tid)
                    if len(heard) >= count:
                        return
                    await asyncio.sleep(0.1)
                raise AssertionError(f"heard {len(heard)} hands, not {count}")

            await hear(2)
            more(port)
            await asyncio.wait_for(port.flush(), 30)
            assert (port.sent, port.refused) == (7, 0)
            for _ in range(300):
                two = await port.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=2))
                if "p3" in chips_of(two):
                    break
                await asyncio.sleep(0.1)
            one = await port.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=1))
            assert "p3" in chips_of(two) and "p3" not in chips_of(one)
            assert one.stakes.big_blind == two.stakes.big_blind == 50
            await hear(len(heard) + 2)
            for hand in heard:
                assert sum(hand.starting.values()) == sum(hand.ending.values()) and hand.number >= 1

            # A service rebuilt from its store replays the same commands: the dealer applies none again.
            versions = (one.version, two.version)
            replay = DealerTables(room.dealer.address, bootstrap=None, tls=tls_files("tournament"))
            replaying = asyncio.create_task(replay.run())
            commands(replay)
            more(replay)
            await asyncio.wait_for(replay.flush(), 30)
            replaying.cancel()
            assert (replay.sent, replay.refused) == (7, 0)
            one = await port.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=1))
            two = await port.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=2))
            assert (one.version, two.version) == versions
            assert sum(chips_of(one).values()) + sum(chips_of(two).values()) == 5000
            await replay.close()

            port.close_all(tid)
            port.release(tid)
            await asyncio.wait_for(port.flush(), 30)
            for _ in range(300):
                one = await port.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=1))
                two = await port.stub.GetTournamentTable(tt.GetTournamentTableRequest(tournament_id=tid, table=2))
                if one.closed and two.closed:
                    break
                await asyncio.sleep(0.1)
            assert one.closed and two.closed and port.refused == 0
        finally:
            sender.cancel()
            await port.close()

    asyncio.run(body())
