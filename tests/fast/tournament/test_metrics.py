"""The tournament service's metrics (services/tournament/metrics.py) through a whole Sit & Go in the
house (fast tier): labels bounded by format, state and kind (no tournament id), the per-format gauges
follow the tournament from registration to its end and give their share back when it is over.

The registry is the process's default one (other tests run tournaments too), so values are read as
differences around the tournament played here."""

from __future__ import annotations

from prometheus_client import REGISTRY

from cardroom.core.tournament import Status
from tests.fast.tournament.conftest import Room, run_async, sng
from tournament import metrics


def value(name: str, **labels: str) -> float:
    found = REGISTRY.get_sample_value(name, labels)
    return 0.0 if found is None else found


def test_no_metric_has_a_tournament_or_player_label() -> None:
    allowed = {"state", "format", "op"}
    for family in REGISTRY.collect():
        if family.name.startswith("tournament_"):
            for sample in family.samples:
                assert set(sample.labels) - {"le"} <= allowed, (family.name, sample.labels)


@run_async
async def test_a_sit_and_go_moves_through_the_gauges_and_counts_its_registrations(room: Room) -> None:
    players = [f"m{i}" for i in range(6)]
    room.fund(*players)
    before = {
        "registration": value("tournament_tournaments", state="registration", format="sng"),
        "running": value("tournament_tournaments", state="running", format="sng"),
        "finished": value("tournament_tournaments", state="finished", format="sng"),
        "entrants": value("tournament_entrants", format="sng"),
        "pool": value("tournament_prize_pool_cents", format="sng"),
        "registered": value("tournament_registrations_total", format="sng", op="register"),
        "unregistered": value("tournament_registrations_total", format="sng", op="unregister"),
        "levels": value("tournament_levels_total", format="sng"),
        "hands": value("tournament_hands_total"),
    }
    await room.house.create(sng("msng1"))
    await room.house.step()
    assert value("tournament_tournaments", state="registration", format="sng") == before["registration"] + 1
    for i, p in enumerate(players[:5]):
        await room.house.register("msng1", p, f"r{i}")
    await room.house.unregister("msng1", players[4], "u4")
    await room.house.register("msng1", players[4], "r4-again")
    await room.house.register("msng1", players[4], "r4-again")  # a replay: not counted again
    assert value("tournament_registrations_total", format="sng", op="unregister") == before["unregistered"] + 1
    await room.house.step()
    assert value("tournament_entrants", format="sng") == before["entrants"] + 5
    await room.house.register("msng1", players[5], "r5")  # full: the Sit & Go starts
    await room.house.step()
    runner = room.house.runners["msng1"]
    assert runner.t.status is Status.RUNNING
    assert value("tournament_tournaments", state="running", format="sng") == before["running"] + 1
    assert value("tournament_tournaments", state="registration", format="sng") == before["registration"]
    assert value("tournament_registrations_total", format="sng", op="register") == before["registered"] + 7
    assert value("tournament_players_remaining", format="sng") >= 2
    assert value("tournament_tables", format="sng") >= 1
    assert value("tournament_level", format="sng") >= 1
    assert value("tournament_prize_pool_cents", format="sng") == before["pool"] + runner.t.prize_pool

    await room.play("msng1")
    assert runner.t.status is Status.FINISHED
    assert value("tournament_tournaments", state="finished", format="sng") == before["finished"] + 1
    assert value("tournament_tournaments", state="running", format="sng") == before["running"]
    assert value("tournament_entrants", format="sng") == before["entrants"]  # its share given back
    assert value("tournament_prize_pool_cents", format="sng") == before["pool"]
    assert value("tournament_levels_total", format="sng") >= before["levels"] + 1
    assert value("tournament_hands_total") > before["hands"]
    assert metrics.OPS == ("register", "unregister", "rebuy", "add_on")
