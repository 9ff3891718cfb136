"""Lookup tables for the integer fast paths, built lazily with NumPy (no I/O).

Non-flush hands depend only on the multiset of ranks. Every rank gets a *rank key* such that
the sums of keys over all rank multisets of one size (at most four of a rank) are distinct,
so one addition per card and one table lookup give the value. The keys are the greedy
smallest such sequences (``RANK_KEYS_7`` works for 5, 6 and 7 cards; the much smaller
``RANK_KEYS_5`` only for exactly five, used by Omaha, deuce-to-seven and Soko tables);
``tests/core/test_evaluation_tables.py`` checks the uniqueness. Flushes are found by a suit
count and looked up by the 13-bit rank mask of the flush suit.

High values are *dense*: 1 (7-5-4-3-2 offsuit) .. 7462 (royal flush), the position of the
hand among all distinct five-card high hands.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from cardroom.core.cards import Card
from cardroom.core.evaluation.hands import best_high, pack
from cardroom.core.evaluation.lows import four_straight
from cardroom.core.evaluation.types import Category

RANK_KEYS_7 = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)
RANK_KEYS_5 = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415)
SUIT_SHIFT = 32  #: card key = rank key + (1 << (SUIT_SHIFT + 3 * suit)): 3-bit suit counters
N_HIGH = 7462


def card_keys(rank_keys: tuple[int, ...]) -> np.ndarray:
    """Per-card int64 keys: rank key in the low 32 bits, 3-bit suit counters above."""
    idx = np.arange(52)
    keys: np.ndarray = np.array(rank_keys, np.int64)[idx >> 2] + (np.int64(1) << (SUIT_SHIFT + 3 * (idx & 3)))
    return keys


@cache
def flush_suit_table() -> np.ndarray:
    """Indexed by the 12 suit-counter bits: the suit with five or more cards, else -1."""
    s = np.arange(4096)
    out = np.full(4096, -1, np.int8)
    for suit in range(4):
        out[((s >> (3 * suit)) & 7) >= 5] = suit
    return out


@cache
def count_vectors(n: int) -> np.ndarray:
    """All rank-count vectors (M, 13) with total ``n`` and at most four of a rank."""
    rows = np.zeros((1, 0), np.int8)
    for _ in range(13):
        tot = rows.sum(axis=1)
        parts = []
        for c in range(5):
            keep = rows[tot + c <= n]
            parts.append(np.hstack([keep, np.full((len(keep), 1), c, np.int8)]))
        rows = np.vstack(parts)
    vectors: np.ndarray = rows[rows.sum(axis=1) == n]
    return vectors


def _cards_for_counts(counts: np.ndarray) -> list[Card]:
    """Representative cards for a rank multiset, suits rotated so that no flush appears."""
    out, s = [], 0
    for r, k in enumerate(counts):
        for _ in range(int(k)):
            out.append(Card(4 * r + s % 4))
            s += 1
    return out


def _mask_cards(mask: int, suit: int = 0) -> list[Card]:
    return [Card(4 * r + suit) for r in range(13) if mask >> r & 1]


@cache
def five_card_codes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count vectors, their non-flush codes, flush codes by 5-bit mask [8192, 0 elsewhere])."""
    vecs = count_vectors(5)
    nf = np.array([best_high(_cards_for_counts(v))[0] for v in vecs], np.int64)
    fl = np.zeros(8192, np.int64)
    for m in range(8192):
        if m.bit_count() == 5:
            fl[m] = best_high(_mask_cards(m))[0]
    return vecs, nf, fl


@cache
def high_codes() -> np.ndarray:
    """All 7,462 distinct five-card high codes, ascending (position + 1 = dense value)."""
    _, nf, fl = five_card_codes()
    codes = np.unique(np.concatenate([nf, fl[fl > 0]]))
    assert len(codes) == N_HIGH
    return codes


def dense_high(codes: np.ndarray | int) -> np.ndarray | int:
    """Dense high value (1..7462) of high code(s)."""
    return np.searchsorted(high_codes(), codes) + 1


@cache
def flush_table() -> np.ndarray:
    """Dense value of the best flush or straight flush in a 13-bit suit mask (0 if < 5 cards)."""
    _, _, fl = five_card_codes()
    out = np.zeros(8192, np.int16)
    five = fl > 0
    out[five] = dense_high(fl[five])
    masks = np.arange(8192)
    pop = np.array([m.bit_count() for m in range(8192)])
    for p in range(6, 14):
        sel = masks[pop == p]
        best = np.zeros(len(sel), np.int16)
        for b in range(13):
            has = (sel >> b) & 1 == 1
            best[has] = np.maximum(best[has], out[sel[has] ^ (1 << b)])
        out[sel] = best
    return out


