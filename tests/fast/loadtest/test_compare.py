"""Fast tier: ``cardroom loadtest-ab`` (cardroom.client.loadtest.compare): the runs alternate A, B, A, B
with each side's environment, every run's figures come from its report, and the means and B ÷ A are
those of the runs; a run that left no report is shown as such and the exit status says so."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cardroom.cli.commands import loadtest_ab
from cardroom.cli.main import main
from cardroom.client.loadtest.compare import compare, figures, parse_env, plan, render


def report(actions: float, p99: float, bidi: float, dealers: tuple[float, float], gateway: float) -> dict[str, Any]:
    return {
        "steady": {"actions_per_s": actions, "act_latency_ms": {"p99": p99}},
        "baseline": {"bidi_round_trips_per_s": bidi, "fanout_rounds_per_s": bidi / 4},
        "costs": {
            "cpu_ms_per_hand": {
                "dealer": dealers[0],
                "dealer-2": dealers[1],
                "gateway": gateway,
                "kafka": 9.0,
                "loadtest": 100.0,
            }
        },
        "run": {"errors": 1},
    }


def test_the_runs_alternate_and_the_environment_is_parsed(tmp_path: Path) -> None:
    runs = plan(2, {"X": "1"}, {"X": "2"}, tmp_path)
    assert [(r.side, r.index, r.env["X"], r.out.name) for r in runs] == [
        ("A", 1, "1", "a-1"),
        ("B", 1, "2", "b-1"),
        ("A", 2, "1", "a-2"),
        ("B", 2, "2", "b-2"),
    ]
    assert parse_env(["A=1", "B=x=y", "C="]) == {"A": "1", "B": "x=y", "C": ""}
    for bad in (["NOEQUALS"], ["=1"]):
        with pytest.raises(ValueError, match="NAME=value"):
            parse_env(bad)
    with pytest.raises(ValueError):
        plan(0, {}, {}, tmp_path)


def test_figures_means_and_ratios_are_those_of_the_runs(tmp_path: Path) -> None:
    one = figures(report(200.0, 100.0, 10_000.0, (20.0, 30.0), 25.0))
    assert (one.actions_per_s, one.ratio, one.dealers_ms_per_hand, one.gateway_ms_per_hand) == (200.0, 0.02, 50.0, 25.0)
    assert (one.fanout_ratio, one.kafka_ms_per_hand) == (0.08, 9.0)
    assert one.services_ms_per_hand == 50.0 + 25.0 + 9.0  # the load generator's 100 is not the card room's
    older = report(200.0, 100.0, 10_000.0, (20.0, 30.0), 25.0)
    del older["baseline"]["fanout_rounds_per_s"]  # a report from before the bare tables
    assert figures(older).fanout_ratio == 0.0
    assert (one.steal_cores, figures({**older, "machine": {"steal_cores_mean": 0.31}}).steal_cores) == (0.0, 0.31)
    runs = plan(2, {}, {"X": "1"}, tmp_path)
    got = [
        figures(report(200.0, 100.0, 10_000.0, (20.0, 30.0), 25.0)),
        figures(report(220.0, 80.0, 11_000.0, (20.0, 20.0), 20.0)),
        figures(report(180.0, 120.0, 9_000.0, (25.0, 25.0), 30.0)),
        None,  # B2 failed
    ]
    summary = compare(list(zip(runs, got, strict=True)))
    assert summary["means"]["A"]["actions_per_s"] == pytest.approx(190.0)
    assert summary["means"]["B"]["actions_per_s"] == pytest.approx(220.0)  # only B1 reported
    assert summary["b_over_a"]["actions_per_s"] == pytest.approx(220.0 / 190.0)
    assert summary["b_over_a"]["dealers_ms_per_hand"] == pytest.approx(40.0 / 50.0)
    text = render(summary)
    assert "steal cores" in text.splitlines()[0]
    assert "B2" in text and "(no report)" in text and "B ÷ A" in text and "1.158" in text


def test_the_command_runs_each_side_with_its_environment_and_reports_a_missing_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, str]] = []

    def fake_run(command: list[str], env: dict[str, str], **_: Any) -> subprocess.CompletedProcess[str]:
        out = Path(command[command.index("--out") + 1])
        calls.append((out.name, env["FEEDS"]))
        assert command[3:6] == ["loadtest", "--scenario", "max"]
        if out.name != "b-2":  # the last run fails without a report
            actions = 100.0 if env["FEEDS"] == "on" else 50.0
            (out / "report.json").write_text(json.dumps(report(actions, 10.0, 1000.0, (1.0, 1.0), 1.0)))
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(loadtest_ab.subprocess, "run", fake_run)
    status = main(
        [
            "loadtest-ab",
            "--a",
            "FEEDS=on",
            "--b",
            "FEEDS=off",
            "--pairs",
            "2",
            "--out",
            str(tmp_path),
            "--",
            "--scenario",
            "max",
        ]
    )
    assert status == 3
    assert calls == [("a-1", "on"), ("b-1", "off"), ("a-2", "on"), ("b-2", "off")]
    summary = json.loads((tmp_path / "compare.json").read_text())
    assert summary["b_over_a"]["actions_per_s"] == pytest.approx(0.5)
    assert "(no report)" in capsys.readouterr().out
    assert main(["loadtest-ab", "--out", str(tmp_path), "--", "--out", "x"]) == 2
