"""Payments in flight, an unreachable wallet, the tables' contract, the lobby and the events outbox
(fast tier: the real house and store, a fake bank, a manual clock)."""

from __future__ import annotations

import grpc
import pytest

from cardroom.core.engine import Stakes
from cardroom.core.tournament import Status
from cardroom.runtime.errors import ServiceError
from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import Room, run_async, sng
from tests.fast.tournament.fakes import FakeBank
from tournament import lobby
from tournament.bank import Unavailable
from tournament.inprocess import ContractBroken, InProcessTables
from tournament.relay import EventRelay, event_type
from tournament.store import MoneyOp


class FlakyBank(FakeBank):
    """Takes the first ``ok`` transfers, then is unreachable (the outcome of the next is unknown)."""

    ok: int = 10**9

    async def transfer(self, op: MoneyOp) -> bool:
        if self.ok <= 0:
            raise Unavailable("wallet: gone")
        self.ok -= 1
        return await super().transfer(op)


@run_async
async def test_an_unreachable_wallet_mid_payment_is_finished_by_the_same_request_id(room: Room) -> None:
    bank = FlakyBank()
    room.bank = bank
    room.house.bank = bank
    room.fund("ann")
    await room.house.create(sng(players=3))
    bank.ok = 1  # the buy-in goes through, the fee does not
    with pytest.raises(ServiceError) as caught:
        await room.house.register("sng1", "ann", "r1")
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE
    assert "ann" not in room.house.runners["sng1"].t.entrants
    bank.ok = 10**9
    done = await room.house.register("sng1", "ann", "r1")
    assert not done["replayed"] and "ann" in room.house.runners["sng1"].t.entrants
    assert bank.balances["player_cash:ann:cash"] == 10_000 - 1100  # charged once


@run_async
async def test_a_restart_finishes_a_payment_that_was_in_flight(room: Room) -> None:
    bank = FlakyBank()
    room.bank = bank
    room.house.bank = bank
    room.fund("ann")
    await room.house.create(sng(players=3))
    bank.ok = 1
    with pytest.raises(ServiceError):
        await room.house.register("sng1", "ann", "r1")
    bank.ok = 10**9
    house = room.reopen()
    await house.recover()
    assert "ann" in house.runners["sng1"].t.entrants
    again = await house.register("sng1", "ann", "r1")
    assert again["replayed"] and bank.balances["player_cash:ann:cash"] == 10_000 - 1100


@run_async
async def test_a_payment_the_rules_no_longer_allow_after_a_restart_is_given_back(room: Room) -> None:
    bank = FlakyBank()
    room.bank = bank
    room.house.bank = bank
    room.fund("ann", "bob", "cat")
    await room.house.create(sng(players=2))
    await room.house.register("sng1", "ann", "a")
    bank.ok = 1
    with pytest.raises(ServiceError):
        await room.house.register("sng1", "bob", "b")  # paid the buy-in, then the wallet went away
    bank.ok = 10**9
    await room.house.register("sng1", "cat", "c")  # the Sit & Go fills up and starts
    house = room.reopen()
    await house.recover()
    assert "bob" not in house.runners["sng1"].t.entrants
    await house.pay_owed()
    assert bank.balances["player_cash:bob:cash"] == 10_000


def test_the_in_process_tables_refuse_what_the_contract_forbids() -> None:
    tables = InProcessTables()
    stakes = Stakes.blinds(10, 20)
    tables.open_table("t", 1, {1: ("ann", 1500), 2: ("bob", 1500)}, stakes)
    tables.open_table("t", 2, {1: ("cat", 1500)}, stakes)
    with pytest.raises(ContractBroken):
        tables.seat_player("t", 2, 2, "ann", 1500)  # seated twice
    with pytest.raises(ContractBroken):
        tables.move_player("t", 1, 5, 2, 3, "balance")  # nobody at seat 5
    with pytest.raises(ContractBroken):
        tables.move_player("t", 1, 1, 2, 1, "balance")  # seat taken
    tables.move_player("t", 1, 1, 2, 2, "balance")
    assert tables.seated("t") == {"ann": (2, 2), "bob": (1, 2), "cat": (2, 1)}
    tables.close_table("t", 1)
    with pytest.raises(ContractBroken):
        tables.seat_player("t", 1, 1, "dan", 1500)  # a closed table


@run_async
async def test_the_lobby_shows_the_running_tournament(room: Room) -> None:
    players = [f"p{i}" for i in range(6)]
    room.fund(*players)
    await room.house.create(sng(level_seconds=30))
    for i, p in enumerate(players):
        await room.house.register("sng1", p, f"r{i}")
    runner = room.house.runners["sng1"]
    await room.play("sng1", limit=3)
    info = lobby.info(runner, room.clock.now())
    assert info.status == pb.TOURNAMENT_STATUS_RUNNING and info.entrants == 6 and info.level == 1
    assert info.prize_pool == 6000 and info.prize_pool_final and sum(info.payouts) == 6000
    assert info.blinds.big_blind > 0 and 0 < info.seconds_to_next_level <= 30
    assert [t.table for t in info.tables] == [1] and info.chip_leader in players
    assert sum(s.chips for s in info.standings) == 6 * 1500
    assert abs(sum(s.icm_equity for s in info.standings) - 6000) < 1e-6


class Recorder:
    enabled = True

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, int, str]] = []

    async def publish(
        self, topic: str, *, type: str, key: str, sequence: int, payload: object, event_id: str | None = None
    ) -> None:
        self.sent.append((type, key, sequence, event_id or ""))


@run_async
async def test_every_event_goes_out_once_keyed_by_tournament_in_order(room: Room) -> None:
    room.fund("ann", "bob")
    await room.house.create(sng(players=2))
    await room.house.register("sng1", "ann", "a")
    await room.house.register("sng1", "bob", "b")
    await room.play("sng1")
    recorder = Recorder()
    relay = EventRelay(room.house.store, recorder, "topic", 0.1)  # type: ignore[arg-type]
    while await relay.relay_once():
        pass
    assert await relay.relay_once() == 0
    seqs = [s for _, _, s, _ in recorder.sent]
    assert seqs == list(range(1, room.house.runners["sng1"].event_seq + 1))
    assert {k for _, k, _, _ in recorder.sent} == {"sng1"}
    assert recorder.sent[0][0] == "cardroom.tournament.registered.v1" and recorder.sent[-1][3] == f"sng1:{seqs[-1]}"
    assert event_type("PrizePoolFinal") == "cardroom.tournament.prize_pool_final.v1"
    assert room.house.runners["sng1"].t.status is Status.FINISHED
