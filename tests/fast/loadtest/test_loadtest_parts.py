"""The load test's pieces in process: the think-time distribution it states, SLO flags, the
histogram percentiles and invariants it reads from /metrics, the report it writes."""

from __future__ import annotations

import json
import math
import random
import statistics
from pathlib import Path

import pytest

from cardroom.cli.main import main
from cardroom.client.loadtest import report
from cardroom.client.loadtest.burst import Burst
from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.serverside import histogram_quantile
from cardroom.client.loadtest.services import ProcessSampler, default_targets, escrow_vs_stacks, invariants
from cardroom.client.loadtest.settings import LoadSettings, Scenario, ThinkTime
from cardroom.client.loadtest.slo import Objective, check_all
from cardroom.v1 import tournament_pb2 as t


def test_think_time_has_the_stated_median_and_p90() -> None:
    think = ThinkTime(median_ms=1200, p90_ms=4000, max_ms=60_000)
    rng = random.Random(7)
    samples = sorted(think.sample(rng) for _ in range(40_000))
    assert statistics.median(samples) == pytest.approx(1.2, rel=0.03)
    assert samples[int(0.9 * len(samples))] == pytest.approx(4.0, rel=0.05)
    assert "median 1.2 s, p90 4 s" in think.describe()


def test_the_default_think_time_is_the_real_table_tempo_one() -> None:
    """Median 4.5 s, p90 13.5 s, capped under the 30 s action clock (docs/capacity.md, "A real table's
    tempo")."""
    think = ThinkTime()
    assert (think.median_ms, think.p90_ms) == (4500, 13500)
    assert think.max_ms < 30_000
    rng = random.Random(3)
    mean = statistics.fmean(think.sample(rng) for _ in range(40_000))
    assert mean == pytest.approx(6.3, abs=0.2)


def test_think_time_is_capped_and_max_throughput_has_none() -> None:
    think = ThinkTime(median_ms=1000, p90_ms=8000, max_ms=2000)
    rng = random.Random(1)
    assert max(think.sample(rng) for _ in range(5000)) == 2.0
    settings = LoadSettings(gateway="x", operator_token="t", scenario=Scenario.MAX)
    assert settings.effective_think().sample(rng) == 0.0


def test_slo_flags_parse_and_check_in_both_directions() -> None:
    summary = {
        "steady": {"act_latency_ms": {"p99": 80.0}, "actions_per_s": 100.0},
        "run": {"errors": 0},
        "invariants": {"missing": [], "values": {"dealer": 0.0}},
    }
    results = check_all(
        [
            Objective.parse("act_p99_ms=50"),
            Objective.parse("errors=0"),
            Objective.parse("actions_per_s=90"),
            Objective.parse("imbalance=0"),
        ],
        summary,
    )
    assert [(r["name"], r["met"]) for r in results] == [
        ("act_p99_ms", False),
        ("errors", True),
        ("actions_per_s", True),
        ("imbalance", True),
    ]


def test_an_slo_that_cannot_be_read_is_missed() -> None:
    summary = {"invariants": {"missing": ["wallet: wallet_ledger_imbalance"], "values": {}}}
    assert Objective.parse("imbalance=0").check(summary)["met"] is False
    assert Objective.parse("ratio_bidi=0.5").check({})["met"] is False


@pytest.mark.parametrize("text", ["act_p99=50", "errors", "errors=many"])
def test_bad_slo_flags_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        Objective.parse(text)


def test_histogram_quantile_from_the_bucket_deltas() -> None:
    name = "gateway_act_seconds"
    before = {
        f'{name}_bucket{{le="0.01"}}': 10.0,
        f'{name}_bucket{{le="0.1"}}': 10.0,
        f'{name}_bucket{{le="+Inf"}}': 10.0,
    }
    # 100 new observations: 50 up to 10 ms, 40 in (10 ms, 100 ms], 10 above
    after = {
        f'{name}_bucket{{le="0.01"}}': 60.0,
        f'{name}_bucket{{le="0.1"}}': 100.0,
        f'{name}_bucket{{le="+Inf"}}': 110.0,
    }
    assert histogram_quantile(before, after, name, 0.5) == pytest.approx(0.01)
    assert histogram_quantile(before, after, name, 0.7) == pytest.approx(0.01 + 0.09 * 0.5)
    assert histogram_quantile(before, after, name, 0.99) == pytest.approx(0.1)  # in +Inf: its lower edge
    assert histogram_quantile(after, after, name, 0.5) is None


