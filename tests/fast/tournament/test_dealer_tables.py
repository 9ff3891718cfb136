"""Fast tier: the tournament service's port to the dealer's tables (services/tournament/dealer_tables.py)
without a dealer: the commands it queues (ids stable across a replay, the mirror's contract checks
first) and the hand results it hears (only the dealer's, each once even when the dealer sends it
again after a restart). Against a real dealer: tests/services/test_dealer_tournament_tables.py."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from cardroom.core.engine import Stakes
from cardroom.runtime.events import make_envelope
from cardroom.v1 import tournament_tables_pb2 as tt
from tournament.config import TournamentServiceConfig
from tournament.dealer_tables import DealerTables, TableShape
from tournament.inprocess import ContractBroken

TID = "sng-9"


@dataclass
class FakeRecord:
    key: bytes | None
    value: bytes | None


def record(event: tt.TournamentTableEvent, source: str = "dealer") -> FakeRecord:
    envelope = make_envelope(
        type="cardroom.dealer.tournament_table_event.v1", source=source, key=TID, sequence=event.sequence, payload=event
    )
    return FakeRecord(TID.encode(), envelope.SerializeToString())


def ended(sequence: int, number: int, rolled_back: bool = False) -> tt.TournamentTableEvent:
    stacks = [
        tt.TournamentSeat(seat=1, player_id="ann", chips=600),
        tt.TournamentSeat(seat=2, player_id="bob", chips=400),
    ]
    return tt.TournamentTableEvent(
        tournament_id=TID,
        table=1,
        sequence=sequence,
        hand_ended=tt.TournamentHandEnded(
            tournament_id=TID, table=1, hand_number=number, starting=stacks, ending=stacks, rolled_back=rolled_back
        ),
    )


def queued(port: DealerTables) -> list[tuple[str, str]]:
    port.release(TID)
    out = []
    while not port._queue.empty():
        method, request, _ = port._queue.get_nowait()
        out.append((method, request.command_id))
    return out


def commands(port: DealerTables) -> None:
    port.configure(TID, TableShape("NT", 6, 5.0))
    port.open_table(TID, 1, {1: ("ann", 500), 2: ("bob", 500)}, Stakes.blinds(10, 20))
    port.set_level(TID, 1, Stakes.blinds(20, 40))
    port.pause(TID, 1, "break")


def test_commands_are_queued_in_order_with_ids_a_replay_gives_again() -> None:
    async def body() -> None:
        first, replay = (DealerTables("127.0.0.1:1", bootstrap=None, tls=None) for _ in range(2))
        commands(first)
        commands(replay)
        sent = queued(first)
        assert sent == [
            ("OpenTournamentTable", f"{TID}:1"),
            ("SetTournamentLevel", f"{TID}:2"),
            ("PauseTournamentTable", f"{TID}:3"),
        ]
        assert queued(replay) == sent
        with pytest.raises(ContractBroken):  # the mirror refuses first: nothing is sent
            first.seat_player(TID, 1, 3, "ann", 100)
        assert queued(first) == []
        await first.close()
        await replay.close()

    asyncio.run(body())


def test_commands_wait_for_their_step_to_be_stored_and_a_replay_sends_only_the_unanswered() -> None:
    async def body() -> None:
        port = DealerTables("127.0.0.1:1", bootstrap=None, tls=None)
        commands(port)
        assert port._queue.empty()  # not stored yet: nothing goes out
        acked: list[tuple[str, int]] = []
        replay = DealerTables("127.0.0.1:1", bootstrap=None, tls=None)
        replay.skip = {TID: 2}  # the dealer answered the first two before the restart
        replay.on_acked = lambda tid, n: acked.append((tid, n))
        commands(replay)
        assert queued(replay) == [("PauseTournamentTable", f"{TID}:3")]
        await port.close()
        await replay.close()

    asyncio.run(body())


def test_a_player_is_placed_only_once_the_dealer_answered_the_command_that_seats_him() -> None:
    """The player's status names his table only once the dealer has him there: a client sent to a
    table the dealer has not opened yet found no table (NOT_FOUND) and stopped following it."""

    async def body() -> None:
        port = DealerTables("127.0.0.1:1", bootstrap=None, tls=None)
        port.configure(TID, TableShape("NT", 6, 5.0))
        port.open_table(TID, 1, {1: ("ann", 500), 2: ("bob", 500)}, Stakes.blinds(10, 20))
        port.open_table(TID, 2, {1: ("cat", 500), 2: ("dan", 500)}, Stakes.blinds(10, 20))
        assert port.placed(TID, "zed")  # not the port's to say: nobody it seats
        assert not port.placed(TID, "ann") and not port.placed(TID, "cat")
        port._answered[TID] = 1  # the dealer opened table 1
        assert port.placed(TID, "ann") and port.placed(TID, "bob") and not port.placed(TID, "cat")
        port._answered[TID] = 2
        port.move_player(TID, 2, 2, 1, 3, "balance")  # command 3
        assert port.placed(TID, "cat") and not port.placed(TID, "dan")
        replay = DealerTables("127.0.0.1:1", bootstrap=None, tls=None)
        replay.skip = {TID: 3}  # after a restart: answered before it
        replay.configure(TID, TableShape("NT", 6, 5.0))
        replay.open_table(TID, 1, {1: ("ann", 500), 2: ("bob", 500)}, Stakes.blinds(10, 20))
        replay.open_table(TID, 2, {1: ("cat", 500), 2: ("dan", 500)}, Stakes.blinds(10, 20))
        replay.move_player(TID, 2, 2, 1, 3, "balance")
        assert all(replay.placed(TID, p) for p in ("ann", "bob", "cat", "dan"))
        await port.close()
        await replay.close()

    asyncio.run(body())


def test_the_consumer_commits_a_hand_only_once_its_step_is_stored() -> None:
    """The tables topic is read in a consumer group (a restart reads on from its committed offsets,
    not from the start): a hand result heard is committed only after the house applied it and
    stored the step (``applied``), so a crash in between reads it again."""

    async def body() -> None:
        port = DealerTables("127.0.0.1:1", bootstrap=None, tls=None)
        port.apply_timeout = 0.05
        port._handle(record(ended(1, 1)))  # type: ignore[arg-type]
        with pytest.raises(TimeoutError):
            port._await_applied()  # heard, not applied: no commit
        heard = port.hands_ended()
        assert [h.number for h in heard] == [1]
        with pytest.raises(TimeoutError):
            port._await_applied()  # handed to the house, its step not stored yet
        port.applied()
        port._await_applied()  # stored: commit
        await port.close()

    asyncio.run(body())


def test_hand_results_are_the_dealers_heard_once() -> None:
    async def body() -> None:
        port = DealerTables("127.0.0.1:1", bootstrap=None, tls=None)
        port._handle(record(ended(1, 1)))
        port._handle(record(ended(1, 1)))  # published again after a dealer restart
        port._handle(record(ended(2, 2), source="attacker"))  # not the dealer's: ignored
        port._handle(FakeRecord(b"x", b"not an envelope"))
        port._handle(record(ended(3, 2, rolled_back=True)))
        heard = port.hands_ended()
        assert [(h.number, h.rolled_back) for h in heard] == [(1, False), (2, True)]
        assert heard[0].starting == {1: 600, 2: 400} and heard[0].tournament_id == TID and heard[0].table == 1
        assert port.hands_ended() == []
        await port.close()

    asyncio.run(body())


def test_the_dealers_tables_are_the_default_where_a_dealer_is_configured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOURNAMENT_TABLES", raising=False)
    monkeypatch.delenv("DEALER_ADDR", raising=False)
    assert TournamentServiceConfig.from_env().tables == "inprocess"
    monkeypatch.setenv("DEALER_ADDR", "dealer:20053")
    config = TournamentServiceConfig.from_env()
    assert (config.tables, config.dealer_addr, config.tables_topic) == (
        "dealer",
        "dealer:20053",
        "cardroom.tournament.tables",
    )
    monkeypatch.setenv("TOURNAMENT_TABLES", "inprocess")
    assert TournamentServiceConfig.from_env().tables == "inprocess"
    monkeypatch.setenv("TOURNAMENT_TABLES", "elsewhere")
    with pytest.raises(SystemExit):
        TournamentServiceConfig.from_env()


def test_extra_time_left_is_heard_from_the_dealer_and_carried_to_a_new_table() -> None:
    """rules/000 'Extra time': "That Extra Time is limited ... It decreases as it is being used": each
    hand's end says what every seat has left; a shoot-out's next-round table is opened with it."""
    from tournament.dealer_tables import hand_ended

    event = ended(1, 1).hand_ended
    event.ending[1].time_bank_left = 7.5  # bob used some; ann's seat says nothing (an older dealer)
    assert hand_ended(event).time_banks == {2: 7.5}

    async def body() -> None:
        port = DealerTables("127.0.0.1:1", bootstrap=None, tls=None)
        port.configure(TID, TableShape("NT", 6, 5.0, 30.0))
        port.open_table(TID, 3, {1: ("ann", 500), 2: ("bob", 500)}, Stakes.blinds(10, 20), 2, {2: 7.5})
        port.release(TID)
        method, request, _ = port._queue.get_nowait()
        assert method == "OpenTournamentTable"
        banks = {s.player_id: s.time_bank_left if s.HasField("time_bank_left") else None for s in request.seats}
        assert banks == {"ann": None, "bob": 7.5}  # ann: the table's full 30 s
        await port.close()

    asyncio.run(body())
