"""Batch evaluation agrees with the per-hand API; bad arrays are rejected (issue 3, rules/003)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from cardroom.core.cards import Card
from cardroom.core.evaluation import (
    Category,
    evaluate_deuce7,
    evaluate_deuce7_batch,
    evaluate_high,
    evaluate_high_batch,
    evaluate_low8,
    evaluate_low8_batch,
    evaluate_omaha_high,
    evaluate_omaha_high_batch,
    evaluate_omaha_low8,
    evaluate_omaha_low8_batch,
    evaluate_soko,
    evaluate_soko_batch,
)


def random_hands(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n, 52)), axis=1)[:, :k].astype(np.int8)


def lowish_hands(n: int, k: int, seed: int) -> np.ndarray:
    """Hands drawn from the 32 cards ace..eight and a few high cards, so lows are frequent."""
    rng = np.random.default_rng(seed)
    pool = np.array([c for c in range(52) if c >> 2 <= 6 or c >> 2 == 12 or c % 9 == 0])
    picks = np.argsort(rng.random((n, len(pool))), axis=1)[:, :k]
    return pool[picks].astype(np.int16)


def cards(row: np.ndarray) -> list[Card]:
    return [Card(int(x)) for x in row]


def value_or_zero(v) -> int:
    return 0 if v is None else v.value


@pytest.mark.parametrize("k", [5, 6, 7])
def test_high_batch_matches_per_hand(k: int) -> None:
    hands = random_hands(4000, k, seed=k)
    got = evaluate_high_batch(hands)
    want = [evaluate_high(cards(r)).value for r in hands]
    assert got.tolist() == want


def test_omaha_high_batch_matches_brute_force_two_plus_three_rules003() -> None:
    """rules/003 Omaha: "must use exactly 2 of their 4 hole cards and 3 community cards"."""
    hands = random_hands(1500, 9, seed=11)
    got = evaluate_omaha_high_batch(hands)
    for row, value in zip(hands, got, strict=True):
        cs = cards(row)
        brute = max(
            evaluate_high(list(h) + list(b)).value for h in combinations(cs[:4], 2) for b in combinations(cs[4:], 3)
        )
        assert value == brute == evaluate_omaha_high(cs[:4], cs[4:]).value


def test_omaha_high_batch_suited_boards() -> None:
    """Boards with four hearts: a flush needs two heart hole cards, one is not enough (rules/003 Omaha)."""
    rng = np.random.default_rng(5)
    hearts = np.arange(2, 52, 4)
    others = np.setdiff1d(np.arange(52), hearts)
    rows = []
    for n in range(800):
        h = rng.choice(hearts, size=6, replace=False)
        o = rng.choice(others, size=4, replace=False)
        suited_hole = 2 if n % 2 else 1
        hole = list(h[:suited_hole]) + list(o[: 4 - suited_hole])
        board = list(h[suited_hole : suited_hole + 4]) + [o[3]]
        rows.append(hole + board)
    hands = np.array(rows, np.int64)
    assert all(len(set(r)) == 9 for r in hands.tolist())
    got = evaluate_omaha_high_batch(hands)
    want = [evaluate_omaha_high(cards(r[:4]), cards(r[4:])) for r in hands]
    assert got.tolist() == [w.value for w in want]
    flushes = [w.category in (Category.FLUSH, Category.STRAIGHT_FLUSH) for w in want]
    assert not any(f for f, r in zip(flushes, hands, strict=True) if np.sum(r[:4] % 4 == 2) < 2)
    assert any(flushes)


@pytest.mark.parametrize("k", [5, 6, 7])
def test_low8_batch_matches_per_hand(k: int) -> None:
    hands = lowish_hands(4000, k, seed=k)
    got = evaluate_low8_batch(hands)
    want = [value_or_zero(evaluate_low8(cards(r))) for r in hands]
    assert got.tolist() == want
    assert (got > 0).any() and (got == 0).any()


def test_omaha_low8_batch_matches_brute_force() -> None:
    hands = lowish_hands(3000, 9, seed=9)
    got = evaluate_omaha_low8_batch(hands)
    for row, value in zip(hands, got, strict=True):
        cs = cards(row)
        lows = [evaluate_low8(list(h) + list(b)) for h in combinations(cs[:4], 2) for b in combinations(cs[4:], 3)]
        brute = max((x.value for x in lows if x is not None), default=0)
        assert value == brute == value_or_zero(evaluate_omaha_low8(cs[:4], cs[4:]))
    assert (got > 0).any() and (got == 0).any()


@pytest.mark.parametrize(
    "batch, single", [(evaluate_deuce7_batch, evaluate_deuce7), (evaluate_soko_batch, evaluate_soko)]
)
def test_five_card_batches_match_per_hand(batch, single) -> None:
    hands = np.concatenate([random_hands(4000, 5, seed=1), lowish_hands(2000, 5, seed=2)])
    got = batch(hands)
    want = [single(cards(r)).value for r in hands]
    assert got.tolist() == want


ALL_BATCHES = [
    (evaluate_high_batch, 7),
    (evaluate_omaha_high_batch, 9),
    (evaluate_low8_batch, 7),
    (evaluate_omaha_low8_batch, 9),
    (evaluate_deuce7_batch, 5),
    (evaluate_soko_batch, 5),
]


@pytest.mark.parametrize("batch, k", ALL_BATCHES)
def test_batch_rejects_bad_arrays(batch, k: int) -> None:
    good = random_hands(10, k, seed=0).astype(np.int64)
    dup = good.copy()
    dup[3, 1] = dup[3, 0]
    with pytest.raises(ValueError, match="row 3: duplicate card index"):
        batch(dup)
    for bad_index in (52, -1, 200):
        out = good.copy()
        out[7, k - 1] = bad_index
        with pytest.raises(ValueError, match=f"row 7: card index {bad_index} is outside 0..51"):
            batch(out)
    with pytest.raises(ValueError, match="wrong card count"):
        batch(good[:, :4])
    with pytest.raises(ValueError, match="wrong card count"):
        batch(good[0])
    with pytest.raises(ValueError, match="integers"):
        batch(good.astype(float))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint16])
def test_batch_accepts_integer_dtypes(dtype) -> None:
    hands = random_hands(50, 7, seed=4)
    assert evaluate_high_batch(hands.astype(dtype)).tolist() == evaluate_high_batch(hands).tolist()


def test_empty_batch() -> None:
    assert evaluate_high_batch(np.zeros((0, 7), np.int8)).shape == (0,)
