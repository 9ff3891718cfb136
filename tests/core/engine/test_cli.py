"""``cardroom simulate`` and ``cardroom phh replay`` (issue 4)."""

from __future__ import annotations

import json

from cardroom.cli.main import main


def _lines(capsys) -> list[dict]:
    return [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]


def test_simulate_same_seed_same_hands_and_phh_replay_agrees(tmp_path, capsys):
    out = tmp_path / "hands"
    assert (
        main(["simulate", "--game", "FO/8", "--players", "4", "--hands", "12", "--seed", "9", "--out", str(out)]) == 0
    )
    first = _lines(capsys)
    assert main(["simulate", "--game", "FO/8", "--players", "4", "--hands", "12", "--seed", "9"]) == 0
    assert _lines(capsys) == first
    assert first[-1]["summary"] and first[-1]["chips_conserved"]
    files = sorted(out.glob("*.phh"))
    assert len(files) == 12
    assert main(["phh", "replay", *map(str, files)]) == 0
    replayed = _lines(capsys)
    assert [r["finishing_stacks"] for r in replayed] == [h["finishing_stacks"] for h in first[:-1]]


def test_simulate_every_game_code(capsys):
    for code in ["NT", "FT", "PO", "FO/8", "F7S", "F7S/8", "F2L3D", "F5CD", "FSK", "ST", "HT"]:
        assert main(["simulate", "--game", code, "--players", "5", "--hands", "20", "--seed", "1", "--quiet"]) == 0
    assert all(line["chips_conserved"] for line in _lines(capsys))


def test_simulate_rejects_unknown_game_and_bad_player_count(capsys):
    assert main(["simulate", "--game", "ZZ", "--hands", "1"]) == 2
    assert main(["simulate", "--game", "F5CD", "--players", "9", "--hands", "1"]) == 2


def test_phh_replay_reports_bad_files_with_exit_status_1(tmp_path, capsys):
    bad = tmp_path / "bad.phh"
    bad.write_text(
        "variant = 'NT'\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\nmin_bet = 2\n"
        "starting_stacks = [100, 100]\nactions = ['d dh p1 AhKh', 'd dh p2 2c2d', 'p2 cbr 1']\n"
    )
    assert main(["phh", "replay", str(bad), str(tmp_path / "missing.phh")]) == 1
    lines = _lines(capsys)
    assert len(lines) == 2 and all("error" in x for x in lines)


def test_phh_replay_reads_a_pokerkit_file(tmp_path, capsys):
    """A file written by pokerkit (no cardroom fields) replays under pokerkit's conventions."""
    text = (
        "variant = 'NT'\nante_trimming_status = true\nantes = [0, 0, 0]\n"
        "blinds_or_straddles = [1, 2, 0]\nmin_bet = 2\nstarting_stacks = [200, 200, 200]\n"
        "actions = ['d dh p1 AsAd', 'd dh p2 KsKd', 'd dh p3 7c2h', 'p3 f', 'p1 cbr 10', "
        "'p2 cc', 'd db 2s5h9c', 'p1 cbr 20', 'p2 f']\n"
    )
    path = tmp_path / "pk.phh"
    path.write_text(text)
    assert main(["phh", "replay", str(path)]) == 0
    (line,) = _lines(capsys)
    assert line["finishing_stacks"] == [210, 190, 200]


def test_simulate_extension_hook_adds_a_mode(capsys, monkeypatch):
    """Another command module can add e.g. ``--session`` to ``cardroom simulate``."""
    from cardroom.cli.commands import simulate

    monkeypatch.setattr(simulate, "MODES", [])
    calls = []

    def add_args(parser):
        parser.add_argument("--fake-mode", action="store_true")

    monkeypatch.setattr(simulate, "PARSER", None)
    simulate.add_mode("fake_mode", add_args, lambda args: calls.append(args.hands) or 7)  # before register
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    simulate.register(sub)
    args = parser.parse_args(["simulate", "--game", "NT", "--hands", "3", "--fake-mode"])
    assert args.func(args) == 7 and calls == [3]
    args = parser.parse_args(["simulate", "--game", "NT", "--hands", "1", "--quiet"])
    assert args.func(args) == 0
