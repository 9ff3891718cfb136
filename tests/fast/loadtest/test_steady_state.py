"""Fast tier: the load test's steady state begins once every player sat down (issue 16: "ramp,
steady state"): a backlog of sit-downs after the ramp's time is the ramp's, and is reported as such."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from cardroom.client.loadtest import report
from cardroom.client.loadtest.player import CHURN, STOPPED, Player
from cardroom.client.loadtest.settings import LoadSettings
from cardroom.v1 import dealer_pb2 as d
from tests.fast.loadtest.players import load_player


def test_the_steady_state_waits_for_every_player_to_sit_down_within_the_grace() -> None:
    s = LoadSettings(gateway="g:1", operator_token="x", tables=10, players_per_table=6, ramp=40.0)
    assert s.players == 60 and s.ramp_grace == 40.0
    assert not s.steady_begins(39.9, 60)  # the ramp's time first
    assert s.steady_begins(40.0, 60)  # everyone seated at the end of the ramp
    assert not s.steady_begins(48.0, 57)  # three still sitting down: still the ramp
    assert s.steady_begins(48.0, 60)
    assert s.steady_begins(80.0, 57)  # the grace is over: the steady state begins without them
    assert LoadSettings(gateway="g:1", operator_token="x", ramp=2.0).ramp_grace == 10.0


class _Stub:
    """A player's calls to the gateway replaced: joins (failing when ``join_fails``) and sessions."""

    def __init__(self, player: Player, outcomes: list[str], join_fails: bool = False) -> None:
        self.player, self.outcomes, self.join_fails, self.joins = player, outcomes, join_fails, 0

    async def login(self) -> None:
        return None

    async def balance(self) -> int:
        return 1000

    async def join(self) -> None:
        self.joins += 1
        if self.join_fails:
            raise grpc.aio.AioRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.aio.Metadata(), grpc.aio.Metadata())
        self.player.seated = True

    async def session(self, reopened: bool) -> str:
        outcome = self.outcomes.pop(0)
        if outcome == STOPPED:
            self.player.stopping.set()
        return outcome

    async def leave(self) -> None:
        self.player.seated = False

    async def away(self, seconds: float) -> None:
        return None


def _stubbed(monkeypatch: pytest.MonkeyPatch, outcomes: list[str], join_fails: bool = False) -> tuple[Player, _Stub]:
    player = load_player("p1", d.TableInfo(table_id="t1", min_buy_in=100))
    stub = _Stub(player, outcomes, join_fails)
    for name in ("login", "balance", "join", "session", "leave", "away"):
        monkeypatch.setattr(player, f"_{name}", getattr(stub, name))
    return player, stub


def test_a_player_arrives_once_at_its_first_sit_down_and_not_again_when_churning(monkeypatch) -> None:
    player, stub = _stubbed(monkeypatch, [CHURN, CHURN, STOPPED])
    asyncio.run(player.run(0.0))
    assert stub.joins == 3 and player.recorder.arrived == 1


def test_a_player_that_cannot_sit_down_has_arrived_all_the_same(monkeypatch) -> None:
    player, stub = _stubbed(monkeypatch, [STOPPED], join_fails=True)
    asyncio.run(player.run(0.0))
    assert stub.joins == 1 and player.recorder.arrived == 1  # given up: the steady state does not wait
    assert sum(sum(b.errors.values()) for b in player.recorder.buckets.values()) == 1


def test_the_summary_shows_when_the_steady_state_began_and_the_ramps_latency() -> None:
    summary = {
        "settings": {"ramp_s": 40.0, "steady_from_s": 48.2},
        "ramp": {"act_latency_ms": {"p50": 300.0, "p99": 1500.0}},
    }
    [(what, value)] = report._ramp_rows(summary)
    assert "steady state from" in what and value == "48 (40) / 300.0 / 1500.0"
    assert report._ramp_rows({"settings": {}}) == []  # a summary without it (the tournament burst)