def test_invariants_report_what_is_missing_and_nonzero() -> None:
    ok = invariants(
        {"dealer": {"dealer_escrow_imbalance": 0.0}, "wallet": {'wallet_ledger_imbalance{currency="play"}': 0.0}}
    )
    assert ok["zero"] is True and ok["missing"] == []
    off = invariants({"dealer": {"dealer_escrow_imbalance": 3.0}, "wallet": {}})
    assert off["zero"] is False and off["missing"] == ["wallet: wallet_ledger_imbalance"]
    assert off["backlogs"] == {"dealer: dealer_kafka_publish_pending": None, "wallet: wallet_outbox_pending": None}
    busy = invariants(
        {
            "dealer": {"dealer_kafka_publish_pending": 4.0},
            "dealer-2": {"dealer_kafka_publish_pending": 3.0},
            "wallet": {"wallet_outbox_pending": 0.0},
        }
    )
    assert busy["backlogs"] == {"dealer: dealer_kafka_publish_pending": 7.0, "wallet: wallet_outbox_pending": 0.0}


def test_escrow_vs_stacks_sets_the_wallets_table_escrows_against_the_dealers_chips_per_currency() -> None:
    wallet = {
        'wallet_table_escrow_cents{currency="cash"}': 1500.0,
        'wallet_table_escrow_cents{currency="play"}': 700.0,
        'wallet_ledger_imbalance{currency="cash"}': 0.0,
    }
    dealer = {'dealer_table_chips{currency="cash"}': 1500.0, 'dealer_table_chips{currency="play"}': 700.0}
    settled = escrow_vs_stacks({"wallet": wallet, "dealer": dealer})
    assert settled["difference"] == 0 and settled["missing"] == []
    assert settled["by_currency"]["play"] == {"wallet_escrow": 700.0, "dealer_chips": 700.0, "difference": 0.0}
    # rake not applied yet on cash, a cash-out in flight on play: the wallet holds more than the tables
    dealer_after = {'dealer_table_chips{currency="cash"}': 1490.0, 'dealer_table_chips{currency="play"}': 500.0}
    unsettled = escrow_vs_stacks({"wallet": wallet, "dealer": dealer_after})
    assert unsettled["difference"] == 10 + 200
    assert unsettled["by_currency"]["cash"]["difference"] == 10.0
    assert Objective.parse("escrow_vs_stacks=0").check({"escrow_vs_stacks": unsettled})["met"] is False
    assert Objective.parse("escrow_vs_stacks=0").check({"escrow_vs_stacks": settled})["met"] is True
    # a dealer without the gauge: no figure, and the objective is missed rather than met by default
    missing = escrow_vs_stacks({"wallet": wallet, "dealer": {"dealer_escrow_imbalance": 0.0}})
    assert missing["difference"] is None and missing["missing"] == ["dealer: dealer_table_chips"]
    assert Objective.parse("escrow_vs_stacks=0").check({"escrow_vs_stacks": missing})["met"] is False


def test_every_dealer_replicas_chips_and_imbalance_count() -> None:
    # make run's two dealer replicas (docs/sharding.md): each gauges its own tables; the wallet's escrows
    # hold every table's chips, so the check sums the replicas
    wallet = {'wallet_table_escrow_cents{currency="cash"}': 1500.0, 'wallet_ledger_imbalance{currency="cash"}': 0.0}
    one = {'dealer_table_chips{currency="cash"}': 1000.0, "dealer_escrow_imbalance": 0.0}
    two = {'dealer_table_chips{currency="cash"}': 500.0, "dealer_escrow_imbalance": 3.0}
    both = escrow_vs_stacks({"wallet": wallet, "dealer": one, "dealer-2": two})
    assert both["difference"] == 0 and both["by_currency"]["cash"]["dealer_chips"] == 1500.0
    assert escrow_vs_stacks({"wallet": wallet, "dealer": one})["difference"] == 500  # one replica is not all
    found = invariants({"wallet": wallet, "dealer": one, "dealer-2": two})
    assert found["values"]["dealer: dealer_escrow_imbalance"] == 3.0 and found["zero"] is False
    targets = default_targets("127.0.0.1", 7, dealers=2)
    dealers = {t.name: t.port for t in targets if t.name.startswith("dealer")}
    assert dealers == {"dealer": 9103 + 7, "dealer-2": 10103 + 7}  # make run's replica ports


def test_the_report_files_from_a_recorded_run(tmp_path: Path) -> None:
    recorder = Recorder(started=0.0)
    for second in range(6):
        b = recorder.bucket(second)
        b.hands, b.actions, b.latencies = 1, 10, [0.001 * (second + 1)] * 10
    recorder.bucket(3).errors["FAILED_PRECONDITION/OUT_OF_TURN"] += 2
    recorder.gauges = [(float(t), 6, 6) for t in range(6)]
    window = recorder.window(2, 6).summary()
    assert window["hands"] == 4 and window["actions_per_s"] == 10.0 and window["errors"] == 2
    assert window["act_latency_ms"]["p50"] in (4.0, 5.0) and window["act_latency_ms"]["max"] == 6.0
    summary = {
        "settings": {"scenario": "cash", "ramp_s": 2.0, "steady_s": 4.0},
        "headline": "h",
        "steady": window,
        "slo": [Objective.parse("errors=0").check({"run": window})],
    }
    sampler = ProcessSampler([], 0.0)
    plots = report.plot(summary, recorder, sampler, tmp_path)
    assert {p.name for p in plots} == {"latency.png", "throughput.png", "processes.png", "errors.png", "players.png"}
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in plots)
    page = report.write_html(summary, plots, tmp_path).read_text()
    assert "FAIL" in page and "latency.png" in page
    assert json.loads(report.write_json(summary, tmp_path).read_text())["steady"]["hands"] == 4
    assert not any(math.isnan(x) for x in report.series(recorder, 5)["act_p99_ms"])


