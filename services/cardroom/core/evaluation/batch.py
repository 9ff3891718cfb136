"""Batch evaluation over NumPy integer arrays of card indices, shape (N, k).

Values are on the same scale as ``HandValue.value`` of the matching ranking (int32 arrays).
Low batches give 0 where no low qualifies; every qualifying low is > 0. Omaha arrays hold the
four hole cards then the five board cards (k = 9). Bad input raises ``ValueError`` naming the
first bad row; validation runs inside the compiled kernels, never per row in Python.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from cardroom.core.evaluation import kernels, tables as _t

_DTYPES = (np.int8, np.uint8, np.int16, np.int32, np.int64)


def _as_hands(a: object, widths: tuple[int, ...], what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what}: card indices must be integers, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] not in widths:
        raise ValueError(
            f"{what}: wrong card count: expected shape (N, {' or '.join(map(str, widths))}), got {arr.shape}"
        )
    if arr.dtype.type not in _DTYPES:
        arr = arr.astype(np.int64)
    return np.ascontiguousarray(arr)


def _raise_bad_row(arr: np.ndarray, row: int, what: str) -> None:
    if row < 0:
        return
    vals = [int(x) for x in arr[row]]
    for x in vals:
        if not 0 <= x <= 51:
            raise ValueError(f"{what}: row {row}: card index {x} is outside 0..51")
    dup = next(x for x in vals if vals.count(x) > 1)
    raise ValueError(f"{what}: row {row}: duplicate card index {dup}")


@cache
def _high_tables(k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if k == 5:
        return _t.card_keys(_t.RANK_KEYS_5), _t.flush_suit_table(), _t.flush_table(), _t.nonflush_table5()
    return _t.card_keys(_t.RANK_KEYS_7), _t.flush_suit_table(), _t.flush_table(), _t.nonflush_table(k)


def evaluate_high_batch(a: object) -> np.ndarray:
    """Dense high values (1..7462) of the best five of each row of 5, 6 or 7 cards."""
    arr = _as_hands(a, (5, 6, 7), "high")
    out = np.empty(len(arr), np.int32)
    _raise_bad_row(arr, kernels.high_kernel(arr, *_high_tables(arr.shape[1]), out), "high")
    return out


def evaluate_omaha_high_batch(a: object) -> np.ndarray:
    """Omaha high values: rows of 4 hole then 5 board cards, exactly 2 + 3 used."""
    arr = _as_hands(a, (9,), "omaha")
    out = np.empty(len(arr), np.int32)
    K = _t.card_keys(_t.RANK_KEYS_5)
    _raise_bad_row(arr, kernels.omaha_high_kernel(arr, K, _t.flush_table(), _t.nonflush_table5(), out), "omaha")
    return out


@cache
def _low_tables() -> tuple[np.ndarray, np.ndarray]:
    """Low-rank bit of each card (0 above the eight) and the value of the best five of a mask."""
    idx = np.arange(52)
    r = idx >> 2
    lr = np.where(r == 12, 0, r + 1)
    lm = np.where(lr <= 7, 1 << lr, 0).astype(np.int64)
    low5 = np.zeros(256, np.int32)
    for m in range(256):
        if m.bit_count() >= 5:
            keep, mm = 0, m
            for _ in range(5):
                b = mm & -mm
                keep |= b
                mm ^= b
            low5[m] = 256 - keep
    return lm, low5


def evaluate_low8_batch(a: object) -> np.ndarray:
    """Ace-to-five 8-or-better low values (256 - mask; 0 = no low) of the best five of 5..7 cards."""
    arr = _as_hands(a, (5, 6, 7), "low8")
    out = np.empty(len(arr), np.int32)
    _raise_bad_row(arr, kernels.low8_kernel(arr, *_low_tables(), out), "low8")
    return out


def evaluate_omaha_low8_batch(a: object) -> np.ndarray:
    """Omaha 8-or-better low values (0 = no low): rows of 4 hole then 5 board cards."""
    arr = _as_hands(a, (9,), "omaha8")
    out = np.empty(len(arr), np.int32)
    lm, low5 = _low_tables()
    _raise_bad_row(arr, kernels.omaha_low8_kernel(arr, lm, low5, out), "omaha8")
    return out


@cache
def _deuce7_tables() -> tuple[np.ndarray, np.ndarray]:
    _, nft, flt = _t.deuce7_codes()
    return flt.astype(np.int32), nft.astype(np.int32)


@cache
def _soko_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    _, _, fl = _t.five_card_codes()
    nft, fft = _t.soko_tables()
    return fl.astype(np.int32), nft, fft


_NO_FF = np.zeros(1, np.int32)


def evaluate_deuce7_batch(a: object) -> np.ndarray:
    """Deuce-to-seven values (7462 = 7-5-4-3-2 best) of rows of exactly five cards."""
    arr = _as_hands(a, (5,), "deuce7")
    out = np.empty(len(arr), np.int32)
    flv, nft = _deuce7_tables()
    K = _t.card_keys(_t.RANK_KEYS_5)
    _raise_bad_row(arr, kernels.five_kernel(arr, K, flv, nft, False, _NO_FF, out), "deuce7")
    return out


def evaluate_soko_batch(a: object) -> np.ndarray:
    """Soko values (hand codes, see ``hands.pack``) of rows of exactly five cards."""
    arr = _as_hands(a, (5,), "soko")
    out = np.empty(len(arr), np.int32)
    flv, nft, fft = _soko_tables()
    K = _t.card_keys(_t.RANK_KEYS_5)
    _raise_bad_row(arr, kernels.five_kernel(arr, K, flv, nft, True, fft, out), "soko")
    return out


def high_categories(values: np.ndarray) -> np.ndarray:
    """``Category`` numbers (int8) of dense high values 1..7462 (Ranking.HIGH / OMAHA_HIGH)."""
    categories: np.ndarray = _category_of_value()[np.asarray(values)]
    return categories


@cache
def _category_of_value() -> np.ndarray:
    return np.concatenate([[-1], _t.high_codes() >> 20]).astype(np.int8)
