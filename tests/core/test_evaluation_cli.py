"""``cardroom eval`` (issue 3 "Interfaces"): text hands, .npy batches, exit status 2 on bad input."""

from __future__ import annotations

import numpy as np
import pytest

from cardroom.cli.main import main
from cardroom.core.evaluation import evaluate_omaha_low8_batch


def test_eval_text_prints_category_value_cards(capsys) -> None:
    assert main(["eval", "Ah Kh Qh Jh Th 2c 3d"]) == 0
    out = capsys.readouterr().out
    assert "category: Straight Flush" in out
    assert "value: 7462" in out
    assert "cards: Ah Kh Qh Jh Th" in out
    assert "Royal Flush" in out


def test_eval_text_omaha_uses_first_four_as_hole(capsys) -> None:
    assert main(["eval", "--game", "omaha", "Ah Kc Qd Js 2h 5h 8h 9h Tc"]) == 0
    assert "category: Straight" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["eval", "Ah Kh Qh Jh Xh"], "unknown card"),
        (["eval", "Ah Ah Qh Jh Th"], "duplicate"),
        (["eval", "Ah Kh Qh Jh"], "wrong card count"),
        (["eval"], "no hand given"),
    ],
)
def test_eval_bad_text_exits_2(argv, message, capsys) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_eval_unknown_game_exits_2(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["eval", "--game", "razz", "Ah Kh Qh Jh Th"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_eval_batch_roundtrip(tmp_path) -> None:
    rng = np.random.default_rng(7)
    hands = np.argsort(rng.random((500, 52)), axis=1)[:, :9].astype(np.int16)
    src, dst = tmp_path / "hands.npy", tmp_path / "values.npy"
    np.save(src, hands)
    assert main(["eval", "--game", "omaha8", "--in", str(src), "--out", str(dst)]) == 0
    assert np.array_equal(np.load(dst), evaluate_omaha_low8_batch(hands))


@pytest.mark.parametrize(
    "array, message",
    [
        (np.array([[0, 1, 2, 3, 3, 5, 6]]), "duplicate card index 3"),
        (np.array([[0, 1, 2, 3, 4, 5, 52]]), "outside 0..51"),
        (np.array([[0, 1, 2, 3]]), "wrong card count"),
        (np.array([[0.0, 1, 2, 3, 4]]), "integers"),
    ],
)
def test_eval_batch_bad_array_exits_2(tmp_path, capsys, array, message) -> None:
    src = tmp_path / "bad.npy"
    np.save(src, array)
    assert main(["eval", "--in", str(src), "--out", str(tmp_path / "v.npy")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "v.npy").exists()


def test_eval_batch_missing_file_exits_2(tmp_path, capsys) -> None:
    assert main(["eval", "--in", str(tmp_path / "nope.npy"), "--out", str(tmp_path / "v.npy")]) == 2
    assert "cannot read" in capsys.readouterr().err
