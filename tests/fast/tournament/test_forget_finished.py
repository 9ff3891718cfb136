"""A tournament over leaves the house once its retention window passed and all its money is paid
(services/tournament/forgotten.py): the periodic pass, the tables' maps and a restart no longer
carry it, and every answer about it (the lobby's, its results and payouts, each player's status,
the refusals, a request id answered before, its events) stays what it was. A card room running
sit & gos all day otherwise grows without bound (about 30 KB a finished sit & go, replayed at
every start)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest

from cardroom.runtime.errors import ServiceError
from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import Room, run_async, satellite_played, sng
from tests.fast.tournament.test_on_the_dealer import both, doubling
from tests.fast.tournament.test_service import Aborted, Context
from tournament import metrics
from tournament.config import TournamentServiceConfig
from tournament.runner import Runner
from tournament.service import TournamentService

WINDOW = 600.0  # TOURNAMENT_RETENTION_SECONDS's default
PLAYERS = [f"p{i}" for i in range(6)]


async def finished_sng(room: Room, tid: str = "sng1") -> None:
    """A six-player sit & go played to its end, every prize paid."""
    room.fund(*PLAYERS)
    await room.house.create(sng(tid))
    for i, p in enumerate(PLAYERS):
        await room.house.register(tid, p, f"r{i}")
    await room.play(tid)
    assert room.house.runners[tid].finished and room.house.store.money_pending_count(tid) == 0


async def answers(service: TournamentService, tid: str) -> dict[str, Any]:
    """Everything a client reads about ``tid``: the lobby's answer, the lists, each player's status."""
    ctx: Any = Context()
    info = await service.GetTournament(pb.GetTournamentRequest(tournament_id=tid), ctx)
    listed = await service.ListTournaments(pb.ListTournamentsRequest(status=info.status), ctx)  # its own status
    finished = await service.ListTournaments(pb.ListTournamentsRequest(status=pb.TOURNAMENT_STATUS_FINISHED), ctx)
    return {
        "info": info,
        "listed": [i for i in listed.tournaments if i.tournament_id == tid],
        "finished": [i.tournament_id for i in finished.tournaments],
        "players": [
            await service.GetPlayerStatus(pb.GetTournamentPlayerRequest(tournament_id=tid, player_id=p), ctx)
            for p in PLAYERS
        ],
    }


async def refusals(service: TournamentService, tid: str) -> list[tuple[grpc.StatusCode, str, str]]:
    """What the tournament answers to new commands: an entrant's and a stranger's, each refused."""
    ctx: Any = Context()
    entry = pb.TournamentEntryRequest
    calls = [
        service.Register(entry(tournament_id=tid, player_id="p1", request_id="again"), ctx),
        service.Register(entry(tournament_id=tid, player_id="zed", request_id="late"), ctx),
        service.Unregister(entry(tournament_id=tid, player_id="p1", request_id="u1"), ctx),
        service.Unregister(entry(tournament_id=tid, player_id="zed", request_id="u2"), ctx),
        service.Rebuy(pb.TournamentRebuyRequest(tournament_id=tid, player_id="p2", request_id="b1"), ctx),
        service.Rebuy(pb.TournamentRebuyRequest(tournament_id=tid, player_id="zed", request_id="b2"), ctx),
        service.AddOn(entry(tournament_id=tid, player_id="p3", request_id="a1"), ctx),
        service.AddOn(entry(tournament_id=tid, player_id="zed", request_id="a2"), ctx),
        service.CancelTournament(pb.CancelTournamentRequest(tournament_id=tid, request_id="c1"), ctx),
        service.GetPlayerStatus(pb.GetTournamentPlayerRequest(tournament_id=tid, player_id="zed"), ctx),
    ]
    out = []
    for call in calls:
        with pytest.raises(Aborted) as caught:
            await call
        out.append((caught.value.code, caught.value.reason, caught.value.details))
    return out


async def lobby_answer(house: Any, tid: str) -> pb.TournamentInfo:
    """GetTournament through the servicer."""
    return await TournamentService(house).GetTournament(pb.GetTournamentRequest(tournament_id=tid), Context())  # type: ignore[arg-type]


async def watched(service: TournamentService, tid: str, from_sequence: int = 1) -> list[tuple[int, str]]:
    stream = service.WatchTournament(
        pb.WatchTournamentRequest(tournament_id=tid, from_sequence=from_sequence),
        Context(),  # type: ignore[arg-type]
    )
    return [(m.sequence, m.type) async for m in stream]  # type: ignore[attr-defined]


@run_async
async def test_a_finished_sit_and_go_leaves_the_house_after_the_window_and_answers_the_same(room: Room) -> None:
    service = TournamentService(room.house)
    await finished_sng(room)
    before = await answers(service, "sng1")
    assert before["info"].status == pb.TOURNAMENT_STATUS_FINISHED and len(before["info"].results) == 6
    assert sum(r.prize for r in before["info"].results) == 6000 and before["finished"] == ["sng1"]
    refused_before = await refusals(service, "sng1")
    replay_before = await service.Register(
        pb.TournamentEntryRequest(tournament_id="sng1", player_id="p0", request_id="r0"),
        Context(),  # type: ignore[arg-type]
    )
    events_before = await watched(service, "sng1")
    finished_count = metrics.TOURNAMENTS.labels("finished", "sng")._value.get()

    room.clock.advance(WINDOW - 1)
    await room.house.step()
    assert "sng1" in room.house.runners  # within the window: still in the house
    room.clock.advance(1)
    await room.house.step()
    assert "sng1" not in room.house.runners  # forgotten: the periodic pass no longer visits it
    assert not [key for key in room.house.tables.tables if key[0] == "sng1"]  # nor do the tables' mirrors
    assert "sng1" not in room.house._last_tick and "sng1" not in metrics._seen

    assert await answers(service, "sng1") == before  # results, payouts, standings, status: unchanged
    assert await refusals(service, "sng1") == refused_before
    # the lobby a player polls (no status asked) lists what is in play: no longer this one, which its own
    # status still lists (above): the poll does not grow with every tournament ever run
    polled = await service.ListTournaments(pb.ListTournamentsRequest(), Context())  # type: ignore[arg-type]
    assert [i.tournament_id for i in polled.tournaments] == []
    replay_after = await service.Register(
        pb.TournamentEntryRequest(tournament_id="sng1", player_id="p0", request_id="r0"),
        Context(),  # type: ignore[arg-type]
    )
    assert replay_after == replay_before and replay_after.replayed
    assert await watched(service, "sng1") == events_before and await watched(service, "sng1", 5) == events_before[4:]
    assert metrics.TOURNAMENTS.labels("finished", "sng")._value.get() == finished_count  # still counted
    kept = room.house.store.forgotten_info("sng1")
    assert kept is not None and len(kept) < 2000  # the lobby's last answer: a few hundred bytes
    with pytest.raises(Aborted) as caught:  # no such tournament: NOT_FOUND as before
        await service.GetTournament(pb.GetTournamentRequest(tournament_id="nope"), Context())  # type: ignore[arg-type]
    assert caught.value.reason == "TOURNAMENT_NOT_FOUND"


@run_async
async def test_one_whose_prizes_are_not_paid_yet_stays_until_the_wallet_took_them(room: Room) -> None:
    """The money is never forgotten: a tournament over with an owed transfer stays in the house, past
    its window, until the wallet took every cent."""
    room.fund(*PLAYERS)
    await room.house.create(sng())
    for i, p in enumerate(PLAYERS):
        await room.house.register("sng1", p, f"r{i}")
    room.bank.down = True  # the prizes are owed when it ends
    await room.play("sng1")
    assert room.house.runners["sng1"].finished and room.house.store.money_pending_count("sng1") > 0
    room.clock.advance(2 * WINDOW)
    await room.house.step()
    room.clock.advance(2 * WINDOW)
    await room.house.step()
    assert "sng1" in room.house.runners
    room.bank.down = False
    assert await room.house.pay_owed() == 0
    await room.house.step()
    assert "sng1" not in room.house.runners
    prizes = {r.player_id: r.prize for r in (await lobby_answer(room.house, "sng1")).results}
    assert sum(prizes.values()) == 6000 and room.bank.total() == 0
    for p in PLAYERS:
        assert room.bank.balances[f"player_cash:{p}:cash"] == 10_000 - 1100 + prizes[p]


@run_async
async def test_a_restart_does_not_replay_a_forgotten_tournament_and_answers_it_the_same(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    await finished_sng(room)
    await room.house.create(sng("next", players=3))  # in registration: replayed at the restart
    room.fund("ann")
    await room.house.register("next", "ann", "n1")
    room.clock.advance(WINDOW)
    await room.house.step()
    before = await answers(TournamentService(room.house), "sng1")
    refused_before = await refusals(TournamentService(room.house), "sng1")

    replayed: list[str] = []
    replay = Runner.replay

    def counted(runner: Runner, logged: list[dict[str, Any]]) -> None:
        replayed.append(runner.tournament_id)
        replay(runner, logged)

    monkeypatch.setattr(Runner, "replay", counted)
    house = room.reopen()
    await house.recover()
    assert replayed == ["next"] and list(house.runners) == ["next"]
    assert house.is_forgotten("sng1") and house.forgotten_count() == 1
    service = TournamentService(house)
    assert await answers(service, "sng1") == before
    assert await refusals(service, "sng1") == refused_before
    # the lobby a player polls: what is in play; one over long ago when its status is asked for
    listed = await service.ListTournaments(pb.ListTournamentsRequest(), Context())  # type: ignore[arg-type]
    assert [(i.tournament_id, i.status) for i in listed.tournaments] == [("next", pb.TOURNAMENT_STATUS_REGISTRATION)]
    registering = await service.ListTournaments(
        pb.ListTournamentsRequest(status=pb.TOURNAMENT_STATUS_REGISTRATION),
        Context(),  # type: ignore[arg-type]
    )
    assert [i.tournament_id for i in registering.tournaments] == ["next"]
    # creating it again: the same settings are its answer, others are refused, as in the house
    ctx: Any = Context()
    assert await service.CreateTournament(sng(), ctx) == before["info"]
    with pytest.raises(Aborted) as caught:
        await service.CreateTournament(sng(buy_in=5), ctx)
    assert (caught.value.code, caught.value.reason) == (grpc.StatusCode.ALREADY_EXISTS, "TOURNAMENT_EXISTS")


@run_async
async def test_a_finished_tournament_within_the_window_is_replayed_and_forgotten_later(room: Room) -> None:
    """A restart before the window ends replays it (nothing was kept yet): it is forgotten a window
    after the restart."""
    await finished_sng(room)
    room.clock.advance(WINDOW / 2)
    await room.house.step()
    info = await lobby_answer(room.house, "sng1")
    house = room.reopen()
    await house.recover()
    assert house.runners["sng1"].finished
    room.clock.advance(WINDOW / 2)
    await house.step()
    assert "sng1" in house.runners
    room.clock.advance(WINDOW / 2)
    await house.step()
    assert "sng1" not in house.runners and await lobby_answer(house, "sng1") == info


@run_async
async def test_a_cancelled_tournament_is_forgotten_once_every_refund_is_paid(room: Room) -> None:
    room.fund("ann", "bob")
    await room.house.create(sng("mtt1", format=pb.TOURNAMENT_FORMAT_MTT, start_in_seconds=600, max_entrants=0))
    await room.house.register("mtt1", "ann", "a1")
    await room.house.register("mtt1", "bob", "b1")
    cancelled = await room.house.cancel("mtt1", "c1")
    await room.house.step()
    room.clock.advance(WINDOW)
    await room.house.step()
    assert "mtt1" in room.house.runners  # the refunds are owed: kept
    await room.house.pay_owed()
    info = await lobby_answer(room.house, "mtt1")
    assert info.status == pb.TOURNAMENT_STATUS_CANCELLED and info.cancellation_policy == "before_start"
    room.clock.advance(WINDOW)
    await room.house.step()
    assert "mtt1" not in room.house.runners
    assert await lobby_answer(room.house, "mtt1") == info
    assert await room.house.cancel("mtt1", "c1") == {**cancelled, "replayed": True}
    with pytest.raises(ServiceError) as caught:
        await room.house.cancel("mtt1", "c2")
    assert caught.value.reason == "TOURNAMENT_OVER" and caught.value.message == "tournament_id: mtt1 is cancelled"
    assert room.bank.balances["player_cash:ann:cash"] == 10_000


@run_async
async def test_a_satellite_stays_until_its_winners_are_registered_in_the_target(room: Room) -> None:
    """A satellite's seat winners go to the target event once their seats are paid: the satellite
    stays in the house until then; the target, open, is never forgotten."""
    room.house.retention_seconds = 0.0
    await satellite_played(room, list(PLAYERS))
    seats = sorted(r.player for r in room.house.runners["sat"].results if r.seat)
    await room.house.step()
    assert "sat" in room.house.runners  # its winners are not registered in the target yet
    for _ in range(20):
        room.clock.advance(0.1)
        for _ in range(10):
            await asyncio.sleep(0)
        await room.house.step()
        if "sat" not in room.house.runners:
            break
    assert "sat" not in room.house.runners and "main" in room.house.runners
    assert sorted(room.house.runners["main"].t.entrants) == seats
    assert sorted(r.player_id for r in (await lobby_answer(room.house, "sat")).results if r.seat_won) == seats


@run_async
async def test_the_dealers_tables_let_a_forgotten_tournament_go(tmp_path: Path) -> None:
    """On the dealer: once every table command of it is answered, nothing keyed by the tournament
    is left in the port's maps."""
    async with both(tmp_path) as room:
        request = sng("hu", players=2, levels=doubling(5.0), action_seconds=1, hand_interval_seconds=0.3)
        runner = await room.enter(request, ["ann", "bob"])
        await room.play(runner, shove=True)
        assert runner.finished
        await room.house.pay_owed()
        await room.port.flush()
        room.clock.advance(WINDOW)
        await room.house.step()
        assert "hu" not in room.house.runners
        port = room.port
        keyed: list[Mapping[str, object]] = [port.shapes, port._numbers, port._pending, port.skip, port._answered]
        assert not [m for m in keyed if "hu" in m]
        assert not [k for k in [*port._placing, *port._stood_up, *port.tables, *port._last] if k[0] == "hu"]
        assert not room.house.store.tables_acked().get("hu")
        assert [r.player_id for r in (await lobby_answer(room.house, "hu")).results] == [
            r.player for r in runner.results
        ]


def test_the_retention_window_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOURNAMENT_RETENTION_SECONDS", raising=False)
    assert TournamentServiceConfig.from_env().retention_seconds == WINDOW
    monkeypatch.setenv("TOURNAMENT_RETENTION_SECONDS", "30")
    assert TournamentServiceConfig.from_env().retention_seconds == 30.0
    monkeypatch.setenv("TOURNAMENT_RETENTION_SECONDS", "-1")
    with pytest.raises(SystemExit):
        TournamentServiceConfig.from_env()
