"""``cardroom session-simulate`` (issue 5 'Multi-hand simulation for checking')."""

import json
import tomllib
from pathlib import Path

import pytest

from cardroom.cli.main import main


def test_session_simulate_writes_one_phh_per_hand_with_table_fields(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each hand as PHH with seats, seat_count, players, _button_seat and _rake; chips conserved."""
    assert (
        main(
            [
                "session-simulate",
                "--game",
                "NT",
                "--players",
                "7",
                "--hands",
                "40",
                "--seed",
                "11",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["hands"] == 40
    assert summary["bought_in"] == summary["on_table"] + summary["rake"] + summary["cashed_out"]
    files = sorted(tmp_path.glob("hand-*.phh"))
    assert len(files) == 40
    rake = 0
    for f in files:
        fields = tomllib.loads(f.read_text())
        assert fields["seat_count"] == 7
        assert len(fields["seats"]) == len(fields["players"]) == len(fields["starting_stacks"])
        assert "_button_seat" in fields
        rake += fields["_rake"]
    assert rake == summary["rake"]


def test_same_seed_same_session(capsys: pytest.CaptureFixture[str]) -> None:
    outs = []
    for _ in range(2):
        assert main(["session-simulate", "--game", "F7S", "--hands", "30", "--seed", "5"]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]


def test_unknown_game_exits_with_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["session-simulate", "--game", "ZZ"]) == 2
    assert "unknown variant" in capsys.readouterr().err


def test_simulate_session_flag_is_the_issue_command_and_equals_session_simulate(tmp_path, capsys):
    """Issue 5 names the command ``cardroom simulate --session --game CODE --players N --hands H
    --seed S --out DIR``; it plays the same session as the ``session-simulate`` alias."""
    flagged, alias = tmp_path / "flag", tmp_path / "alias"
    assert (
        main(
            [
                "simulate",
                "--session",
                "--game",
                "FT",
                "--players",
                "6",
                "--hands",
                "25",
                "--seed",
                "11",
                "--out",
                str(flagged),
            ]
        )
        == 0
    )
    assert (
        main(
            ["session-simulate", "--game", "FT", "--players", "6", "--hands", "25", "--seed", "11", "--out", str(alias)]
        )
        == 0
    )
    files = sorted(p.name for p in flagged.iterdir())
    assert len(files) == 25 and files == sorted(p.name for p in alias.iterdir())
    for name in files:
        assert (flagged / name).read_text() == (alias / name).read_text()
    assert main(["simulate", "--game", "FT", "--hands", "2", "--quiet"]) == 0  # plain mode still works