def test_the_generators_own_collections_are_timed_by_generation() -> None:
    import gc

    from cardroom.client.loadtest.gcpause import Pauses

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    pauses = Pauses().install()
    try:
        gc.collect()  # a full collection
        for _ in range(10):
            Cycle()  # garbage only a collection frees
        gc.collect(0)
    finally:
        pauses.remove()
    got = pauses.summary()
    assert got["gen2"]["collections"] >= 1 and got["gen0"]["collections"] >= 1
    assert got["gen2"]["max_ms"] >= 0 and got["gen2"]["total_ms"] >= got["gen2"]["max_ms"]
    assert 0 < got["gen2"]["cpu_ms"] <= got["gen2"]["total_ms"] + 1  # the collector's own work, on the CPU
    assert got["gen0"]["collected"] >= 10  # each cycle freed
    gc.collect()
    assert pauses.summary() == got  # removed: no longer counting
    pauses.reset()
    assert pauses.summary()["gen2"] == {"collections": 0, "max_ms": 0.0, "total_ms": 0.0, "cpu_ms": 0.0, "collected": 0}


def gc_scrape(**pauses: tuple[int, float]) -> dict[str, float]:
    """A service's ``python_gc_pause_seconds`` as scraped: ``gen2=(count, seconds)`` and so on."""
    out: dict[str, float] = {}
    for generation, (count, seconds) in pauses.items():
        label = f'{{generation="{generation.removeprefix("gen")}"}}'
        out[f"python_gc_pause_seconds_count{label}"] = count
        out[f"python_gc_pause_seconds_sum{label}"] = seconds
    return out


def test_each_services_full_collections_in_the_steady_state_are_reported() -> None:
    from cardroom.client.loadtest.serverside import gc_collections, server_side

    def scraped(full: int, seconds: float, young: int) -> dict[str, float]:
        return gc_scrape(gen2=(full, seconds), gen0=(young, young * 0.001))

    assert gc_collections(scraped(3, 0.5, 100), scraped(5, 1.1, 900)) == (2, 300.0)  # 0.6 s over 2
    assert gc_collections(scraped(3, 0.5, 100), scraped(3, 0.5, 900)) == (0, None)  # young ones only
    out = server_side({"gateway": scraped(1, 0.1, 0)}, {"gateway": scraped(2, 0.35, 0), "wallet": scraped(0, 0, 0)})
    assert out["gc_full_collections"] == {
        "gateway": {"count": 1, "mean_pause_ms": 250.0},
        "wallet": {"count": 0, "mean_pause_ms": None},
    }
    summary = {"settings": {}, "server_side": out}
    rows = dict(report._gc_rows(summary))
    assert rows["full garbage collections in the steady state (mean pause, ms)"] == "gateway 1 (250.0), wallet 0"


def test_each_services_young_collections_are_reported_beside_the_full_ones() -> None:
    """A threshold that makes full collections rare makes young ones longer: the report shows both."""
    from cardroom.client.loadtest.serverside import YOUNG, gc_collections, server_side

    def scraped(young0: int, young1: int, seconds: float) -> dict[str, float]:
        return gc_scrape(gen0=(young0, seconds), gen1=(young1, seconds), gen2=(7, 9.0))

    before, after = scraped(10, 1, 0.01), scraped(40, 3, 0.05)  # 32 young ones, 0.08 s more
    assert gc_collections(before, after, YOUNG) == (32, 2.5)
    out = server_side({"gateway": before}, {"gateway": after})
    assert out["gc_young_collections"] == {"gateway": {"count": 32, "mean_pause_ms": 2.5}}
    assert out["gc_full_collections"] == {"gateway": {"count": 0, "mean_pause_ms": None}}
    rows = dict(report._gc_rows({"settings": {}, "server_side": out}))
    assert rows["young garbage collections in the steady state (mean pause, ms)"] == "gateway 32 (2.5)"


def test_the_load_generators_young_collections_say_how_much_was_on_the_cpu() -> None:
    """A young collection that takes 40 ms of wall time but 2 ms of the thread's CPU is the process waiting
    for a core, not the collector's work: the report tells them apart."""
    generator_gc = {
        "gen0": {"collections": 3, "max_ms": 40.0, "total_ms": 60.0, "cpu_ms": 2.5, "collected": 0},
        "gen1": {"collections": 1, "max_ms": 90.0, "total_ms": 90.0, "cpu_ms": 4.0, "collected": 0},
        "gen2": {"collections": 0, "max_ms": 0.0, "total_ms": 0.0, "cpu_ms": 0.0, "collected": 0},
    }
    rows = dict(report._gc_rows({"settings": {}, "load_generator_gc": generator_gc}))
    key = "load generator's own young collections: count / total ms / of it on the CPU ms / longest ms"
    assert rows[key] == "4 / 150 / 6 / 90"
    assert rows["load generator's own full collections in the steady state / longest, ms"] == "0 / 0"
