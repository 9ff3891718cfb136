"""Exhaustive and differential checks of the evaluators (issue 3 "Correctness")."""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest

from cardroom.core.evaluation import (
    Category,
    evaluate_deuce7_batch,
    evaluate_high_batch,
    evaluate_low8_batch,
    evaluate_soko_batch,
)
from cardroom.core.evaluation.batch import high_categories
from cardroom.core.evaluation.hands import pack

C = Category

# Every test here walks millions of hands: `make test` runs them, `make test-fast` (-m "not slow") skips them.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def all_five() -> np.ndarray:
    """All 2,598,960 five-card hands."""
    flat = np.fromiter((c for hand in combinations(range(52), 5) for c in hand), dtype=np.int8, count=comb(52, 5) * 5)
    return flat.reshape(-1, 5)


def test_all_five_card_hands_7462_values_and_category_counts(all_five: np.ndarray) -> None:
    values = evaluate_high_batch(all_five)
    distinct = np.unique(values)
    assert len(distinct) == 7462
    cats = high_categories(distinct)
    per_category = {C(c): int(n) for c, n in zip(*np.unique(cats, return_counts=True), strict=True)}
    assert per_category == {
        C.STRAIGHT_FLUSH: 10,
        C.FOUR_OF_A_KIND: 156,
        C.FULL_HOUSE: 156,
        C.FLUSH: 1277,
        C.STRAIGHT: 10,
        C.THREE_OF_A_KIND: 858,
        C.TWO_PAIR: 858,
        C.PAIR: 2860,
        C.HIGH_CARD: 1277,
    }
    hands = {C(c): int(n) for c, n in zip(*np.unique(high_categories(values), return_counts=True), strict=True)}
    assert hands == {
        C.STRAIGHT_FLUSH: 40,
        C.FOUR_OF_A_KIND: 624,
        C.FULL_HOUSE: 3744,
        C.FLUSH: 5108,
        C.STRAIGHT: 10200,
        C.THREE_OF_A_KIND: 54912,
        C.TWO_PAIR: 123552,
        C.PAIR: 1098240,
        C.HIGH_CARD: 1302540,
    }


def test_all_five_card_low8_qualifiers_rules000(all_five: np.ndarray) -> None:
    """rules/000: 8-or-better; A-2-3-4-5 best, 4-5-6-7-8 worst qualifying; C(8,5) = 56 rank sets."""
    values = evaluate_low8_batch(all_five)
    qualifying = values > 0
    assert int(qualifying.sum()) == 56 * 4**5
    distinct = np.unique(values[qualifying])
    assert len(distinct) == 56
    wheel = np.array([[48, 0, 4, 8, 12]])  # A 2 3 4 5 (clubs)
    eight = np.array([[8, 12, 16, 20, 24]])  # 4 5 6 7 8
    assert evaluate_low8_batch(wheel)[0] == distinct.max()
    assert evaluate_low8_batch(eight)[0] == distinct.min()


def test_all_five_card_deuce7_rules003(all_five: np.ndarray) -> None:
    """rules/003 2-7: best 2-3-4-5-7 (not suited); A-2-3-4-5 is ace-high, not a straight."""
    values = evaluate_deuce7_batch(all_five)
    assert len(np.unique(values)) == 7462
    best = all_five[values == values.max()]
    assert len(best) == 4**5 - 4
    assert {tuple(sorted(r >> 2 for r in row)) for row in best.tolist()} == {(0, 1, 2, 3, 5)}
    # reversal of the high order, except the wheel and the steel wheel
    high = evaluate_high_batch(all_five)
    ranks = np.sort(all_five >> 2, axis=1)
    wheel = (ranks == [0, 1, 2, 3, 12]).all(axis=1)
    order = np.lexsort((-values[~wheel],))
    assert np.all(np.diff(high[~wheel][order]) >= 0)


def test_all_five_card_soko_rules003(all_five: np.ndarray) -> None:
    """rules/003 Soko: 4-flush and 4-straight between two pair and one pair."""
    values = evaluate_soko_batch(all_five)
    cats = values >> 20
    counts = {C(c): int(n) for c, n in zip(*np.unique(cats, return_counts=True), strict=True)}
    # exactly four of one suit: 4 * C(13,4) * 39, minus the 600 of those that are straights
    assert counts[C.FOUR_FLUSH] == 4 * comb(13, 4) * 39 - 600
    # categories from two pair up are the standard ones
    high = high_categories(evaluate_high_batch(all_five))
    strong = high >= C.TWO_PAIR
    assert np.array_equal(cats[strong], high[strong])
    assert values[cats == C.FOUR_FLUSH].min() > values[cats == C.FOUR_STRAIGHT].max()
    assert values[cats == C.FOUR_STRAIGHT].min() > values[cats == C.PAIR].max()
    assert values[cats == C.TWO_PAIR].min() > values[cats == C.FOUR_FLUSH].max()
    assert counts[C.FOUR_STRAIGHT] > 0
    assert values.max() == pack(C.STRAIGHT_FLUSH, [12])


def _colex_combos(n: int, k: int) -> np.ndarray:
    """All k-subsets of range(n) in colex order (so those of range(m) are a prefix)."""
    flat = np.fromiter((c for s in combinations(range(n), k) for c in s), np.int8, count=comb(n, k) * k)
    rows = flat.reshape(-1, k)
    return rows[np.lexsort(rows.T)]


@pytest.mark.slow
def test_all_seven_card_hands_category_counts() -> None:
    """All 133,784,560 seven-card hands, in chunks by the two lowest cards (issue 3)."""
    combos5 = _colex_combos(50, 5)
    hist = np.zeros(7463, np.int64)
    total = 0
    for c0 in range(52 - 6):
        for c1 in range(c0 + 1, 52 - 5):
            m = 51 - c1
            rest = combos5[: comb(m, 5)] + np.int8(c1 + 1)
            chunk = np.empty((len(rest), 7), np.int8)
            chunk[:, 0] = c0
            chunk[:, 1] = c1
            chunk[:, 2:] = rest
            hist += np.bincount(evaluate_high_batch(chunk), minlength=7463)
            total += len(rest)
    assert total == comb(52, 7) == 133_784_560
    cats = high_categories(np.arange(1, 7463))
    per = {C(c): int(hist[1:][cats == c].sum()) for c in np.unique(cats)}
    assert per == {
        C.STRAIGHT_FLUSH: 41_584,
        C.FOUR_OF_A_KIND: 224_848,
        C.FULL_HOUSE: 3_473_184,
        C.FLUSH: 4_047_644,
        C.STRAIGHT: 6_180_020,
        C.THREE_OF_A_KIND: 6_461_620,
        C.TWO_PAIR: 31_433_400,
        C.PAIR: 58_627_800,
        C.HIGH_CARD: 23_294_460,
    }
    assert hist[0] == 0


@pytest.mark.slow
def test_differential_against_phevaluator_one_million_seven_card_hands() -> None:
    """Identical ordering with phevaluator (lower = better there) on 1,000,000 random hands."""
    pheval = pytest.importorskip("phevaluator._pheval")
    rng = np.random.default_rng(20261130)
    for _ in range(10):
        hands = np.argsort(rng.random((100_000, 52)), axis=1)[:, :7].astype(np.int8)
        ours = evaluate_high_batch(hands)
        theirs = np.array([pheval.evaluate_7cards(*row) for row in hands.tolist()])
        # both scales are dense over the 7,462 classes, so identical ordering means this identity
        assert np.array_equal(ours, 7463 - theirs)
