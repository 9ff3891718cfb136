"""The load generator as several processes (``--generators N``): each plays whole tables, the players are
the same as in a one-process run, what they saw adds up in the coordinator, and a generator that dies is
an error of the run with its players' balances unknown."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from cardroom.cli.main import main
from cardroom.client.loadtest.crowd import Balances, Crowd, Share, gc_total, shares
from cardroom.client.loadtest.generators import Remote
from cardroom.client.loadtest.recorder import Bucket, Recorder
from cardroom.client.loadtest.services import is_load_generator
from cardroom.client.loadtest.settings import LoadSettings
from cardroom.v1 import dealer_pb2 as d


def settings(**kw: object) -> LoadSettings:
    return LoadSettings(gateway="unused:1", operator_token="x", **kw)  # type: ignore[arg-type]


def test_the_tables_and_lobby_pollers_are_dealt_round_the_generators_whole() -> None:
    dealt = shares(tables=7, lobby_pollers=3, generators=3)
    assert [s.tables for s in dealt] == [(0, 3, 6), (1, 4), (2, 5)]
    assert [s.lobby_pollers for s in dealt] == [(0,), (1,), (2,)]
    assert sorted(t for s in dealt for t in s.tables) == list(range(7))  # each table once, whole
    assert shares(4, 0, 1) == [Share(0, (0, 1, 2, 3), ())]
    with pytest.raises(ValueError):
        shares(4, 0, 0)


def test_each_generators_players_are_those_of_a_one_process_run() -> None:
    """Names, random seeds and places in the ramp do not depend on how the tables are dealt."""
    s = settings(tables=5, players_per_table=3, ramp=10.0, seed=42)
    infos = {t: d.TableInfo(table_id=f"t{t}") for t in range(5)}

    def crowd(share: Share) -> Crowd:
        c = Crowd(s, "run1", share, {t: infos[t] for t in share.tables}, Recorder())
        c.make_players()
        return c

    def seen(c: Crowd) -> dict[str, tuple[str, float, float]]:
        return {
            p.player_id: (p.table.table_id, p.rng.random(), delay)
            for p, delay in zip(c.players, c._delays, strict=True)
        }

    whole = seen(crowd(shares(5, 0, 1)[0]))
    split: dict[str, tuple[str, float, float]] = {}
    for share in shares(5, 0, 2):
        split |= seen(crowd(share))
    assert split == whole and len(whole) == 15
    assert whole["ltrun1t2p3"][0] == "t1" and whole["ltrun1t2p3"][2] == pytest.approx(10.0 * 5 / 15)


def test_what_the_generators_saw_adds_up_second_by_second() -> None:
    coordinator, gen = Recorder(), Recorder(started=0.0)
    coordinator.buckets[3] = Bucket(hands=1, actions=2, latencies=[0.01, 0.02], errors=Counter({"CANCELLED": 1}))
    gen.buckets[3] = Bucket(hands=2, actions=1, latencies=[0.5], events=Counter({"join": 1}))
    gen.buckets[4] = Bucket(actions=1, latencies=[0.03])
    coordinator.merge(gen.drain())
    assert gen.buckets == {}  # handed over once
    w = coordinator.window(0, 10)
    assert (w.hands, w.actions, sorted(w.latencies)) == (3, 4, [0.01, 0.02, 0.03, 0.5])
    assert (w.errors, w.events) == (Counter({"CANCELLED": 1}), Counter({"join": 1}))


def test_the_generators_collections_and_balances_are_totalled() -> None:
    one = {"gen2": {"collections": 1, "max_ms": 40.0, "total_ms": 40.0, "cpu_ms": 30.0, "collected": 7}}
    two = {"gen2": {"collections": 2, "max_ms": 25.0, "total_ms": 45.5, "cpu_ms": 10.5, "collected": 5}}
    assert gc_total([one, two]) == {
        "gen2": {"collections": 3, "max_ms": 40.0, "total_ms": 85.5, "cpu_ms": 40.5, "collected": 12}
    }
    assert Balances.total([Balances(6, 6, 0), Balances(6, 5, -100)]) == Balances(12, 11, -100)


def test_the_load_generators_processes_are_not_the_card_rooms() -> None:
    assert all(map(is_load_generator, ("loadtest", "loadtest-gen1", "loadtest-gen12")))
    assert not any(map(is_load_generator, ("dealer", "dealer-2", "gateway", "kafka", "loadtester")))


def test_a_generator_process_plays_its_share_and_finishes_when_told() -> None:
    """A real generator process with no tables: ready, its ticks merged, the steady state's loop lag
    measured in it, its figures at the stop."""

    async def run() -> None:
        s = settings(tables=2, progress_every=0.1)
        remote = Remote(s, "run1", Share(1, ()))
        try:
            await remote.ready()
            recorder = Recorder()
            await remote.play({}, recorder)
            remote.steady()
            await asyncio.sleep(0.5)
            finish = await remote.finish(recorder)
            assert finish.balances == Balances(0, 0, 0)
            [note] = finish.notes  # its collector was held in the steady state (gcpause.Held)
            assert note.startswith("the load generator's collector was held in the steady state;")
            assert len(finish.lags) >= 2  # its own loop, every 0.1 s of the steady state
            assert set(finish.gc) == {"gen0", "gen1", "gen2"}
            assert recorder.window(0).errors == Counter()
        finally:
            await remote.close()
        assert remote.process.exitcode == 0

    asyncio.run(run())


def test_a_generator_that_dies_is_an_error_and_its_players_balances_are_unknown() -> None:
    async def run() -> None:
        s = settings(tables=2, players_per_table=3)
        remote = Remote(s, "run1", Share(1, (1,)))
        try:
            await remote.ready()
            remote.process.kill()
            await asyncio.to_thread(remote.process.join, 10)
            recorder = Recorder()
            await remote.play({1: d.TableInfo(table_id="t1")}, recorder)
            finish = await remote.finish(recorder)
        finally:
            await remote.close()
        assert finish.balances == Balances(players=3, known=0, drift_of_those_known=0)
        assert "loadtest-gen2 ended without its players' figures" in finish.notes
        assert recorder.window(0).errors == Counter({"EXITED (load generator)": 1})

    asyncio.run(run())


def test_more_generators_than_tables_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["loadtest", "--tables", "2", "--generators", "3", "--operator-token", "x"]) == 2
    assert main(["loadtest", "--generators", "0", "--operator-token", "x"]) == 2
    assert "--generators" in capsys.readouterr().out
    monkeypatch.setenv("LOADTEST_GENERATORS", "3")  # the default, as loadtest-ab sets it
    assert main(["loadtest", "--tables", "2", "--operator-token", "x"]) == 2
    monkeypatch.setenv("LOADTEST_GENERATORS", "two")
    assert main(["loadtest", "--tables", "2", "--operator-token", "x"]) == 2
    assert "LOADTEST_GENERATORS='two' is not a number" in capsys.readouterr().out


def test_seeds_are_drawn_for_every_player_in_table_order() -> None:
    """The one-process run's sequence (a Random of the seed, one draw per player) is kept."""
    s = settings(tables=2, players_per_table=2, seed=7)
    c = Crowd(s, "r", Share(0, (1,)), {1: d.TableInfo(table_id="t1")}, Recorder())
    c.make_players()
    draws = random.Random(7)
    expected = [draws.random() for _ in range(4)][2:]
    assert [p.rng.random() for p in c.players] == [random.Random(x).random() for x in expected]


def test_the_progress_line_reads_only_the_seconds_every_generator_has_sent() -> None:
    """A generator sends its buckets once a tick: the last second or two are not in yet, and the line's
    rates would read low (seen: 60-69 actions/s on the line for a steady state of 103.5)."""
    import time

    from cardroom.client.loadtest.progress import Progress
    from cardroom.client.loadtest.services import ProcessSampler

    recorder = Recorder(started=time.monotonic() - 9.5)
    for second in range(8):  # seconds 8 and 9 not sent yet
        recorder.buckets[second] = Bucket(actions=10, latencies=[0.004] * 10)
    line = Progress(recorder, settings(), ProcessSampler([], 0.0))
    recorder.heard_until = None  # the players record here: up to now
    assert "     6.0 actions/s" in line.line()
    recorder.heard_until = 8.0
    assert "    10.0 actions/s" in line.line()
