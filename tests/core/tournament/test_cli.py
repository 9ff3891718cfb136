"""``cardroom simulate --tournament`` (issue 11 'Interface'): every format runs, and its summary
agrees with its events and its PHH files."""

import json
import tomllib
from pathlib import Path

import pytest

from cardroom.cli.main import main

CASES = [
    ("mtt", "NT", 60),
    ("sng", "FO/8", 10),
    ("headsup", "NT", 2),
    ("headsup", "PO", 8),
    ("rebuy", "NT", 40),
    ("shootout", "F7S", 16),
    ("satellite", "NT", 40),
    ("freeroll", "FT", 30),
]


@pytest.mark.parametrize(("fmt", "game", "entrants"), CASES)
def test_each_format_runs_and_its_summary_agrees_with_its_events(
    fmt: str, game: str, entrants: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "simulate",
                "--tournament",
                "--format",
                fmt,
                "--game",
                game,
                "--entrants",
                str(entrants),
                "--seed",
                "3",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    summary = json.loads(lines[-1])
    table = lines[1:-1]
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert summary["status"] == "finished"
    assert summary["events"] == {k: kinds.count(k) for k in sorted(set(kinds))}
    assert summary["entrants"] == kinds.count("Registered") == entrants == len(table)
    (final,) = [e for e in events if e["type"] == "PrizePoolFinal"]
    (fin,) = [e for e in events if e["type"] == "Finished"]
    assert summary["prize_pool"] == final["prize_pool"] == fin["prize_pool"] == summary["prizes_paid"]
    assert sum(r["prize"] for r in fin["results"]) == final["prize_pool"]
    winners = [r["player"] for r in fin["results"] if r["place"] == 1]
    assert summary["winner"] == winners[0]
    out = {e["player"]: e for e in events if e["type"] == "Eliminated"}
    assert len(out) == entrants - len(winners)
    for r in fin["results"]:
        if r["player"] in out:
            assert out[r["player"]]["place"] == r["place"]
    assert summary["rebuys"] == sum(e["count"] for e in events if e["type"] == "Rebuy")
    assert summary["add_ons"] == kinds.count("AddOn")
    stack = 1500
    assert summary["chips_in_play"] == stack * (entrants + summary["rebuys"] + summary["add_ons"])
    phh = sorted(tmp_path.glob("hand-*.phh"))
    assert len(phh) == summary["hands"] > 0
    fields = tomllib.loads(phh[0].read_text())
    assert sum(fields["starting_stacks"]) == sum(fields["finishing_stacks"])
    for line, r in zip(table, fin["results"], strict=True):
        assert r["player"] in line and str(r["prize"]) in line


def test_the_same_seed_gives_the_same_tournament(capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for _ in range(2):
        assert (
            main(["simulate", "--tournament", "--format", "mtt", "--game", "NT", "--entrants", "30", "--seed", "9"])
            == 0
        )
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]


def test_bad_arguments_exit_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--tournament", "--game", "XX", "--entrants", "10"]) == 2
    assert main(["simulate", "--tournament", "--format", "headsup", "--game", "NT", "--entrants", "3"]) == 2


def test_the_tournament_benchmark_is_listed_and_reports_its_figure(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11: 'report the figure in make bench' (a figure, never a time assertion)."""
    assert main(["bench", "--quick", "tournament"]) == 0
    out = capsys.readouterr().out
    assert "200-entrant NLHE freeze-out MTT" in out and "status finished" in out