def test_bad_tournament_burst_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in (["--entrants", "0"], ["--retry-share", "1.5"], ["--buy-in", "-1"]):
        assert main(["loadtest", "--scenario", "tournament-burst", "--operator-token", "x", *bad]) == 2
        assert "--entrants >= 1" in capsys.readouterr().out


def _burst(entrants: int = 4, share: float = 0.5) -> Burst:
    burst = Burst("gw", "op", "tour", "t-1", "lt", entrants, buy_in=500, fee=50, retry_share=share, seed=2)
    burst.make_players()
    return burst


def test_the_burst_picks_its_retrying_players_and_request_ids() -> None:
    burst = _burst(entrants=10, share=0.2)
    assert sum(p.retries for p in burst.players) == 2
    assert len({p.request_id for p in burst.players}) == 10 and len({p.name for p in burst.players}) == 10
    assert not any(p.retries for p in _burst(entrants=10, share=0.0).players)


def test_the_burst_checks_entrants_pool_and_that_each_player_paid_once_and_got_it_back() -> None:
    def checked(charges: list[int], refunds: list[int], entrants: int, pool: int) -> list[str]:
        burst = _burst()
        for p, charge, refund in zip(burst.players, charges, refunds, strict=True):
            p.cash_before, p.cash_registered, p.cash_after = 1000, 1000 - charge, 1000 - charge + refund
        after = {"entrants": entrants, "prize_pool": pool, "expected_entrants": 4, "expected_prize_pool": 2000}
        empty = {"entrants": 0, "prize_pool": 0, "expected_entrants": 0, "expected_prize_pool": 0}
        return burst.summarize(t.TournamentInfo(), after, empty)["failed_checks"]

    assert checked([550] * 4, [550] * 4, 4, 2000) == []
    assert checked([550, 550, 550, 1100], [550, 550, 550, 1100], 4, 2000) == [
        "1 players not charged exactly one buy-in + fee"
    ]
    assert checked([550] * 4, [550] * 4, 3, 1500) == ["entrants 3 != 4", "prize pool 1500 != 2000"]
    assert checked([550] * 4, [550, 550, 550, 500], 4, 2000) == [
        "1 players' cash not back to where it was after unregistering"
    ]


def test_bad_arguments_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["loadtest", "--slo", "nope=1", "--operator-token", "x"]) == 2
    assert main(["loadtest", "--ramp", "10", "--duration", "5", "--operator-token", "x"]) == 2
    assert main(["loadtest", "--players-per-table", "7", "--operator-token", "x"]) == 2


def test_the_machine_is_sampled_beside_the_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """CPU that other processes or the hypervisor took is reported apart from the card room's own."""
    from collections import namedtuple

    from cardroom.client.loadtest import services

    times = namedtuple("times", "user nice system idle iowait irq softirq steal guest guest_nice")
    readings = iter(
        [
            times(100, 0, 20, 500, 5, 0, 0, 10, 7, 0),
            # 2 cores over 1 s: 0.8 user + 0.4 system + 0.6 idle + 0.2 steal; guest (inside user) ignored
            times(100.8, 0, 20.4, 500.6, 5, 0, 0, 10.2, 50, 0),
        ]
    )
    monkeypatch.setattr(services, "machine_times", lambda: next(readings))
    monkeypatch.setattr(services.psutil, "cpu_count", lambda: 2)
    sampler = ProcessSampler([], 0.0)
    sampler.attach()  # the load generator's own process only
    sampler.sample()
    [m] = sampler.machine
    assert (round(m.busy, 3), round(m.steal, 3)) == (1.4, 0.2)
    assert m.others == pytest.approx(max(0.0, 1.2 - m.ours))
    window = sampler.machine_window(0.0, float("inf"))
    assert window is not None and window["cores"] == 2 and window["busy_cores_mean"] == 1.4
    assert sampler.machine_window(1e9, 2e9) is None
    rows = dict(report._machine_rows({"machine": window}))
    assert rows["machine (2 cores): busy / these processes / other processes / steal, cores"].startswith("1.40 / ")
    assert report._machine_rows({"machine": None}) == []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure = report._processes(plt, sampler)
    labels = figure.axes[0].get_legend_handles_labels()[1]
    assert {"other processes", "steal (hypervisor)", "loadtest"} <= set(labels)
    plt.close(figure)