def _derive(prev: np.ndarray, keys: np.ndarray, n: int) -> np.ndarray:
    """Best-of table for n cards from the (n-1)-card table: drop each rank present in turn."""
    vecs = count_vectors(n)
    sums = vecs.astype(np.int64) @ keys
    best = np.zeros(len(vecs), np.int16)
    for r in range(13):
        has = vecs[:, r] > 0
        best[has] = np.maximum(best[has], prev[sums[has] - keys[r]])
    out = np.zeros(int(sums.max()) + 1, np.int16)
    out[sums] = best
    return out


@cache
def nonflush_table(n: int) -> np.ndarray:
    """Dense high value of the best five of ``n`` (5..7) non-flush cards, by RANK_KEYS_7 sum."""
    keys = np.array(RANK_KEYS_7, np.int64)
    if n == 5:
        vecs, nf, _ = five_card_codes()
        sums = vecs.astype(np.int64) @ keys
        out = np.zeros(int(sums.max()) + 1, np.int16)
        out[sums] = dense_high(nf)
        return out
    return _derive(nonflush_table(n - 1), keys, n)


@cache
def nonflush_table5() -> np.ndarray:
    """Dense high value of five non-flush cards, indexed by RANK_KEYS_5 sum (compact)."""
    vecs, nf, _ = five_card_codes()
    sums = vecs.astype(np.int64) @ np.array(RANK_KEYS_5, np.int64)
    out = np.zeros(int(sums.max()) + 1, np.int16)
    out[sums] = dense_high(nf)
    return out


@cache
def deuce7_codes() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(all 7,462 deuce-to-seven codes ascending by high strength, non-flush table, flush table).

    Tables hold the deuce-to-seven value ``7463 - position`` (7462 = 7-5-4-3-2, higher = better):
    non-flush by RANK_KEYS_5 sum, flush by 5-bit mask.
    """
    vecs = count_vectors(5)
    nf = np.array([best_high(_cards_for_counts(v), wheel=False)[0] for v in vecs], np.int64)
    fl = np.zeros(8192, np.int64)
    for m in range(8192):
        if m.bit_count() == 5:
            fl[m] = best_high(_mask_cards(m), wheel=False)[0]
    codes = np.unique(np.concatenate([nf, fl[fl > 0]]))
    assert len(codes) == N_HIGH

    def value(c: np.ndarray) -> np.ndarray:
        return (N_HIGH + 1 - (np.searchsorted(codes, c) + 1)).astype(np.int16)

    sums = vecs.astype(np.int64) @ np.array(RANK_KEYS_5, np.int64)
    nft = np.zeros(int(sums.max()) + 1, np.int16)
    nft[sums] = value(nf)
    flt = np.zeros(8192, np.int16)
    flt[fl > 0] = value(fl[fl > 0])
    return codes, nft, flt


@cache
def soko_tables() -> tuple[np.ndarray, np.ndarray]:
    """Soko codes: (non-flush table by RANK_KEYS_5 sum, 4-flush table by 4-bit mask * 16 + kicker).

    The non-flush table already prefers a 4-straight to a pair or high card; five-card flushes
    use the high codes; the 4-flush table gives the 4-flush code, to be taken when it is
    better than the non-flush code (a 4-flush never co-exists with two pair or better except
    a straight, which the non-flush code already holds).
    """
    vecs = count_vectors(5)
    nf = np.zeros(len(vecs), np.int64)
    for i, v in enumerate(vecs):
        cards = _cards_for_counts(v)
        code = best_high(cards)[0]
        if code >> 20 < Category.TWO_PAIR:
            fs = four_straight(cards)
            if fs is not None:
                code = max(code, fs[0])
        nf[i] = code
    sums = vecs.astype(np.int64) @ np.array(RANK_KEYS_5, np.int64)
    nft = np.zeros(int(sums.max()) + 1, np.int32)
    nft[sums] = nf
    fft = np.zeros(8192 * 16, np.int32)
    for m in range(8192):
        if m.bit_count() == 4:
            ranks = [r for r in range(12, -1, -1) if m >> r & 1]
            for k in range(13):
                fft[m * 16 + k] = pack(Category.FOUR_FLUSH, ranks + [k])
    return nft, fft
